"""Benchmark model from the Google Benchmark JSON a bundle embeds under `benchmarks`.

Names are "op/impl/dtype/size/device/pass" (e.g. "rms_norm/fused/float32/4096x1024/cpu/fwd"),
optionally followed by Google Benchmark suffixes ("/real_time", "/min_time:0.050"). Counters
(bytes_per_second, items_per_second, bw_util = achieved / measured peak bandwidth) are top-level
keys of each entry. Aggregates (mean/median/stddev) are used when present, the median first.
The spread (min, max, coefficient of variation) comes from the repetitions (the iteration entries),
else from min/max/cv aggregates; a figure whose CV exceeds NOISY_CV is noisy. Each point is labelled
with the device it actually ran on (the entry's label, e.g. "real cpu", else the run's
crossdev_execution): benchmarks are never run on simulated devices, whatever the conformance run
simulated.
"""
import math
import re
import statistics
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from crossdev.report.merge import Report

BASELINE_IMPL = "fallback"  # speedups are fallback time / impl time
# Impls in chart order; others the bench emits follow in name order.
IMPL_ORDER = ("fused.out", "fused", "fallback", "aten.out", "aten", "compile", "torchscript")
TRIAD_OP = "stream_triad"   # bench/python/peer_bench.py's same-process STREAM triad
NOISY_CV = 0.05             # repetitions varying more than this (coefficient of variation): noisy
FUSED_IMPLS = ("fused", "fused.out")  # the ratio chart: "fused" against the best other impl at each size
_TIME_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_NAME_FIELDS = ("op", "impl", "dtype", "size", "device", "pass")


_SIZE_PART = re.compile(r"(\d+(?:\.\d+)?)([KMG]?)", re.IGNORECASE)
_SIZE_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_value(label: str) -> Optional[float]:
    """The element count a size label names: "16K" 16384, "8M" 8388608, "16" 16, "2x8x64" 1024 (a shape:
    the product of its dimensions); None for a label that is not a size."""
    total = 1.0
    for part in label.split("x"):
        match = _SIZE_PART.fullmatch(part)
        if match is None:
            return None
        total *= float(match.group(1)) * _SIZE_SUFFIX[match.group(2).upper()]
    return total


def size_order(label: str) -> Tuple[int, float, str]:
    """Sort key for size labels: numeric order (1K < 16K < 1M, never text order); labels that are not a
    size follow, in text order."""
    value = size_value(label)
    return (0, value, label) if value is not None else (1, 0.0, label)


@dataclass(frozen=True)
class ScalingKey:
    """One scaling chart: an op's figures at every size of one pass."""
    runner: str
    op: str
    dtype: str
    device: str
    pass_: str


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

    def scaling(self) -> ScalingKey:
        return ScalingKey(self.runner, self.op, self.dtype, self.device, self.pass_)


@dataclass
class BenchPoint:
    name: str
    seconds: float                      # per iteration (the median where there are repetitions)
    bytes_per_second: Optional[float]
    bw_util: Optional[float]            # fraction of the measured peak, as the bench computed it
    min_seconds: Optional[float] = None
    max_seconds: Optional[float] = None
    cv: Optional[float] = None          # coefficient of variation of the repetitions
    repetitions: int = 1
    device_label: str = ""              # where it ran, e.g. "real cpu"
    minflt_per_call: Optional[float] = None

    @property
    def noisy(self) -> bool:
        return self.cv is not None and self.cv > NOISY_CV

    def gbps(self, seconds: Optional[float] = None) -> Optional[float]:
        """GB/s at `seconds` per call (default: the median), from bytes_per_second at the median."""
        if self.bytes_per_second is None or not self.seconds > 0:
            return None
        return self.bytes_per_second * self.seconds / (seconds or self.seconds) / 1e9


@dataclass
class BenchTable:
    points: Dict[Tuple[BenchKey, str], BenchPoint]  # (key, impl) -> point
    runners_simulated: Dict[str, bool]
    contexts: Dict[str, dict] = field(default_factory=dict)  # runner -> the bench JSON's context

    def triad_gbps(self, key: BenchKey) -> Optional[float]:
        """The same-run STREAM triad at the key's size (peer_bench.py), else the run's CPU peak."""
        triad = self.points.get((BenchKey(key.runner, TRIAD_OP, "float32", key.size, key.device, "fwd"), "aten.out"))
        if triad is not None and triad.gbps():
            return triad.gbps()
        context = self.contexts.get(key.runner, {})
        for name in (f"crossdev_triad_{key.size}_bytes_per_second", f"crossdev_peers_triad_{key.size}_bytes_per_second",
                     f"crossdev_peak_{key.device}_bytes_per_second"):
            try:
                value = float(context[name])
            except (KeyError, TypeError, ValueError):
                continue
            if math.isfinite(value) and value > 0:
                return value / 1e9
        return None

    def keys(self) -> List[BenchKey]:
        return sorted({k for k, _ in self.points},
                      key=lambda k: (k.runner, k.op, k.dtype, k.device, k.pass_, size_order(k.size)))

    def scaling_groups(self) -> Dict[ScalingKey, List[BenchKey]]:
        """Each op's keys per (runner, dtype, device, pass), sizes in numeric order."""
        groups: Dict[ScalingKey, List[BenchKey]] = {}
        for key in self.keys():
            groups.setdefault(key.scaling(), []).append(key)
        return groups

    def point_names(self) -> Dict[Tuple[str, str], Tuple[BenchKey, str]]:
        """(runner, benchmark name) -> (key, impl): where a bench-gate comparison (by name) is drawn."""
        return {(key.runner, p.name): (key, impl) for (key, impl), p in self.points.items()}

    def fused_ratio(self, key: BenchKey) -> Optional[Tuple[float, str, str]]:
        """(best peer time / fused time, the fused impl, the best peer) at one size: above 1 the fused kernel
        is faster than every other impl. "fused" (allocating, as the peers are) else "fused.out"."""
        impls = self.impls(key)
        fused = next((i for i in FUSED_IMPLS if i in impls), None)
        peers = [(self.points[(key, i)].seconds, i) for i in impls if i not in FUSED_IMPLS]
        peers = [(t, i) for t, i in peers if t > 0]
        if fused is None or not peers or not self.points[(key, fused)].seconds > 0:
            return None
        best_time, best = min(peers)
        return best_time / self.points[(key, fused)].seconds, fused, best

    @staticmethod
    def impls_order(impl: str) -> Tuple[int, str]:
        return (IMPL_ORDER.index(impl) if impl in IMPL_ORDER else len(IMPL_ORDER), impl)

    def impls(self, key: BenchKey) -> List[str]:
        found = {impl for k, impl in self.points if k == key}
        return sorted(found, key=self.impls_order)

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


def _spread(entries: List[dict], preferred: dict) -> Tuple[Optional[float], Optional[float], Optional[float], int]:
    """(min, max, cv, repetitions) in the preferred entry's time unit."""
    reps = [_number(e, "real_time") for e in entries if _text(e, "run_type") != "aggregate"]
    reps = [r for r in reps if r is not None and r >= 0]
    if len(reps) > 1:
        mean = statistics.mean(reps)
        cv = statistics.stdev(reps) / mean if mean > 0 else None
        return min(reps), max(reps), cv, len(reps)
    by_aggregate = {_text(e, "aggregate_name"): e for e in entries if _text(e, "run_type") == "aggregate"}
    lo = _number(by_aggregate.get("min", {}), "real_time")
    hi = _number(by_aggregate.get("max", {}), "real_time")
    cv = _number(by_aggregate.get("cv", {}), "real_time")
    count = _number(preferred, "repetitions")
    return lo, hi, cv, int(count) if count and count >= 1 else 1


def _device_label(entry: dict, device: str, context: dict) -> str:
    label = _text(entry, "label")
    if label.startswith(("real ", "simulated ")):
        return label
    execution = context.get("crossdev_execution") if isinstance(context, dict) else None
    return f"{execution} {device}" if execution in ("real", "simulated") else f"{device} (execution not recorded)"


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
    contexts: Dict[str, dict] = {}
    for runner in report.runners:
        bench = runner.benchmarks or {}
        context = bench.get("context") if isinstance(bench, dict) else None
        context = context if isinstance(context, dict) else {}
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
            lo, hi, cv, repetitions = _spread(entries, entry)
            points[(key, fields["impl"])] = BenchPoint(
                run_name, real_time * unit, _number(entry, "bytes_per_second"), _number(entry, "bw_util"),
                None if lo is None else lo * unit, None if hi is None else hi * unit, cv, repetitions,
                _device_label(entry, fields["device"], context), _number(entry, "minflt_per_call"))
            simulated[runner.label] = runner.simulated
            contexts[runner.label] = context
    if not points:
        return None
    return BenchTable(points=points, runners_simulated=simulated, contexts=contexts)
