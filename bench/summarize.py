#!/usr/bin/env python3
"""Ratios and targets from crossdev bench runs (bench/python/peer_bench.py and crossdev_bench).

usage: python3 bench/summarize.py BENCH.json [MORE.json...] [--json FILE] [--markdown FILE]

Per op x dtype x size x device x pass it lists every implementation's median time with its spread
(min, max, coefficient of variation over the repetitions; a figure whose CV is above 5% is marked
noisy) and the ratios the targets need, all measured in one run. The targets are the TARGETS table
below (issues 13 and 23); each applicable case is listed as met or missed with its ratio, and as noisy
when a figure it is computed from is noisy. Two tables follow the targets: the size sweep (fused vs the
best ATen expression and fused.out vs the same-run triad at every size, fp32 fwd) and the per-call
figure (one crossdev call vs one torch.add on the same tensor, one thread; pass name "call").
Targets are reported, never gated: speed targets live in benchmarks, not in tests. Later files
override earlier ones for the same benchmark name; the context (allocator, triad, CPU capability)
is taken from the files in order, later keys winning.
Exit codes: 0 summary written, 2 bad input (the message names the file).
"""
import argparse
import json
import math
import pathlib
import statistics
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

_TIME_UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_SIZE_MULTIPLIER = {"K": 1024, "M": 1024 * 1024}
# Every impl a crossdev bench names, in table order (peer_bench.py's, then the C++ bench's torchscript,
# then the per-call figure's crossdev.functional call and ATen yardsticks: bench/python/per_call.py; then the
# OpInfo sweep's two sides: bench/python/opinfo_sweep_bench.py).
IMPLS = ("fused.out", "fused", "functional", "functional.train", "fallback", "aten.out", "aten", "compile", "torchscript", "torch.add",
         "aten.add", "harness", "bare")
TRIAD_OP = "stream_triad"
PER_CALL_PASS = "call"  # bench/python/per_call.py: one call at the smallest realistic shape, one thread
NOISY_CV = 0.05


class InputError(Exception):
    pass


@dataclass
class Point:
    """One benchmark: median, min and max over its repetitions, and their coefficient of variation."""
    seconds: float
    bw_util: Optional[float]
    counters: Dict[str, float] = field(default_factory=dict)
    error: Optional[str] = None
    min_seconds: float = math.nan
    max_seconds: float = math.nan
    cv: float = 0.0
    repetitions: int = 1

    @property
    def noisy(self) -> bool:
        return self.cv > NOISY_CV

    @property
    def bytes_per_second(self) -> Optional[float]:
        per_call = self.counters.get("bytes_per_call")
        return per_call / self.seconds if per_call and self.seconds > 0 else None


def size_elements(label: str) -> int:
    """Elements of a size label: 4096, 256K, 8M, or a shape such as 2x8x64 (the per-call figure)."""
    if "x" in label:
        return math.prod(int(d) for d in label.split("x"))
    if label and label[-1] in _SIZE_MULTIPLIER:
        return int(label[:-1]) * _SIZE_MULTIPLIER[label[-1]]
    return int(label)


def _read(path: str) -> dict:
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
    return doc


def points_from(doc: dict, path: str) -> Dict[str, Point]:
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
        if entry["time_unit"] not in _TIME_UNIT_S:
            raise InputError(f"{path}: benchmarks[{i}] ({entry['name']}): unknown time_unit '{entry['time_unit']}'")
        samples.setdefault(entry["name"], []).append(entry)
    points = {name: Point(math.nan, None, error=msg) for name, msg in errors.items()}
    for name, runs in samples.items():
        times = [r["real_time"] * _TIME_UNIT_S[r["time_unit"]] for r in runs]
        utils = [r["bw_util"] for r in runs if isinstance(r.get("bw_util"), (int, float))]
        keys = [k for k, v in runs[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        counters = {k: statistics.median(r[k] for r in runs if isinstance(r.get(k), (int, float))) for k in keys}
        mean = statistics.mean(times)
        cv = statistics.stdev(times) / mean if len(times) > 1 and mean > 0 else 0.0
        points[name] = Point(statistics.median(times), statistics.median(utils) if utils else None, counters,
                             min_seconds=min(times), max_seconds=max(times), cv=cv, repetitions=len(times))
    return points


def load_points(path: str) -> Dict[str, Point]:
    return points_from(_read(path), path)


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

    def ok(self, impl: str) -> Optional[Point]:
        p = self.impls.get(impl)
        return p if p and not p.error and p.seconds > 0 else None

    def ratio(self, slower: str, faster: str = "fused") -> Optional[float]:
        """How many times faster `faster` is than `slower` (time of slower / time of faster)."""
        a, b = self.ok(slower), self.ok(faster)
        return a.seconds / b.seconds if a and b else None


def group_ops(points: Dict[str, Point]) -> List[Group]:
    groups: Dict[str, Group] = {}
    for name, point in points.items():
        parts = name.split("/")
        if len(parts) < 6 or parts[1] not in IMPLS:
            continue
        op, impl, dtype, size, device, pass_ = parts[:6]
        group = groups.setdefault(f"{op}/{dtype}/{size}/{device}/{pass_}", Group(op, dtype, size, device, pass_))
        group.impls[impl] = point
    return sorted(groups.values(), key=lambda g: (g.op == TRIAD_OP, g.op, g.device, g.dtype, size_elements(g.size),
                                                  g.pass_))


# --- Targets (issue 13), as data: each applies to some groups and needs value >= minimum ----------------
# The devices the peers driver times (bench/python/peer_bench.py's DEVICE_KINDS; a test keeps the two equal).
# Each device's cases are judged against that device's own figures: its own peers, its own triad.
TARGET_DEVICES = ("cpu", "cuda")
MEMORY_BOUND_OPS = ("modulate", "bias_dropout_add_scale", "rms_norm", "layer_norm_modulate", "swiglu", "rotary")
ATEN_KERNEL_OPS = ("gelu_tanh", "scaled_masked_softmax")
Value = Optional[Tuple[float, List[Point]]]  # the ratio and the figures it is computed from


def _ratio(g: Group, slower: str, faster: str) -> Value:
    a, b = g.ok(slower), g.ok(faster)
    return (a.seconds / b.seconds, [a, b]) if a and b else None


def _vs_triad(g: Group, triads: Dict[Tuple[str, str], Point]) -> Value:
    fused, triad = g.ok("fused.out"), triads.get((g.device, g.size))
    if not fused or not triad or not fused.bytes_per_second or not triad.bytes_per_second:
        return None
    return fused.bytes_per_second / triad.bytes_per_second, [fused, triad]


def _vs_best_peer(g: Group) -> Value:
    peers = [p for p in (g.ok("aten"), g.ok("compile")) if p]
    fused = g.ok("fused")
    if not fused or not peers:
        return None
    best = min(peers, key=lambda p: p.seconds)
    return best.seconds / fused.seconds, [fused, best]


def _fwd(g: Group) -> bool:
    return g.op != TRIAD_OP and g.dtype == "float32" and g.device in TARGET_DEVICES and g.pass_ == "fwd"


def _big_fwd(g: Group) -> bool:
    return _fwd(g) and size_elements(g.size) >= 8 << 20


def _per_call(g: Group) -> bool:
    return g.dtype == "float32" and g.device == "cpu" and g.pass_ == PER_CALL_PASS


def _fwd_bwd(g: Group) -> bool:
    return (g.dtype == "float32" and g.device in TARGET_DEVICES and g.pass_ == "fwd_bwd"
            and size_elements(g.size) >= 1 << 20)


@dataclass
class Target:
    """Met when value >= minimum, or, for a target with a maximum (a cost), when value <= maximum."""
    name: str
    description: str
    applies: Callable[[Group], bool]
    value: Callable[[Group, Dict[str, Point]], Value]
    minimum: Optional[float]
    unit: str
    maximum: Optional[float] = None

    def met(self, value: float) -> bool:
        return value <= self.maximum if self.maximum is not None else value >= self.minimum

    def shortfall(self, value: float) -> float:
        """How far from the bound, as a share of it: below a minimum, or above a maximum."""
        return value / self.maximum - 1.0 if self.maximum is not None else 1.0 - value / self.minimum

    def needs(self) -> str:
        """The bound as the Markdown table's `needs` column writes it."""
        return f"<= {self.maximum:g}" if self.maximum is not None else f"{self.minimum:g}"


TARGETS: List[Target] = [
    Target("roofline", "kernel-only fused forward (fused.out) reaches 0.85 of the same-run STREAM triad's GB/s "
           "(memory-bound ops, fp32, >= 8M)",
           lambda g: _big_fwd(g) and g.op in MEMORY_BOUND_OPS, _vs_triad, 0.85, "of triad"),
    Target("vs_aten_kernel", "kernel-only fused (fused.out) is at least as fast as ATen's own kernel (aten.out)",
           lambda g: _big_fwd(g) and g.op in ATEN_KERNEL_OPS, lambda g, t: _ratio(g, "aten.out", "fused.out"),
           1.0, "x"),
    Target("alloc_vs_best_peer", "allocating fused call vs the faster of the ATen expression and torch.compile",
           _big_fwd, lambda g, t: _vs_best_peer(g), 1.0, "x"),
    Target("alloc_vs_fallback", "allocating fused call vs the crossdev fallback",
           _big_fwd, lambda g, t: _ratio(g, "fallback", "fused"), 2.5, "x"),
    Target("fwd_bwd_vs_fallback", "fused forward+backward vs the fallback's autograd (1M and 8M)",
           _fwd_bwd, lambda g, t: _ratio(g, "fallback", "fused"), 1.5, "x"),
    Target("fwd_bwd_vs_compile", "fused forward+backward vs torch.compile's (1M and 8M)",
           _fwd_bwd, lambda g, t: _ratio(g, "compile", "fused"), 1.0, "x"),
    # Issue 23: fast at every size, not only where the per-call costs hide (matrices/bench/sweep.yaml).
    Target("fused_vs_aten_sweep", "allocating fused call vs the best ATen expression (aten), at every size "
           "of the sweep (fp32 fwd, 1K to 8M)", _fwd, lambda g, t: _ratio(g, "aten", "fused"), 1.0, "x"),
    Target("per_call_vs_torch_add", "one crossdev call from Python (crossdev.functional.<op>) at the smallest "
           "realistic inputs (x = [2, 8, 64]) vs one torch.add(x, x), one thread: time(functional) / time(torch.add); "
           "an op with dropout at training=False, its call path (its training call is reported beside it)",
           _per_call, lambda g, t: _ratio(g, "functional", "torch.add"), None, "x torch.add's time", maximum=1.5),
]
# Issue 24: the OpInfo sweep (bench/python/opinfo_sweep_bench.py), one simulated device, fwd+bwd, float32.
OPINFO_SWEEP_OP = "opinfo_sweep"


def _opinfo_sweep(g: Group) -> bool:
    return g.op == OPINFO_SWEEP_OP and g.pass_ == "fwd_bwd"


def _harness_figure(g: Group, scale: Callable[[Point], float]) -> Value:
    p = g.ok("harness")
    return (scale(p), [p]) if p else None


TARGETS += [
    Target("opinfo_sweep_wall", "wall time of the float32 fwd+bwd sweep of every OpInfo (<= 16 samples each) on one "
           "simulated device, through the harness", _opinfo_sweep, lambda g, t: _harness_figure(g, lambda p: p.seconds),
           None, "s", maximum=300.0),
    Target("opinfo_sweep_overhead", "the harness's sweep vs a bare loop running the same samples with torch alone, "
           "same run: time(harness) / time(bare)", _opinfo_sweep, lambda g, t: _ratio(g, "harness", "bare"),
           None, "x the bare loop's time", maximum=1.5),
    Target("opinfo_sweep_rss", "peak RSS of the sweep's processes (the Python worker's ru_maxrss)", _opinfo_sweep,
           lambda g, t: _harness_figure(g, lambda p: p.counters.get("peak_rss_bytes", math.nan) / 2 ** 30),
           None, "GiB", maximum=2.0),
]
RESOLVE_MAX_NS = 50.0


def triads_by_device_size(groups: List[Group]) -> Dict[Tuple[str, str], Point]:
    """The same-run STREAM triad of each (device, size)."""
    return {(g.device, g.size): g.impls["aten.out"] for g in groups
            if g.op == TRIAD_OP and g.device in TARGET_DEVICES and g.ok("aten.out")}


def evaluate(groups: List[Group]) -> List[dict]:
    triads = triads_by_device_size(groups)
    results = []
    for g in groups:
        for t in TARGETS:
            if not t.applies(g):
                continue
            found = t.value(g, triads)
            bound = {"minimum": t.minimum, "maximum": t.maximum}
            if found is None:
                results.append({"target": t.name, "case": g.key, "value": None, **bound, "met": None,
                                "noisy": False, "max_cv": None, "shortfall": None})
                continue
            value, used = found
            max_cv = max(p.cv for p in used)
            met = t.met(value)
            results.append({"target": t.name, "case": g.key, "value": value, **bound, "met": met,
                            "noisy": max_cv > NOISY_CV, "max_cv": max_cv,
                            "shortfall": None if met else t.shortfall(value)})
    return results


def _noisy(*points: Optional[Point]) -> bool:
    return any(p.noisy for p in points if p)


def sweep_rows(groups: List[Group]) -> List[dict]:
    """Every fp32 forward case of a target device, smallest first per op: the allocating fused call against the best
    ATen expression, and the kernel-only fused.out against the same-size triad of the same run."""
    triads = triads_by_device_size(groups)
    rows = []
    for g in (g for g in groups if _fwd(g)):
        fused, aten, kernel, triad = g.ok("fused"), g.ok("aten"), g.ok("fused.out"), triads.get((g.device, g.size))
        if not fused and not kernel:
            continue
        vs_triad = _vs_triad(g, triads)
        rows.append({"case": g.key, "op": g.op, "size": g.size, "elements": size_elements(g.size),
                     "fused_seconds": fused.seconds if fused else None, "aten_seconds": aten.seconds if aten else None,
                     "fused_vs_aten": aten.seconds / fused.seconds if fused and aten else None,
                     "fused_out_bytes_per_second": kernel.bytes_per_second if kernel else None,
                     "triad_bytes_per_second": triad.bytes_per_second if triad else None,
                     "fused_out_vs_triad": vs_triad[0] if vs_triad else None,
                     "noisy": _noisy(fused, aten, kernel, triad)})
    return rows


def per_call_rows(groups: List[Group]) -> List[dict]:
    """One crossdev call (crossdev.functional and torch.ops.crossdev) against one torch.add and one
    torch.ops.aten.add.Tensor on the same tensor."""
    rows = []
    for g in (g for g in groups if _per_call(g)):
        function, fused, add, ops_add = g.ok("functional"), g.ok("fused"), g.ok("torch.add"), g.ok("aten.add")
        train = g.ok("functional.train")  # an op with dropout: its training call (bench/python/per_call.py)
        rows.append({"case": g.key, "op": g.op, "shape": g.size,
                     "functional_seconds": function.seconds if function else None,
                     "functional_train_seconds": train.seconds if train else None,
                     "train_vs_torch_add": train.seconds / add.seconds if train and add else None,
                     "fused_seconds": fused.seconds if fused else None,
                     "torch_add_seconds": add.seconds if add else None,
                     "aten_add_seconds": ops_add.seconds if ops_add else None,
                     "vs_torch_add": function.seconds / add.seconds if function and add else None,
                     "torch_ops_vs_torch_add": fused.seconds / add.seconds if fused and add else None,
                     "torch_ops_vs_aten_add": fused.seconds / ops_add.seconds if fused and ops_add else None,
                     "noisy": _noisy(function, fused, add, ops_add)})
    return rows


# A kernel-only figure (`<impl>.out` into a preallocated output) that takes at least this share of
# its allocating sibling's page faults is not kernel-only: the .out variant allocates inside.
KERNEL_ONLY_FAULT_SHARE = 0.5
MIN_ALLOCATING_FAULTS = 64


def fault_checks(groups: List[Group]) -> List[dict]:
    """Page faults per call of each kernel-only figure against its allocating sibling."""
    rows = []
    for g in groups:
        for kernel, allocating in (("fused.out", "fused"), ("aten.out", "aten")):
            k, a = g.ok(kernel), g.ok(allocating)
            if not k or not a or "minflt_per_call" not in k.counters or "minflt_per_call" not in a.counters:
                continue
            kf, af = k.counters["minflt_per_call"], a.counters["minflt_per_call"]
            rows.append({"case": g.key, "impl": kernel, "minflt_per_call": kf, "allocating_minflt_per_call": af,
                         "allocates": af >= MIN_ALLOCATING_FAULTS and kf >= KERNEL_ONLY_FAULT_SHARE * af})
    return rows


def resolve_rows(points: Dict[str, Point]) -> List[dict]:
    rows = []
    for name, p in sorted(points.items()):
        if name.startswith("policy/resolve/") and not p.error:
            ns = p.seconds * 1e9
            allocs = p.counters.get("allocs_per_op")
            rows.append({"case": name, "ns": ns, "allocs_per_op": allocs,
                         "met": ns < RESOLVE_MAX_NS and allocs is not None and allocs == 0})
    return rows


def _fmt_time(seconds: Optional[float]) -> str:
    if seconds is None or math.isnan(seconds):
        return "-"
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def _fmt_point(p: Optional[Point]) -> str:
    if p is None:
        return "-"
    if p.error:
        return "error"
    text = _fmt_time(p.seconds)
    if p.repetitions > 1:
        text += f" ({p.cv:.0%}{' noisy' if p.noisy else ''})"
    return text


def _context_lines(context: dict) -> List[str]:
    lines = []
    triads = sorted(((k[len("crossdev_triad_"):-len("_bytes_per_second")], float(v)) for k, v in context.items()
                     if k.startswith("crossdev_triad_") and k.endswith("_bytes_per_second")),
                    key=lambda kv: size_elements(kv[0]))
    if triads:
        lines.append("STREAM triad, same process: " + ", ".join(f"{lbl}: {v / 1e9:.2f} GB/s" for lbl, v in triads) + ".")
    elif context.get("crossdev_peak_cpu_bytes_per_second"):
        lines.append(f"CPU peak (STREAM triad, same process): "
                     f"{float(context['crossdev_peak_cpu_bytes_per_second']) / 1e9:.2f} GB/s.")
    lines.append(f"Allocator: {context.get('crossdev_allocator', 'not recorded')}; CPU capability: "
                 f"{context.get('crossdev_cpu_capability', 'not recorded')}; ATen threads: "
                 f"{context.get('crossdev_aten_threads', '?')}; affinity: {context.get('crossdev_affinity', 'not recorded')}; "
                 f"load average at the end: {context.get('load_avg', '?')}.")
    lines.append("Times are medians over the repetitions, with the coefficient of variation in parentheses; "
                 f"a figure with CV > {NOISY_CV:.0%} is marked noisy.")
    return lines


def _fmt_ratio(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def _fmt_gbps(value: Optional[float]) -> str:
    return "-" if value is None else f"{value / 1e9:.1f}"


def _sweep_lines(rows: List[dict], notes: str) -> List[str]:
    lines = ["", "### Size sweep (fp32 forward; matrices/bench/sweep.yaml)", "",
             "aten / fused > 1: the fused call is faster than the best ATen expression; fused.out / triad: the "
             "kernel's GB/s (traffic model) over the same-size STREAM triad's, same run."]
    if notes:
        lines += ["", f"Sizes an op's bench layout cannot take: {notes}."]
    lines += ["", "| op | size | fused | aten | aten / fused | fused.out GB/s | triad GB/s | fused.out / triad |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['op']} | {r['size']} | {_fmt_time(r['fused_seconds'])} | {_fmt_time(r['aten_seconds'])} | "
                     f"{_fmt_ratio(r['fused_vs_aten'])}{' (noisy)' if r['noisy'] else ''} | "
                     f"{_fmt_gbps(r['fused_out_bytes_per_second'])} | {_fmt_gbps(r['triad_bytes_per_second'])} | "
                     f"{_fmt_ratio(r['fused_out_vs_triad'])} |")
    return lines


def _per_call_lines(rows: List[dict], threads: str) -> List[str]:
    lines = ["", f"### Per call ({threads} ATen thread{'' if threads == '1' else 's'}; bench/python/per_call.py)", "",
             "One allocating call of the op at its smallest realistic inputs, through crossdev.functional.<op>(...) "
             "and through torch.ops.crossdev.<op>(...), against one torch.add(x, x) and one "
             "torch.ops.aten.add.Tensor(x, x) on its main tensor x (the same torch.ops path). An op with dropout "
             "is called at training=False (its call path); its training call, which also hashes the portable mask "
             "of every element, is the last column.",
             "", "| op | x | crossdev.functional | torch.ops.crossdev | torch.add | torch.ops.aten.add.Tensor "
             "| functional / torch.add | torch.ops / torch.add | torch.ops / aten.add | training call / torch.add |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['op']} | [{r['shape'].replace('x', ', ')}] | {_fmt_time(r['functional_seconds'])} | "
                     f"{_fmt_time(r['fused_seconds'])} | "
                     f"{_fmt_time(r['torch_add_seconds'])} | {_fmt_time(r['aten_add_seconds'])} | "
                     f"{_fmt_ratio(r['vs_torch_add'])}{' (noisy)' if r['noisy'] else ''} | "
                     f"{_fmt_ratio(r['torch_ops_vs_torch_add'])} | {_fmt_ratio(r['torch_ops_vs_aten_add'])} | "
                     f"{_fmt_ratio(r['train_vs_torch_add'])} |")
    return lines


def markdown(groups: List[Group], targets: List[dict], resolves: List[dict], context: dict,
             faults: Optional[List[dict]] = None) -> str:
    present = [i for i in IMPLS if any(i in g.impls for g in groups)]
    lines = ["## crossdev bench summary", ""] + _context_lines(context) + [""]
    lines += ["| case | " + " | ".join(present) + " |", "|---|" + "---:|" * len(present)]
    for g in groups:
        lines.append(f"| {g.key} | " + " | ".join(_fmt_point(g.impls.get(i)) for i in present) + " |")
    lines += ["", "### Targets", "", "| target | case | ratio | needs | verdict |", "|---|---|---:|---:|---|"]
    for t in TARGETS:
        for r in (r for r in targets if r["target"] == t.name):
            if r["value"] is None:
                lines.append(f"| {t.name} | {r['case']} | - | {t.needs()} | not measured |")
                continue
            how_far = "over" if t.maximum is not None else "short"
            verdict = "met" if r["met"] else f"MISSED ({r['shortfall']:.0%} {how_far})"
            if r["noisy"]:
                verdict += f", noisy (CV {r['max_cv']:.0%})"
            lines.append(f"| {t.name} | {r['case']} | {r['value']:.2f} | {t.needs()} | {verdict} |")
    lines += [""]
    for t in TARGETS:
        rows = [r for r in targets if r["target"] == t.name]
        measured = [r for r in rows if r["value"] is not None]
        met = sum(bool(r["met"]) for r in measured)
        missed = [r["case"].split("/")[0] + "@" + r["case"].split("/")[2] for r in measured if not r["met"]]
        bound = f"<= {t.maximum:g}" if t.maximum is not None else f">= {t.minimum:g}"
        lines.append(f"- **{t.name}** ({t.description}, needs {bound} {t.unit}): {met}/{len(measured)} met"
                     + (f"; missed: {', '.join(missed)}" if missed else "")
                     + ("" if rows else " (no measurements: run bench/python/peer_bench.py)")
                     + (f"; {len(rows) - len(measured)} not measured" if len(rows) > len(measured) else ""))
    sweep = sweep_rows(groups)
    if sweep:
        lines += _sweep_lines(sweep, context.get("crossdev_sweep_notes", ""))
    calls = per_call_rows(groups)
    if calls:
        lines += _per_call_lines(calls, str(context.get("crossdev_per_call_threads", "1")))
    if faults:
        lines += ["", "### Page faults per call (median minor faults: kernel-only vs allocating)", "",
                  "| case | kernel-only impl | kernel-only | allocating | note |", "|---|---|---:|---:|---|"]
        for r in faults:
            note = "allocates inside: not kernel-only" if r["allocates"] else ""
            lines.append(f"| {r['case']} | {r['impl']} | {r['minflt_per_call']:.0f} | "
                         f"{r['allocating_minflt_per_call']:.0f} | {note} |")
    if resolves:
        lines += ["", f"### resolve() (target: < {RESOLVE_MAX_NS:g} ns, 0 allocations)", "",
                  "| case | ns | allocs/op | met |", "|---|---:|---:|---|"]
        for r in resolves:
            allocs = "-" if r["allocs_per_op"] is None else f"{r['allocs_per_op']:g}"
            lines.append(f"| {r['case']} | {r['ns']:.1f} | {allocs} | {'yes' if r['met'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench", nargs="+", help="Google Benchmark JSON files (peer_bench.py, crossdev_bench) or bundles")
    p.add_argument("--json", metavar="FILE", help="write groups, ratios and target verdicts as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown summary here too")
    args = p.parse_args(argv)
    points: Dict[str, Point] = {}
    context: dict = {}
    try:
        for path in args.bench:
            doc = _read(path)
            points.update(points_from(doc, path))
            if isinstance(doc.get("context"), dict):
                context.update(doc["context"])
        # A crossdev_bench JSON the driver merged into carries the driver's keys as crossdev_peers_*:
        # those describe the figures the targets use, so they win.
        context.update({"crossdev_" + k[len("crossdev_peers_"):]: v for k, v in list(context.items())
                        if k.startswith("crossdev_peers_")})
    except InputError as exc:
        print(f"summarize.py: error: {exc}", file=sys.stderr)
        return 2
    groups = group_ops(points)
    targets = evaluate(groups)
    resolves = resolve_rows(points)
    faults = fault_checks(groups)
    text = markdown(groups, targets, resolves, context, faults)
    print(text)
    if args.markdown:
        pathlib.Path(args.markdown).write_text(text, encoding="utf-8")
    if args.json:
        doc = {"context": {k: context[k] for k in sorted(context) if k.startswith("crossdev_")},
               "groups": [{"case": g.key,
                           "impls": {i: {"seconds": p.seconds, "min_seconds": p.min_seconds, "max_seconds": p.max_seconds,
                                         "cv": p.cv, "noisy": p.noisy, "repetitions": p.repetitions,
                                         "counters": p.counters} for i, p in g.impls.items() if not p.error},
                           "errors": {i: p.error for i, p in g.impls.items() if p.error},
                           "fused_vs_eager": g.ratio("fallback"), "fused_vs_torchscript": g.ratio("torchscript"),
                           "fused_vs_compile": g.ratio("compile"), "fused_vs_aten": g.ratio("aten"),
                           "fused_bw_util": g.impls["fused"].bw_util if "fused" in g.impls else None}
                          for g in groups],
               "targets": targets, "sweep": sweep_rows(groups), "per_call": per_call_rows(groups),
               "resolve": resolves, "page_faults": faults}
        pathlib.Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
