#!/usr/bin/env python3
"""Ratios and targets from a crossdev_bench run (and its torch.compile peer).

usage: python3 bench/summarize.py BENCH.json [COMPILE.json] [--json FILE] [--markdown FILE]

Per op x dtype x size x device x pass it prints the time of each implementation and the ratios
measured in the same run: fused vs eager (fallback), fused vs TorchScript, fused vs torch.compile,
and the fused kernel's bw_util (achieved / measured peak bandwidth). Targets (issue 6 and the
foundation issue) are checked from the TARGETS table below; a missed target says by how much.
Targets are reported, never gated: speed targets live in benchmarks, not in tests.
Exit codes: 0 summary written, 2 bad input (the message names the file).
"""
import argparse
import json
import math
import pathlib
import statistics
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

_TIME_UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_SIZE_MULTIPLIER = {"K": 1024, "M": 1024 * 1024}
IMPLS = ("fused", "fallback", "torchscript", "compile")


class InputError(Exception):
    pass


@dataclass
class Point:
    """One benchmark: median over its repetitions."""
    seconds: float
    bw_util: Optional[float]
    counters: Dict[str, float] = field(default_factory=dict)
    error: Optional[str] = None


def size_elements(label: str) -> int:
    if label and label[-1] in _SIZE_MULTIPLIER:
        return int(label[:-1]) * _SIZE_MULTIPLIER[label[-1]]
    return int(label)


def load_points(path: str) -> Dict[str, Point]:
    try:
        doc = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if isinstance(doc, dict) and doc.get("schema") == "crossdev.bundle":
        doc = doc.get("benchmarks") or {}
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError(f"{path}: expected Google Benchmark JSON with a `benchmarks` list")
    samples: Dict[str, List[dict]] = {}
    errors: Dict[str, str] = {}
    for i, entry in enumerate(doc["benchmarks"]):
        if not isinstance(entry, dict) or "name" not in entry:
            raise InputError(f"{path}: benchmarks[{i}]: expected an object with a `name`")
        if entry.get("run_type") == "aggregate":
            continue
        if entry.get("error_occurred"):
            errors[entry["name"]] = entry.get("error_message", "error")
            continue
        for key in ("real_time", "time_unit"):
            if key not in entry:
                raise InputError(f"{path}: benchmarks[{i}] ({entry['name']}): missing key '{key}'")
        samples.setdefault(entry["name"], []).append(entry)
    points = {name: Point(math.nan, None, error=msg) for name, msg in errors.items()}
    for name, runs in samples.items():
        seconds = statistics.median(r["real_time"] * _TIME_UNIT_S[r["time_unit"]] for r in runs)
        utils = [r["bw_util"] for r in runs if isinstance(r.get("bw_util"), (int, float))]
        counters = {k: v for k, v in runs[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        points[name] = Point(seconds, statistics.median(utils) if utils else None, counters)
    return points


@dataclass
class Group:
    op: str
    dtype: str
    size: str
    device: str
    pass_: str
    impls: Dict[str, Point] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.op}/{self.dtype}/{self.size}/{self.device}/{self.pass_}"

    def ratio(self, slower: str, faster: str = "fused") -> Optional[float]:
        """How many times faster `faster` is than `slower` (time of slower / time of faster)."""
        a, b = self.impls.get(slower), self.impls.get(faster)
        if not a or not b or a.error or b.error or not b.seconds > 0:
            return None
        return a.seconds / b.seconds


def group_ops(points: Dict[str, Point]) -> List[Group]:
    groups: Dict[str, Group] = {}
    for name, point in points.items():
        parts = name.split("/")
        if len(parts) < 6 or parts[1] not in IMPLS:
            continue
        op, impl, dtype, size, device, pass_ = parts[:6]
        group = groups.setdefault(f"{op}/{dtype}/{size}/{device}/{pass_}", Group(op, dtype, size, device, pass_))
        group.impls[impl] = point
    return sorted(groups.values(), key=lambda g: (g.op, g.device, g.dtype, size_elements(g.size), g.pass_))


@dataclass
class Target:
    name: str
    description: str
    applies: Callable[[Group], bool]
    value: Callable[[Group], Optional[float]]
    minimum: float
    unit: str


# The targets, as data: each applies to some groups and needs value >= minimum.
TARGETS: List[Target] = [
    Target("bandwidth", "fp32 CPU fused kernels at >= 8M elements reach >= 80% of the measured triad bandwidth",
           lambda g: g.dtype == "float32" and g.device == "cpu" and size_elements(g.size) >= 8 << 20,
           lambda g: g.impls["fused"].bw_util if "fused" in g.impls and not g.impls["fused"].error else None,
           0.80, "of peak"),
    Target("vs_eager", "fused kernels are >= 2x faster than the eager fallback",
           lambda g: g.device == "cpu", lambda g: g.ratio("fallback"), 2.0, "x"),
    Target("vs_compile", "fused kernels are at least as fast as torch.compile",
           lambda g: g.device == "cpu", lambda g: g.ratio("compile"), 1.0, "x"),
]


def evaluate(groups: List[Group]) -> List[dict]:
    results = []
    for g in groups:
        for t in TARGETS:
            if not t.applies(g):
                continue
            value = t.value(g)
            if value is None:
                continue
            met = value >= t.minimum
            results.append({"target": t.name, "case": g.key, "value": value, "minimum": t.minimum, "met": met,
                            "shortfall": None if met else 1.0 - value / t.minimum})
    return results


def resolve_rows(points: Dict[str, Point]) -> List[dict]:
    rows = []
    for name, p in sorted(points.items()):
        if name.startswith("policy/resolve/") and not p.error:
            ns = p.seconds * 1e9
            allocs = p.counters.get("allocs_per_op")
            rows.append({"case": name, "ns": ns, "allocs_per_op": allocs,
                         "met": ns < 100.0 and allocs is not None and allocs == 0})
    return rows


def _fmt_time(seconds: Optional[float]) -> str:
    if seconds is None or math.isnan(seconds):
        return "-"
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def _fmt_ratio(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}x"


def markdown(groups: List[Group], targets: List[dict], resolves: List[dict], context: dict) -> str:
    peak = context.get("crossdev_peak_cpu_bytes_per_second")
    lines = ["## crossdev_bench summary", ""]
    if peak:
        lines.append(f"CPU peak (STREAM triad, same process): {float(peak) / 1e9:.2f} GB/s; "
                     f"{context.get('crossdev_aten_threads', '?')} ATen threads; profile "
                     f"{context.get('crossdev_profile', '?')}.")
        lines.append("")
    lines += ["| case | fused | fallback | torchscript | compile | fused vs eager | fused vs TS | fused vs compile "
              "| fused bw_util |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for g in groups:
        cells = [_fmt_time(g.impls[i].seconds) if i in g.impls and not g.impls[i].error
                 else ("error" if i in g.impls else "-") for i in IMPLS]
        util = g.impls.get("fused").bw_util if "fused" in g.impls else None
        lines.append(f"| {g.key} | " + " | ".join(cells) + f" | {_fmt_ratio(g.ratio('fallback'))} | "
                     f"{_fmt_ratio(g.ratio('torchscript'))} | {_fmt_ratio(g.ratio('compile'))} | "
                     + ("-" if util is None else f"{util:.2f}") + " |")
    lines += ["", "### Targets", ""]
    for t in TARGETS:
        rows = [r for r in targets if r["target"] == t.name]
        met = sum(r["met"] for r in rows)
        lines.append(f"- **{t.name}** ({t.description}): {met}/{len(rows)} met"
                     + ("" if rows else " (no measurements: run the peer or a larger profile)"))
        for r in rows:
            if not r["met"]:
                lines.append(f"  - missed: {r['case']}: {r['value']:.2f} {t.unit} < {r['minimum']:.2f} "
                             f"({r['shortfall']:.0%} short)")
    if resolves:
        lines += ["", "### resolve() (target: < 100 ns, 0 allocations)", "", "| case | ns | allocs/op | met |",
                  "|---|---:|---:|---|"]
        for r in resolves:
            allocs = "-" if r["allocs_per_op"] is None else f"{r['allocs_per_op']:g}"
            lines.append(f"| {r['case']} | {r['ns']:.1f} | {allocs} | {'yes' if r['met'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench", help="crossdev_bench JSON (or a crossdev bundle embedding it)")
    p.add_argument("compile", nargs="?", help="compile_bench.py JSON")
    p.add_argument("--json", metavar="FILE", help="write groups, ratios and target verdicts as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown summary here too")
    args = p.parse_args(argv)
    try:
        points = load_points(args.bench)
        if args.compile:
            points.update(load_points(args.compile))
        context = json.loads(pathlib.Path(args.bench).read_text(encoding="utf-8")).get("context", {})
    except InputError as exc:
        print(f"summarize.py: error: {exc}", file=sys.stderr)
        return 2
    groups = group_ops(points)
    targets = evaluate(groups)
    resolves = resolve_rows(points)
    text = markdown(groups, targets, resolves, context if isinstance(context, dict) else {})
    print(text)
    if args.markdown:
        pathlib.Path(args.markdown).write_text(text, encoding="utf-8")
    if args.json:
        doc = {"groups": [{"case": g.key, "seconds": {i: p.seconds for i, p in g.impls.items() if not p.error},
                           "fused_vs_eager": g.ratio("fallback"), "fused_vs_torchscript": g.ratio("torchscript"),
                           "fused_vs_compile": g.ratio("compile"),
                           "fused_bw_util": g.impls["fused"].bw_util if "fused" in g.impls else None}
                          for g in groups],
               "targets": targets, "resolve": resolves}
        pathlib.Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
