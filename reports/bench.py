"""Benchmark model from the Google Benchmark JSON a bundle embeds under `benchmarks`.

Names are "op/impl/dtype/size/device/pass" (e.g. "rms_norm/fused/float32/4096x1024/cpu/fwd"),
optionally followed by Google Benchmark suffixes ("/real_time", "/min_time:0.050"). Counters
(bytes_per_second, items_per_second, bw_util = achieved / measured peak bandwidth) are top-level
keys of each entry. Aggregates (mean/median/stddev) are used when present, the median first.
"""
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
        return base.seconds / point.seconds


def _number(entry: dict, name: str) -> Optional[float]:
    value = entry.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parse_name(name: str) -> Optional[Dict[str, str]]:
    parts = [p for p in name.split("/") if ":" not in p and p != "real_time"]
    if len(parts) < len(_NAME_FIELDS):
        return None
    return dict(zip(_NAME_FIELDS, parts[: len(_NAME_FIELDS)]))


def _preferred(entries: List[dict]) -> Optional[dict]:
    """The median aggregate when there is one, else the mean, else the (last) plain iteration run."""
    by_aggregate = {e.get("aggregate_name", ""): e for e in entries}
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
        for entry in bench.get("benchmarks", []):
            if entry.get("error_occurred"):
                continue
            grouped.setdefault(entry.get("run_name") or entry["name"], []).append(entry)
        for run_name, entries in grouped.items():
            fields = parse_name(run_name)
            entry = _preferred(entries)
            if fields is None or entry is None:
                continue
            unit = _TIME_UNIT_SECONDS.get(entry.get("time_unit", "ns"), 1e-9)
            real_time = _number(entry, "real_time")
            if real_time is None:
                continue
            key = BenchKey(runner.label, fields["op"], fields["dtype"], fields["size"], fields["device"], fields["pass"])
            points[(key, fields["impl"])] = BenchPoint(run_name, real_time * unit, _number(entry, "bytes_per_second"),
                                                       _number(entry, "bw_util"))
            simulated[runner.label] = runner.simulated
    if not points:
        return None
    return BenchTable(points=points, runners_simulated=simulated)
