#!/usr/bin/env python3
"""The bench driver: crossdev's fused ops against the peers a user would pick, in one process.

usage: python3 bench/python/peer_bench.py [--out FILE] [--matrix matrices/bench/bench.yaml]
           [--peers matrices/bench/peers.yaml] [--sweep matrices/bench/sweep.yaml] [--device cpu|cuda]
           [--parts cases,sweep,per_call] [--profile default|long] [--filter REGEX]
           [--impls fused.out,fused,fallback,aten.out,aten,compile] [--repetitions N] [--min-time S]
           [--compile-budget-seconds S] [--no-compile] [--cache-dir DIR] [--threads N] [--cpus LIST]
           [--build-dir build] [--merge-into BENCH.json] [--load-library PATH]...

For every `kind: op` case of the bench matrix (op x dtype x size x pass) that lists --device (cpu by
default) it builds the inputs once (crossdev.bench.make_inputs, the bits the C++ bench uses, copied to
the device) and times, on those same tensors,
each implementation of bench/python/peer_impls.py: the fused kernel into a preallocated output
(`fused.out`, kernel only) and allocating (`fused`), the crossdev fallback, the best native ATen
expression (matrices/bench/peers.yaml: `aten`, and `aten.out` where ATen has one kernel for it) and
torch.compile (Inductor) of the reference composition. The memory limit is the STREAM triad
(a = b + 3 c, torch.add into a preallocated a) at every size the cases use, timed by the same
code, in the same process and thread pool, half of its repetitions before the ops and half after.

--device cuda runs the same cases, sweep and peers on the GPU (cuda:0 or --device cuda:N): inputs,
outputs and the triad live on the device, and every figure is timed with CUDA events around the
timed loop, synchronized before and after (timing.clock_for); cpu_time stays the host's.

--parts picks what runs (default: all three; on a GPU cases,sweep): `cases`, the bench matrix's op cases; `sweep`, every op
at every size of matrices/bench/sweep.yaml (1K to 8M; fp32 fwd; fused.out, fused, aten.out, aten;
cases the matrix also has are timed once); `per_call`, one call of each op at its smallest realistic
inputs against one torch.add on the same tensor, on one thread (bench/python/per_call.py; the host's
figure: CPU only).

--load-library PATH (repeatable; each may be a ':'-separated list, as `crossdev run --load-library` takes)
loads a shared library with torch.ops.load_library, in order, after crossdev and before anything is timed:
a library that registers kernels (another backend's, or a test-only one such as
libcrossdev_test_slow_kernel_rms_norm.so, tests/mutants/slow/) times them in place of crossdev's own. The
context's crossdev_load_library names them (absolute paths, ':'-separated; "" when none). A library that
cannot be loaded is bad input (exit 2).

Output: Google Benchmark's JSON schema, names "op/impl/dtype/size/<device>/pass", device cpu or cuda
(the triad is "stream_triad/aten.out/float32/<size>/<device>/fwd", and "stream_triad/aten/..." allocating). Counters:
bytes_per_second and items_per_second (the C++ bench's traffic model), bw_util (of the same-size
triad's median), minflt_per_call / majflt_per_call (getrusage), compile_seconds (compile only).
Context: allocator, ATen threads, CPU affinity, OpenMP thread env, CPU capability, the triad, the
device and its clock, the libraries loaded.
Timing follows Google Benchmark: 2 warm-up calls, grow the iteration count to --min-time, then
--repetitions runs; aggregates mean/median/stddev/cv/min/max.

Exit codes: 0 ok, 1 a case failed to run (its entry has error_occurred), 2 bad input.
"""
import argparse
import datetime
import os
import pathlib
import platform
import re
import socket
import statistics
import sys
import time
from typing import NamedTuple, Optional, Tuple

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import host_config  # noqa: E402
import gbench_json  # noqa: E402
import peer_impls  # noqa: E402
import per_call  # noqa: E402
import sweep  # noqa: E402
import yaml_input  # noqa: E402
from bench_sizes import parse_size  # noqa: E402
from yaml_input import InputError  # noqa: E402

TRIAD_OP = "stream_triad"
_PROFILES = ("default", "long")
ALL_IMPLS = peer_impls.FWD_IMPLS
PARTS = ("cases", "sweep", "per_call")
GPU_PARTS = ("cases", "sweep")
DEVICE_KINDS = ("cpu", "cuda")


def device_kind(device):
    """"cpu" or "cuda" for a --device value (cpu, cuda, cuda:N), None for anything else; the kind
    names the results ("op/impl/dtype/size/<kind>/pass")."""
    kind, _, index = str(device).partition(":")
    if kind not in DEVICE_KINDS or (index and (kind == "cpu" or not index.isdigit())):
        return None
    return kind


class Case(NamedTuple):
    """One op x dtype x size x pass to time; impls, repetitions and min_time None: the driver's options."""
    op: str
    dtype: str
    elements: int
    label: str
    pass_name: str
    seed: int
    impls: Optional[Tuple[str, ...]] = None
    repetitions: Optional[int] = None
    min_time: Optional[float] = None

    @property
    def key(self):
        return self.op, self.dtype, self.elements, self.pass_name, self.seed


def as_list(value):
    return value if isinstance(value, list) else [value]


def load_cases(matrix_path, profile, device_kind="cpu"):
    """(op, dtype, elements, size label, pass, seed) for every op case of the selected profile that
    lists device_kind ("cpu", "cuda") in its devices (default: both)."""
    doc = yaml_input.load(matrix_path)
    if not isinstance(doc, dict) or doc.get("suite") != "bench" or not isinstance(doc.get("cases"), list):
        raise InputError(f"{matrix_path}: expected a bench matrix (suite: bench, cases: [...])")
    cases = []
    for row in doc["cases"]:
        if not isinstance(row, dict) or row.get("kind") != "op":
            continue
        where = f"{matrix_path}: row '{row.get('id', '?')}'"
        row_profile = row.get("profile", "default")
        if row_profile not in _PROFILES:
            raise InputError(f"{where}: profile '{row_profile}': expected one of {', '.join(_PROFILES)}")
        if row_profile == "long" and profile != "long":
            continue
        if device_kind not in as_list(row.get("devices", ["cpu", "cuda"])):
            continue
        for size in as_list(row.get("sizes", [])):
            elements, label = parse_size(size, where)
            for dtype in as_list(row.get("dtypes", ["float32"])):
                for pass_name in as_list(row.get("passes", ["fwd", "fwd_bwd"])):
                    case = Case(row["op"], str(dtype), elements, label, str(pass_name), int(row.get("seed", 0)))
                    if case not in cases:
                        cases.append(case)
    return cases


def add_sweep(cases, spec, layouts):
    """cases plus the sweep's; a case the matrix already has keeps the matrix's impls and timing.
    Returns (cases, notes about sizes an op's layout cannot take)."""
    found, notes = sweep.sweep_cases(spec, layouts)
    have = {c.key for c in cases}
    added = [Case(*t, impls=spec.impls, repetitions=spec.repetitions, min_time=spec.min_time) for t in found]
    return cases + [c for c in added if c.key not in have], notes


def name_of(op, impl, dtype, size_label, pass_name, device_kind="cpu"):
    return f"{op}/{impl}/{dtype}/{size_label}/{device_kind}/{pass_name}"


class Results:
    """Measurements in run order; entries are written at the end, when the triad is complete."""

    def __init__(self):
        self.rows = []  # (name, measurement or error text, bytes_per_call, elements, extra counters)

    def add(self, name, measurement, traffic, extra=None):
        self.rows.append((name, measurement, traffic, extra or {}))

    def error(self, name, message):
        self.rows.append((name, message, None, {}))


class Triad:
    """STREAM triad a = b + 3 c at one size: `aten.out` into a preallocated a, and `aten` allocating."""

    def __init__(self, torch, elements, device="cpu"):
        self.elements = elements
        self.a = torch.empty(elements, device=device)
        self.b, self.c = torch.ones(elements, device=device), torch.full((elements,), 2.0, device=device)
        self.steps = {"aten.out": lambda: torch.add(self.b, self.c, alpha=3.0, out=self.a),
                      "aten": lambda: torch.add(self.b, self.c, alpha=3.0)}
        self.measured = {}  # impl -> Measurement (reps of both halves)

    def run_half(self, timing, repetitions, min_time, clock):
        for impl, step in self.steps.items():
            done = self.measured.get(impl)
            m = timing.measure(step, repetitions, min_time, iterations=done.iterations if done else 0, clock=clock)
            if done:
                done.reps += m.reps
            else:
                self.measured[impl] = m

    def bytes_per_call(self):
        return 3 * self.elements * 4


def rep_dict(rep, traffic, peak, extra):
    """traffic: (bytes per call, elements), or (None, elements) for a figure without a traffic model."""
    bytes_per_call, elements = traffic
    d = {"real_time": rep.real_s * 1e6, "cpu_time": rep.cpu_s * 1e6, "items_per_second": elements / rep.real_s,
         "elements": float(elements), "minflt_per_call": rep.minflt, "majflt_per_call": rep.majflt}
    if bytes_per_call is None:
        d.update(extra)
        return d
    d.update(bytes_per_second=bytes_per_call / rep.real_s, bytes_per_call=float(bytes_per_call))
    if peak:
        d["bw_util"] = bytes_per_call / rep.real_s / peak
        d["peak_bytes_per_second"] = peak
    d.update(extra)
    return d


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="reports/out/peer_bench.json")
    p.add_argument("--matrix", default=str(ROOT / "matrices" / "bench" / "bench.yaml"))
    p.add_argument("--peers", default=str(peer_impls.PEERS_PATH))
    p.add_argument("--sweep", default=str(sweep.SWEEP_PATH), help="the size sweep and per-call settings")
    p.add_argument("--device", default="cpu", help="where the ops run: cpu (default), cuda or cuda:N")
    p.add_argument("--parts", help="comma-separated subset of " + ",".join(PARTS) + " (default: all; on a GPU "
                   "cases,sweep: per_call is the host's figure)")
    p.add_argument("--profile", choices=_PROFILES, default=os.environ.get("CROSSDEV_BENCH_PROFILE") or "default")
    p.add_argument("--filter", help="run only cases whose name matches this regular expression (the triad always runs)")
    p.add_argument("--impls", default=",".join(ALL_IMPLS), help="comma-separated subset of " + ",".join(ALL_IMPLS))
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.1, help="seconds per repetition (like --benchmark_min_time)")
    p.add_argument("--compile-budget-seconds", type=float, default=0,
                   help="start no new torch.compile once compiling has taken this long (0: no limit)")
    p.add_argument("--no-compile", action="store_true", help="leave out the torch.compile peer")
    p.add_argument("--cache-dir", help="TORCHINDUCTOR_CACHE_DIR (compiled kernels are reused across runs)")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    p.add_argument("--cpus", help="pin the process (and so every ATen thread) to these CPUs first, e.g. 0,1 or 0-3")
    p.add_argument("--build-dir", default=os.environ.get("CROSSDEV_BUILD_DIR", str(ROOT / "build")))
    p.add_argument("--merge-into", metavar="BENCH.json",
                   help="also merge the results into this crossdev_bench JSON (same names replace; context keys "
                        "become crossdev_peers_*)")
    p.add_argument("--load-library", action="append", default=[], metavar="PATH",
                   help="torch.ops.load_library(PATH) before timing, e.g. kernels registered for crossdev's ops "
                        "(repeatable; ':'-separated lists too); recorded in the context as crossdev_load_library")
    args = p.parse_args(argv)
    if args.repetitions < 1 or args.min_time <= 0 or args.compile_budget_seconds < 0 or args.threads < 0:
        p.error("--repetitions >= 1, --min-time > 0, --compile-budget-seconds >= 0 and --threads >= 0 are required")
    impls = [i.strip() for i in args.impls.split(",") if i.strip()]
    bad = [i for i in impls if i not in ALL_IMPLS]
    if bad or not impls:
        p.error(f"--impls: unknown {', '.join(bad) or '(empty)'}; expected a subset of {','.join(ALL_IMPLS)}")
    args.impls = impls
    args.device_kind = device_kind(args.device)
    if args.device_kind is None:
        p.error(f"--device: '{args.device}'; expected cpu, cuda or cuda:N")
    if args.parts is None:
        args.parts = ",".join(PARTS if args.device_kind == "cpu" else GPU_PARTS)
    parts = [x.strip() for x in args.parts.split(",") if x.strip()]
    bad = [x for x in parts if x not in PARTS]
    if bad or not parts:
        p.error(f"--parts: unknown {', '.join(bad) or '(empty)'}; expected a subset of {','.join(PARTS)}")
    if "per_call" in parts and args.device_kind != "cpu":
        p.error("--parts per_call: the per-call figure is the host's (one CPU thread); run it with --device cpu")
    args.parts = parts
    args.load_library = library_paths(args.load_library)
    if args.cpus:
        try:
            args.cpus = host_config.parse_cpu_list(args.cpus)
        except ValueError as exc:
            p.error(f"--cpus: {exc}")
    return args


def library_paths(values):
    """--load-library's values as absolute paths, in order: each value may be a ':'-separated list (as
    `crossdev run --load-library` takes them); empty entries are dropped."""
    return [os.path.abspath(p) for value in values for p in value.split(":") if p]


def load_libraries(torch, paths):
    """torch.ops.load_library each path, in order; None, or the error message of the first that fails."""
    for path in paths:
        try:
            torch.ops.load_library(path)
        except Exception as exc:  # noqa: BLE001  (OSError from dlopen, or a registration error from the library)
            return f"--load-library {path}: cannot load it: {exc}"
    return None


def fail(message):
    print(f"peer_bench.py: error: {message}", file=sys.stderr)
    return 2


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    if args.cpus:
        try:
            os.sched_setaffinity(0, args.cpus)  # before torch starts its thread pool: the threads inherit it
        except (AttributeError, OSError) as exc:
            return fail(f"--cpus: cannot pin to {sorted(args.cpus)}: {exc}")
    if args.cache_dir:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(pathlib.Path(args.cache_dir).resolve())
    try:
        cases = load_cases(args.matrix, args.profile, args.device_kind) if "cases" in args.parts else []
        peers = peer_impls.load_peers(args.peers)
        sweep_spec, per_call_spec = sweep.load(args.sweep, ALL_IMPLS)
        name_filter = re.compile(args.filter) if args.filter else None
    except InputError as exc:
        return fail(str(exc))
    except re.error as exc:
        return fail(f"--filter: {exc}")

    sys.path.insert(0, str(pathlib.Path(args.build_dir) / "python"))
    import torch
    import crossdev
    import timing
    from op_formulas import FORMULAS
    try:
        import crossdev.bench  # noqa: F401  (its own module, crossdev._bench: built with the benchmarks only)
    except ImportError as e:
        return fail(str(e))
    failure = load_libraries(torch, args.load_library)  # after crossdev's own ops, before anything is timed
    if failure:
        return fail(failure)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device_kind == "cuda" and not torch.cuda.is_available():
        return fail(f"--device {args.device}: torch {torch.__version__} sees no CUDA device")
    device = torch.device(args.device)
    clock = timing.clock_for(torch, device)
    kind = args.device_kind
    sweep_notes = []
    if "sweep" in args.parts:
        cases, sweep_notes = add_sweep(cases, sweep_spec, crossdev.bench.layouts())
        for note in sweep_notes:
            print(f"sweep: {note}", file=sys.stderr)

    def impls_of(case):
        return [i for i in args.impls if case.impls is None or i in case.impls]

    selected = []
    for case in cases:
        names = [name_of(case.op, i, case.dtype, case.label, case.pass_name, kind) for i in impls_of(case)]
        if name_filter and not any(name_filter.search(n) for n in names):
            continue
        selected.append(case)
    triads = {c.label: Triad(torch, c.elements, device) for c in sorted(selected, key=lambda c: c.elements)}
    half = max(1, (args.repetitions + 1) // 2)
    for triad in triads.values():
        triad.run_half(timing, half, args.min_time, clock)

    results, not_run, failed, compile_spent = Results(), [], False, 0.0
    for case in selected:
        op, dtype, elements, label, pass_name, seed = case[:6]
        repetitions, min_time = case.repetitions or args.repetitions, case.min_time or args.min_time
        impls = [i for i in impls_of(case)
                 if i in (peer_impls.FWD_IMPLS if pass_name == "fwd" else peer_impls.FWD_BWD_IMPLS)
                 and not (name_filter and not name_filter.search(name_of(op, i, dtype, label, pass_name, kind)))]
        compile_ok = not args.no_compile and not (args.compile_budget_seconds and compile_spent > args.compile_budget_seconds)
        try:
            inputs = peer_impls.CaseInputs(torch, crossdev, op, elements, dtype, seed, pass_name, device)
            steps, missing = peer_impls.build_steps(inputs, peers, FORMULAS, impls, compile_ok)
            traffic = crossdev.bench.traffic(op, {n: t.detach() for n, t in inputs.tensors.items()}, inputs.out, pass_name)
        except Exception as exc:  # noqa: BLE001  (reported per case, like SkipWithError)
            for impl in impls:
                results.error(name_of(op, impl, dtype, label, pass_name, kind), f"{type(exc).__name__}: {exc}")
            failed = True
            print(f"{op}/{dtype}/{label}/{pass_name}: ERROR {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        for impl, reason in missing.items():
            not_run.append(f"{name_of(op, impl, dtype, label, pass_name, kind)} ({reason})")
        for impl, step in steps.items():
            name = name_of(op, impl, dtype, label, pass_name, kind)
            try:
                m = timing.measure(step, repetitions, min_time, clock=clock)
            except Exception as exc:  # noqa: BLE001
                failed = True
                results.error(name, f"{type(exc).__name__}: {exc}")
                print(f"{name}: ERROR {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            extra = {"compile_seconds": m.first_call_s} if impl == "compile" else {}
            if impl == "compile":
                compile_spent += m.first_call_s
            results.add(name, m, traffic, extra)
            reals = [r.real_s for r in m.reps]
            cv = statistics.stdev(reals) / statistics.mean(reals) if len(reals) > 1 else 0.0
            print(f"{name:58s} {statistics.median(reals) * 1e3:9.3f} ms  cv {cv:5.1%}  "
                  f"minflt/call {statistics.median(r.minflt for r in m.reps):8.1f}", file=sys.stderr)
        del steps, inputs
    if "per_call" in args.parts:
        wanted = (lambda name: bool(name_filter.search(name))) if name_filter else (lambda name: True)
        ops = crossdev.ops.op_names()
        for name, m, elements in per_call.measure(torch, crossdev, timing, per_call_spec, ops, wanted):
            if isinstance(m, str):
                failed = True
                results.error(name, m)
                print(f"{name}: ERROR {m}", file=sys.stderr)
                continue
            results.add(name, m, (None, elements), {"aten_threads": float(per_call_spec.threads)})
            reals = [r.real_s for r in m.reps]
            print(f"{name:58s} {statistics.median(reals) * 1e6:9.2f} us  min {min(reals) * 1e6:7.2f} us  "
                  f"({per_call_spec.threads} thread)", file=sys.stderr)
    for triad in triads.values():
        triad.run_half(timing, args.repetitions - half if args.repetitions > 1 else 1, args.min_time, clock)

    # Entries, now that every triad repetition is in: bw_util divides by the same-size triad's median.
    peaks = {label: statistics.median(3 * t.elements * 4 / r.real_s for r in t.measured["aten.out"].reps)
             for label, t in triads.items()}
    benchmarks, family = [], 0
    for label, triad in triads.items():
        for impl, m in triad.measured.items():
            name = name_of(TRIAD_OP, impl, "float32", label, "fwd", kind)
            reps = [rep_dict(r, (triad.bytes_per_call(), triad.elements), peaks[label], {}) for r in m.reps]
            benchmarks += gbench_json.entries(name, family, m.iterations, reps, "real cpu")
            family += 1
    for name, m, traffic, extra in results.rows:
        if isinstance(m, str):
            benchmarks.append(gbench_json.error_entry(name, family, m))
        else:
            peak = peaks.get(name.split("/")[3])
            reps = [rep_dict(r, traffic, peak, extra) for r in m.reps]
            benchmarks += gbench_json.entries(name, family, m.iterations, reps, "real cpu")
        family += 1

    largest = max(triads, key=lambda lbl: triads[lbl].elements) if triads else None
    context = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": f"{sys.executable} {pathlib.Path(__file__).name}",
        "num_cpus": os.cpu_count() or 0, "mhz_per_cpu": 0, "cpu_scaling_enabled": False, "caches": [],
        "load_avg": list(os.getloadavg()) if hasattr(os, "getloadavg") else [],
        "library_build_type": "release",
        **host_config.context(torch),
        "crossdev_driver": "bench/python/peer_bench.py",
        "crossdev_profile": args.profile,
        "crossdev_matrix": str(args.matrix),
        "crossdev_peers": str(args.peers),
        "crossdev_python": platform.python_version(),
        "crossdev_execution": "real",
        "crossdev_repetitions": str(args.repetitions),
        "crossdev_min_time_s": f"{args.min_time:g}",
        f"crossdev_peak_{kind}_bytes_per_second": str(peaks[largest]) if largest else "0",
        f"crossdev_peak_{kind}_method": (f"STREAM triad a = b + 3c (torch.add out=) at {largest} fp32 elements, median of "
                                     f"{len(triads[largest].measured['aten.out'].reps)} repetitions, half before and "
                                     "half after the ops, same process and thread pool" if largest else "none"),
        **{f"crossdev_triad_{label}_bytes_per_second": str(v) for label, v in peaks.items()},
        "crossdev_compile_seconds": f"{compile_spent:.1f}",
        "crossdev_inductor_cache": os.environ.get("TORCHINDUCTOR_CACHE_DIR", "torch's default"),
        "crossdev_wall_seconds": f"{time.perf_counter() - started:.1f}",
        "crossdev_not_run": "; ".join(not_run),
        "crossdev_parts": ",".join(args.parts),
        "crossdev_sweep": str(args.sweep),
        "crossdev_sweep_notes": "; ".join(sweep_notes),
        "crossdev_per_call_threads": str(per_call_spec.threads),
        "crossdev_device": str(device),
        "crossdev_device_name": torch.cuda.get_device_name(device) if kind == "cuda" else platform.processor() or "cpu",
        "crossdev_timing_clock": clock.name,
        "crossdev_load_library": ":".join(args.load_library),
    }
    doc = {"context": context, "benchmarks": benchmarks}
    gbench_json.write(args.out, doc)
    if args.merge_into:
        import json
        try:
            target = json.loads(pathlib.Path(args.merge_into).read_text(encoding="utf-8"))
            if not isinstance(target, dict) or not isinstance(target.get("benchmarks"), list):
                raise ValueError("no `benchmarks` list")
        except (OSError, ValueError) as exc:
            return fail(f"{args.merge_into}: cannot merge into it: {exc}")
        gbench_json.write(args.merge_into, gbench_json.merge(target, doc, "crossdev_peers_"))
    print(f"peer_bench.py: {len(benchmarks)} entries -> {args.out} in {time.perf_counter() - started:.0f} s "
          f"(compile {compile_spent:.0f} s)" + (f"; not run: {len(not_run)}" if not_run else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
