#!/usr/bin/env python3
"""torch.compile peer of crossdev_bench: the same ops, sizes and inputs, compiled by Inductor.

usage: python3 bench/python/compile_bench.py [--out FILE] [--bench-json BENCH.json]
           [--matrix matrices/bench/bench.yaml] [--profile default|long] [--filter REGEX]
           [--repetitions N] [--min-time SECONDS] [--budget-seconds S] [--build-dir build]

Reads the `kind: op` rows of the bench matrix (CPU only: Inductor's CPU code generation), builds
each case's inputs with crossdev.bench.make_inputs (the ops' portable generator, identical bits to
the C++ bench), compiles bench/python/op_formulas.py with torch.compile(dynamic=False) and times
it. The output is Google Benchmark's JSON schema with names "op/compile/dtype/size/cpu/pass" and
the same counters (bytes_per_second and items_per_second from the same traffic model, bw_util
against the same peak when --bench-json names the C++ run), so reports and bench/summarize.py
show fused vs eager vs TorchScript vs torch.compile side by side.

Inductor compiles C++ for each new (op, dtype, shape, pass): tens of seconds each on a small
machine, cached in TORCHINDUCTOR_CACHE_DIR (--cache-dir) across runs. --budget-seconds stops
starting new cases once exceeded; the cases not run are listed in the context.
Exit codes: 0 ok, 1 a case failed to run, 2 bad input.
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import socket
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
IMPL_NAME = "compile"  # the implementation field of the benchmark name
_SIZE = re.compile(r"^([1-9][0-9]*)(K|M)?$")
_SIZE_MULTIPLIER = {None: 1, "K": 1024, "M": 1024 * 1024}
_PROFILES = ("default", "long")


class InputError(Exception):
    """Bad input (exit 2); the message names the file and, where known, the row."""


def parse_size(text, where):
    match = _SIZE.match(str(text))
    if not match:
        raise InputError(f"{where}: size '{text}': expected a positive element count such as 4096, 256K or 8M")
    return int(match.group(1)) * _SIZE_MULTIPLIER[match.group(2)], str(text)


def as_list(value):
    return value if isinstance(value, list) else [value]


def load_cases(matrix_path, profile):
    """(op, dtype, elements, size label, pass, seed) for every CPU op case of the selected profile."""
    import yaml
    try:
        doc = yaml.safe_load(pathlib.Path(matrix_path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{matrix_path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise InputError(f"{matrix_path}{line}: YAML syntax error: {exc}") from None
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
        if "cpu" not in as_list(row.get("devices", ["cpu", "cuda"])):
            continue
        for size in as_list(row.get("sizes", [])):
            elements, label = parse_size(size, where)
            for dtype in as_list(row.get("dtypes", ["float32"])):
                for pass_name in as_list(row.get("passes", ["fwd", "fwd_bwd"])):
                    cases.append((row["op"], str(dtype), elements, label, str(pass_name), int(row.get("seed", 0))))
    return cases


def peak_from_bench_json(path):
    try:
        doc = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read the crossdev_bench JSON: {exc}") from None
    context = doc.get("context", {}) if isinstance(doc, dict) else {}
    try:
        peak = float(context["crossdev_peak_cpu_bytes_per_second"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{path}: no context.crossdev_peak_cpu_bytes_per_second: not a crossdev_bench JSON") from None
    threads = context.get("crossdev_aten_threads")
    return peak, (int(threads) if threads else None), f"crossdev_bench stream triad ({path})"


def probe_peak(torch, trials=8, elements=16 << 20):
    """Fallback peak: the STREAM triad through ATen (a = b + 3 c), best of `trials`."""
    a, b, c = (torch.empty(elements), torch.ones(elements), torch.full((elements,), 2.0))
    torch.add(b, c, alpha=3.0, out=a)
    best = 0.0
    for _ in range(trials):
        start = time.perf_counter()
        torch.add(b, c, alpha=3.0, out=a)
        best = max(best, 3 * elements * 4 / (time.perf_counter() - start))
    return best, None, f"torch.add triad in compile_bench.py, best of {trials}"


class Case:
    def __init__(self, crossdev, torch, formulas, spec):
        self.op, self.dtype, self.elements, self.size_label, self.pass_name, self.seed = spec
        self.name = f"{self.op}/{IMPL_NAME}/{self.dtype}/{self.size_label}/cpu/{self.pass_name}"
        inputs = crossdev.bench.make_inputs(self.op, self.elements, self.dtype, "cpu", self.seed)
        self.scalars, self.training = inputs["scalars"], inputs["training"]
        self.names = sorted(inputs["tensors"])
        grads = set(crossdev.bench.grad_inputs(self.op)) if self.pass_name == "fwd_bwd" else set()
        self.tensors = [inputs["tensors"][n].detach().requires_grad_(n in grads) for n in self.names]
        formula, names, scalars, training = formulas[self.op], self.names, self.scalars, self.training

        def call(*tensors):
            return formula(dict(zip(names, tensors)), scalars, training)

        self.compiled = torch.compile(call, dynamic=False)
        self.torch = torch
        self.grad_out = None

    def step(self):
        out = self.compiled(*self.tensors)
        if self.pass_name == "fwd_bwd":
            if self.grad_out is None:
                self.grad_out = self.torch.ones_like(out)
            out.backward(self.grad_out)
            for t in self.tensors:
                t.grad = None
        return out


def time_case(case, repetitions, min_time):
    """Google Benchmark's scheme: grow the iteration count until a run lasts min_time, then repeat."""
    start = time.perf_counter()
    out = case.step()  # compiles
    compile_seconds = time.perf_counter() - start
    case.step()
    iterations = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(iterations):
            case.step()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time or iterations >= 1 << 20:
            break
        iterations = max(iterations + 1, int(iterations * min(10.0, 1.4 * min_time / max(elapsed, 1e-9))))
    runs = []
    for _ in range(repetitions):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(iterations):
            case.step()
        runs.append(((time.perf_counter() - t0) / iterations, (time.process_time() - c0) / iterations))
    return out, compile_seconds, iterations, runs


def entries_for(case, family_index, out, compile_seconds, iterations, runs, traffic, peak):
    bytes_per_call, elements = traffic
    common = {"family_index": family_index, "per_family_instance_index": 0, "run_name": case.name,
              "repetitions": len(runs), "threads": 1, "time_unit": "us"}
    entries = []
    for index, (real, cpu) in enumerate(runs):
        entry = dict(common, name=case.name, run_type="iteration", repetition_index=index, iterations=iterations,
                     real_time=real * 1e6, cpu_time=cpu * 1e6, bytes_per_second=bytes_per_call / real,
                     items_per_second=elements / real, bytes_per_call=float(bytes_per_call),
                     elements=float(elements), compile_seconds=compile_seconds, label="real cpu, torch.compile")
        if peak:
            entry["bw_util"] = bytes_per_call / real / peak
            entry["peak_bytes_per_second"] = peak
        entries.append(entry)
    if len(runs) > 1:  # aggregates, as --benchmark_repetitions adds them
        reals, cpus = [r for r, _ in runs], [c for _, c in runs]
        for agg, fn in (("mean", statistics.mean), ("median", statistics.median), ("stddev", statistics.stdev)):
            entries.append(dict(common, name=f"{case.name}_{agg}", run_type="aggregate", aggregate_name=agg,
                                aggregate_unit="time", iterations=len(runs), real_time=fn(reals) * 1e6,
                                cpu_time=fn(cpus) * 1e6))
        mean_real, mean_cpu = statistics.mean(reals), statistics.mean(cpus)
        entries.append(dict(common, name=f"{case.name}_cv", run_type="aggregate", aggregate_name="cv",
                            aggregate_unit="percentage", iterations=len(runs),
                            real_time=statistics.stdev(reals) / mean_real if mean_real else 0.0,
                            cpu_time=statistics.stdev(cpus) / mean_cpu if mean_cpu else 0.0))
    return entries


def context(torch, args, peak_source, peak, not_run):
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": f"{sys.executable} {pathlib.Path(__file__).name}",
        "num_cpus": os.cpu_count() or 0,
        "mhz_per_cpu": 0,
        "cpu_scaling_enabled": False,
        "caches": [],
        "load_avg": list(os.getloadavg()) if hasattr(os, "getloadavg") else [],
        "library_build_type": "release",
        "crossdev_profile": args.profile,
        "crossdev_matrix": str(args.matrix),
        "crossdev_aten_threads": str(torch.get_num_threads()),
        "crossdev_torch": torch.__version__,
        "crossdev_python": platform.python_version(),
        "crossdev_execution": "real",
        "crossdev_peak_cpu_bytes_per_second": str(peak or 0),
        "crossdev_peak_cpu_method": peak_source,
        "crossdev_not_run": "; ".join(not_run),
    }


def write_json(path, doc):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def merge_into(path, doc):
    """Appends the peer's benchmarks to a crossdev_bench JSON; its context gains crossdev_compile_* keys."""
    try:
        target = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
        benchmarks = target["benchmarks"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: cannot merge into it: {exc}") from None
    offset = 1 + max((b.get("family_index", -1) for b in benchmarks), default=-1)
    names = {b["name"] for b in doc["benchmarks"]}
    target["benchmarks"] = [b for b in benchmarks if b.get("name") not in names]  # a rerun replaces
    target["benchmarks"] += [dict(b, family_index=b["family_index"] + offset) for b in doc["benchmarks"]]
    context = target.setdefault("context", {})
    for key in ("crossdev_peak_cpu_method", "crossdev_not_run", "crossdev_torch"):
        context[key.replace("crossdev_", "crossdev_compile_", 1)] = doc["context"][key]
    write_json(path, target)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="reports/out/compile_bench.json")
    p.add_argument("--bench-json", help="crossdev_bench JSON: take the CPU peak and thread count from its context")
    p.add_argument("--matrix", default=str(ROOT / "matrices" / "bench" / "bench.yaml"))
    p.add_argument("--profile", choices=_PROFILES, default=os.environ.get("CROSSDEV_BENCH_PROFILE") or "default")
    p.add_argument("--filter", help="run only cases whose name matches this regular expression")
    p.add_argument("--repetitions", type=int, default=1)
    p.add_argument("--min-time", type=float, default=0.05, help="seconds per repetition (like --benchmark_min_time)")
    p.add_argument("--budget-seconds", type=float, default=0, help="start no new case after this long (0: no limit)")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (default: the C++ run's, else torch's)")
    p.add_argument("--build-dir", default=os.environ.get("CROSSDEV_BUILD_DIR", str(ROOT / "build")))
    p.add_argument("--cache-dir", help="TORCHINDUCTOR_CACHE_DIR (compiled kernels are reused across runs)")
    p.add_argument("--merge-into", metavar="BENCH.json",
                   help="also append the results to this crossdev_bench JSON (one file for the report bundle)")
    args = p.parse_args(argv)
    if args.repetitions < 1 or args.min_time <= 0 or args.budget_seconds < 0 or args.threads < 0:
        p.error("--repetitions >= 1, --min-time > 0, --budget-seconds >= 0 and --threads >= 0 are required")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.cache_dir:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(pathlib.Path(args.cache_dir).resolve())
    try:
        cases = load_cases(args.matrix, args.profile)
        name_filter = re.compile(args.filter) if args.filter else None
    except InputError as exc:
        print(f"compile_bench.py: error: {exc}", file=sys.stderr)
        return 2
    except re.error as exc:
        print(f"compile_bench.py: error: --filter: {exc}", file=sys.stderr)
        return 2

    sys.path.insert(0, str(pathlib.Path(args.build_dir) / "python"))
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import torch
    import crossdev
    from op_formulas import FORMULAS
    if not hasattr(crossdev, "bench"):
        print("compile_bench.py: error: this crossdev module was built without crossdev.bench "
              "(configure with CROSSDEV_BUILD_BENCH=ON)", file=sys.stderr)
        return 2

    try:
        peak, threads, peak_source = peak_from_bench_json(args.bench_json) if args.bench_json else (None, None, "")
    except InputError as exc:
        print(f"compile_bench.py: error: {exc}", file=sys.stderr)
        return 2
    if args.threads or threads:
        torch.set_num_threads(args.threads or threads)
    if peak is None:
        peak, _, peak_source = probe_peak(torch)

    started, benchmarks, not_run, failed = time.perf_counter(), [], [], False
    for family_index, spec in enumerate(cases):
        name = f"{spec[0]}/{IMPL_NAME}/{spec[1]}/{spec[3]}/cpu/{spec[4]}"
        if name_filter and not name_filter.search(name):
            continue
        if spec[0] not in FORMULAS:
            not_run.append(f"{name} (no formula in op_formulas.py)")
            continue
        if args.budget_seconds and time.perf_counter() - started > args.budget_seconds:
            not_run.append(f"{name} (budget of {args.budget_seconds:g} s spent)")
            continue
        try:
            case = Case(crossdev, torch, FORMULAS, spec)
            out, compile_seconds, iterations, runs = time_case(case, args.repetitions, args.min_time)
            traffic = crossdev.bench.traffic(case.op, dict(zip(case.names, case.tensors)), out.detach(), case.pass_name)
        except Exception as exc:  # noqa: BLE001  (reported per case, like SkipWithError)
            failed = True
            benchmarks.append({"name": name, "run_name": name, "run_type": "iteration", "family_index": family_index,
                               "per_family_instance_index": 0, "repetitions": args.repetitions,
                               "repetition_index": 0, "threads": 1, "error_occurred": True,
                               "error_message": f"{type(exc).__name__}: {exc}"})
            print(f"{name}: ERROR {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        benchmarks += entries_for(case, family_index, out, compile_seconds, iterations, runs, traffic, peak)
        best = min(r for r, _ in runs)
        print(f"{name:55s} {best * 1e6:12.1f} us  compile {compile_seconds:6.1f} s"
              + (f"  bw_util {traffic[0] / best / peak:.2f}" if peak else ""), file=sys.stderr)

    doc = {"context": context(torch, args, peak_source, peak, not_run), "benchmarks": benchmarks}
    write_json(args.out, doc)
    if args.merge_into:
        try:
            merge_into(args.merge_into, doc)
        except InputError as exc:
            print(f"compile_bench.py: error: {exc}", file=sys.stderr)
            return 2
    print(f"compile_bench.py: {len(benchmarks)} entries -> {args.out}"
          + (f"; not run: {len(not_run)}" if not_run else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
