#!/usr/bin/env python3
"""The OpInfo sweep's three figures (issue 24, "Performance"), measured in one run of `make report`
(ci/report.sh), never in a test:

  - wall time of the float32 forward+backward sweep of every OpInfo, <= 16 samples each, on one
    simulated device, through the harness (`crossdev run` on an `opinfo` row: engine, Python worker,
    comparator, records): target <= 300 s on the 2-core reference machine;
  - the harness's overhead: that wall time over a bare loop running the same samples with torch alone
    (bench/python/opinfo_bare_loop.py), measured in the same run: target <= 1.5x;
  - the sweep's peak RSS: the largest ru_maxrss of the harness's processes (the Python worker's; the
    kernel keeps the largest over every waited-for descendant in RUSAGE_CHILDREN): target <= 2 GiB.

Both sides start a fresh interpreter and load op_db, so start-up costs are on both. Each entry's
real_time is the wall time (what the targets read) and its cpu_time the CPU seconds of the side's whole
process tree (RUSAGE_CHILDREN), the figure a loaded machine distorts least. The results are
Google Benchmark JSON entries (bench/python/gbench_json.py) named opinfo_sweep/<impl>/float32/16/sim/fwd_bwd
with impl `harness` and `bare`; the harness's carries the counters peak_rss_bytes, cases and samples.
bench/summarize.py's targets opinfo_sweep_wall, opinfo_sweep_overhead and opinfo_sweep_rss read them.

usage: opinfo_sweep_bench.py --out FILE [--merge-into BENCH.json] [--kind cuda] [--opinfo GLOB]
                             [--max-samples 16] [--python PY]
Exit codes: 0 figures written (a side that failed is an error entry), 2 bad input."""
import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gbench_json  # noqa: E402
from crossdev.child_process import describe_exit  # noqa: E402  how a child ended, in the engine's words

NAME = "opinfo_sweep/{impl}/float32/16/sim/fwd_bwd"  # size field: at most 16 samples per OpInfo


def sweep_row(kind: str, opinfo: str, max_samples: int) -> str:
    return ("suite: opinfo\ncases:\n"
            f"  - {{id: opinfo.bench, source: \"issue 24 performance\", intent: \"the sweep's wall time\", "
            f"opinfo: \"{opinfo}\", devices: [{kind}], dtypes: [float32], checks: [forward, backward], "
            f"max_samples: {max_samples}}}\n")


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_timed(cmd, env=None):
    """(wall seconds, CPU seconds of the command's process tree, completed process, peak RSS in bytes of
    every descendant waited for so far). The CPU time is what a loaded machine distorts least."""
    cpu_before, started = _children_cpu_s(), time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    wall = time.perf_counter() - started
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # Linux: KiB
    return wall, _children_cpu_s() - cpu_before, done, rss


def harness(python: str, kind: str, opinfo: str, max_samples: int, workdir: pathlib.Path):
    matrix = workdir / "matrix"
    matrix.mkdir()
    (matrix / "opinfo_bench.yaml").write_text(sweep_row(kind, opinfo, max_samples), encoding="utf-8")
    bundle = workdir / "bundle.json"
    cmd = [python, "-m", "crossdev", "run", "--matrix", str(matrix), "--simulate", kind, "--quiet",
           "--row-timeout", "7200", "--out", str(bundle)]
    wall, cpu, done, rss = run_timed(cmd)
    if not bundle.exists():
        return None, f"crossdev run {describe_exit(done.returncode)} without a bundle"
    cases = json.loads(bundle.read_text(encoding="utf-8"))["cases"]
    ran = [c for c in cases if c.get("execution") != "not_run"]
    samples = sum(int(c.get("metrics", {}).get("samples", 0)) for c in ran)
    return {"real_time": wall * 1e6, "cpu_time": cpu * 1e6, "peak_rss_bytes": float(rss),
            "cases": float(len(ran)), "samples": float(samples)}, None


def bare(python: str, kind: str, opinfo: str, max_samples: int):
    here = pathlib.Path(__file__).resolve().parent
    wall, cpu, done, _ = run_timed([python, str(here / "opinfo_bare_loop.py"), "--kind", kind, "--opinfo", opinfo,
                               "--max-samples", str(max_samples)])
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    if done.returncode != 0 or not lines:
        return None, f"the bare loop {describe_exit(done.returncode)}"
    counts = json.loads(lines[-1])
    return {"real_time": wall * 1e6, "cpu_time": cpu * 1e6, "cases": float(counts["cases"]),
            "samples": float(counts["samples"])}, None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="write the Google Benchmark JSON here")
    p.add_argument("--merge-into", metavar="BENCH.json", help="also merge the entries into this bench JSON")
    p.add_argument("--kind", default="cuda", help="the simulated device kind (default cuda: no dtype limits)")
    p.add_argument("--opinfo", default="*", help="OpInfo glob (default every OpInfo)")
    p.add_argument("--max-samples", type=int, default=16)
    p.add_argument("--python", default=sys.executable, help="the interpreter crossdev is installed in")
    args = p.parse_args(argv)
    if args.max_samples <= 0:
        print("opinfo_sweep_bench.py: error: --max-samples must be > 0", file=sys.stderr)
        return 2
    entries = []
    with tempfile.TemporaryDirectory(prefix="crossdev-opinfo-bench-") as tmp:
        # The harness first: RUSAGE_CHILDREN's ru_maxrss only grows, so read before the bare loop runs.
        for family, (impl, (figures, error)) in enumerate(
                [("harness", harness(args.python, args.kind, args.opinfo, args.max_samples, pathlib.Path(tmp))),
                 ("bare", bare(args.python, args.kind, args.opinfo, args.max_samples))]):
            name = NAME.format(impl=impl)
            entries += (gbench_json.entries(name, family, 1, [figures], f"{args.kind} simulated") if figures
                        else [gbench_json.error_entry(name, family, error)])
    doc = {"context": {"crossdev_opinfo_sweep_kind": args.kind, "crossdev_opinfo_sweep_opinfo": args.opinfo,
                       "crossdev_opinfo_sweep_max_samples": args.max_samples, "host_cpus": os.cpu_count()},
           "benchmarks": entries}
    gbench_json.write(args.out, doc)
    if args.merge_into:
        try:
            target = json.loads(pathlib.Path(args.merge_into).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            print(f"opinfo_sweep_bench.py: error: {args.merge_into}: cannot merge into it: {exc}", file=sys.stderr)
            return 2
        gbench_json.write(args.merge_into, gbench_json.merge(target, doc, "crossdev_opinfo_sweep_"))
    for e in entries:
        print(e["name"], f"{e['real_time'] / 1e6:.1f} s wall, {e['cpu_time'] / 1e6:.1f} s CPU" if "real_time" in e
              else e.get("error_message"),
              f"peak RSS {e['peak_rss_bytes'] / 2**30:.2f} GiB" if "peak_rss_bytes" in e else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
