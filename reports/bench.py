"""Benchmark model from the Google Benchmark JSON a bundle embeds under `benchmarks`.

Names are "op/impl/dtype/size/device/pass" (e.g. "rms_norm/fused/float32/4096x1024/cpu/fwd"),
optionally followed by Google Benchmark suffixes ("/real_time", "/min_time:0.050"). Counters
(bytes_per_second, items_per_second, bw_util = achieved / measured peak bandwidth) are top-level
keys of each entry. Aggregates (mean/median/stddev) are used when present, the median first.
"""
import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from reports.merge import Report

BASELINE_IMPL = "fallback"  # speedups are fallback time / impl time
# Impls in chart order; others the bench emits follow in name order.
IMPL_ORDER = ("fused", "fallback", "torchscript", "compile")
_TIME_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_NAME_FIELDS = ("op", "impl", "dtype", "size", "device", "pass")


@dataclass(frozen=True)
class BenchKey:
    runner: str
    op: str
    dtype: str
    size: str
    device: str
    pass_: str

    def group(self) -> str:
        return f"{self.op} {self.dtype} {self.size} {self.device} {self.pass_}"


@dataclass
class BenchPoint:
    name: str
    seconds: float                      # per iteration
    bytes_per_second: Optional[float]
    bw_util: Optional[float]            # fraction of the measured peak, as the bench computed it


@dataclass
class BenchTable:
    points: Dict[Tuple[BenchKey, str], BenchPoint]  # (key, impl) -> point
    runners_simulated: Dict[str, bool]

    def keys(self) -> List[BenchKey]:
        return sorted({k for k, _ in self.points}, key=lambda k: (k.runner, k.op, k.dtype, k.size, k.device, k.pass_))

    def impls(self, key: BenchKey) -> List[str]:
        found = {impl for k, impl in self.points if k == key}
        return sorted(found, key=lambda i: (IMPL_ORDER.index(i) if i in IMPL_ORDER else len(IMPL_ORDER), i))

    def speedup(self, key: BenchKey, impl: str) -> Optional[float]:
        base, point = self.points.get((key, BASELINE_IMPL)), self.points.get((key, impl))
        if not base or not point or point.seconds <= 0:
            return None
        ratio = base.seconds / point.seconds
        return ratio if math.isfinite(ratio) else None


def _number(entry: dict, name: str) -> Optional[float]:
    """A finite number, else None: a counter of null, 1e999 or an odd type is "not measured" here."""
    value = entry.get(name)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def _text(entry: dict, name: str) -> str:
    value = entry.get(name)
    return value if isinstance(value, str) else ""


def parse_name(name: str) -> Optional[Dict[str, str]]:
    parts = [p for p in name.split("/") if ":" not in p and p != "real_time"]
    if len(parts) < len(_NAME_FIELDS):
        return None
    return dict(zip(_NAME_FIELDS, parts[: len(_NAME_FIELDS)]))


def _preferred(entries: List[dict]) -> Optional[dict]:
    """The median aggregate when there is one, else the mean, else the (last) plain iteration run."""
    by_aggregate = {_text(e, "aggregate_name"): e for e in entries}
    for name in ("median", "mean", ""):
        if name in by_aggregate:
            return by_aggregate[name]
    return None


def build_bench_table(report: Report) -> Optional[BenchTable]:
    points: Dict[Tuple[BenchKey, str], BenchPoint] = {}
    simulated: Dict[str, bool] = {}
    for runner in report.runners:
        bench = runner.benchmarks or {}
        grouped: Dict[str, List[dict]] = {}
        entries = bench.get("benchmarks") if isinstance(bench, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or entry.get("error_occurred") is True:
                continue
            name = _text(entry, "run_name") or _text(entry, "name")
            if name:
                grouped.setdefault(name, []).append(entry)
        for run_name, entries in grouped.items():
            fields = parse_name(run_name)
            entry = _preferred(entries)
            if fields is None or entry is None:
                continue
            unit = _TIME_UNIT_SECONDS.get(_text(entry, "time_unit") or "ns", 1e-9)
            real_time = _number(entry, "real_time")
            if real_time is None or real_time < 0:
                continue
            key = BenchKey(runner.label, fields["op"], fields["dtype"], fields["size"], fields["device"], fields["pass"])
            points[(key, fields["impl"])] = BenchPoint(run_name, real_time * unit, _number(entry, "bytes_per_second"),
                                                       _number(entry, "bw_util"))
            simulated[runner.label] = runner.simulated
    if not points:
        return None
    return BenchTable(points=points, runners_simulated=simulated)
