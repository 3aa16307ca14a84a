"""Google Benchmark's JSON schema (--benchmark_out_format=json), written from Python.

One "iteration" entry per repetition and, with two or more repetitions, the aggregates Google
Benchmark adds (mean, median, stddev, cv) plus min and max (custom statistics, as
ComputeStatistics("min", ...) would add). Counters are top-level keys of each entry, aggregated
like the time. compare.py, bench/summarize.py, `crossdev bench-gate` and `crossdev report` read it unchanged.
"""
import json
import os
import pathlib
import statistics
from typing import Dict, List

AGGREGATES = ("mean", "median", "stddev", "cv", "min", "max")
NOISY_CV = 0.05  # a figure whose repetitions vary more than this (coefficient of variation) is noisy


def _aggregate(name: str, values: List[float]) -> float:
    if name == "mean":
        return statistics.mean(values)
    if name == "median":
        return statistics.median(values)
    if name == "stddev":
        return statistics.stdev(values) if len(values) > 1 else 0.0
    if name == "cv":
        mean = statistics.mean(values)
        return (statistics.stdev(values) / mean) if len(values) > 1 and mean else 0.0
    return min(values) if name == "min" else max(values)


def entries(name: str, family_index: int, iterations: int, reps: List[dict], label: str) -> List[dict]:
    """reps: per repetition {"real_time": us, "cpu_time": us, counter: value...}."""
    common = {"family_index": family_index, "per_family_instance_index": 0, "run_name": name,
              "repetitions": len(reps), "threads": 1, "time_unit": "us"}
    out = [dict(common, name=name, run_type="iteration", repetition_index=i, iterations=iterations, label=label, **r)
           for i, r in enumerate(reps)]
    if len(reps) > 1:
        keys = [k for k in reps[0] if isinstance(reps[0][k], (int, float)) and not isinstance(reps[0][k], bool)]
        for agg in AGGREGATES:
            entry = dict(common, name=f"{name}_{agg}", run_type="aggregate", aggregate_name=agg,
                         aggregate_unit="percentage" if agg == "cv" else "time", iterations=len(reps), label=label)
            entry.update({k: _aggregate(agg, [r[k] for r in reps]) for k in keys})
            out.append(entry)
    return out


def error_entry(name: str, family_index: int, message: str) -> dict:
    return {"name": name, "run_name": name, "run_type": "iteration", "family_index": family_index,
            "per_family_instance_index": 0, "repetitions": 1, "repetition_index": 0, "threads": 1,
            "error_occurred": True, "error_message": message}


def write(path, doc: Dict) -> None:
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def merge(target: Dict, doc: Dict, context_prefix: str) -> Dict:
    """Appends doc's benchmarks to target (same names replace target's), renumbering families;
    doc's crossdev_* context keys are copied as <context_prefix>* (the bundle keeps one context)."""
    benchmarks = target["benchmarks"]
    names = {b["name"] for b in doc["benchmarks"]} | {b.get("run_name") for b in doc["benchmarks"]}
    kept = [b for b in benchmarks if b.get("name") not in names and b.get("run_name") not in names]
    offset = 1 + max((b.get("family_index", -1) for b in kept), default=-1)
    target["benchmarks"] = kept + [dict(b, family_index=b["family_index"] + offset) for b in doc["benchmarks"]]
    context = target.setdefault("context", {})
    for key, value in doc.get("context", {}).items():
        if key.startswith("crossdev_"):
            context[context_prefix + key[len("crossdev_"):]] = value
    return target
