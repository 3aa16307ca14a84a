"""`crossdev gate`: the CI verdict over result bundles from one or more runners.

usage: crossdev gate BUNDLE... [--baseline-bench FILE] [--bench-threshold 0.05]

A BUNDLE is a result bundle or a bundle set written by `crossdev merge` (each of its bundles counts).

Exit codes:
  0  every bundle is usable and no case gates (xfail and skip never gate)
  1  a case is fail, xpass (an expected failure passed: the expectation is stale), error or
     crash, two runners' outputs on the same samples differ beyond the tolerance (cross_machine opinfo
     rows, docs/opinfo.md), or `crossdev bench-gate` reports a significant performance regression
  2  bad input: a bundle is missing, truncated, not JSON, not schema-valid or has no cases (named on
     stderr), or --baseline-bench was given but cannot be used (a missing file, or no bundle embeds
     benchmark results). Bad input wins over 1: the verdict would be incomplete. Failures in the
     usable bundles are still listed.

Performance gating is delegated to `crossdev bench-gate` (crossdev.bench_gate): with --baseline-bench,
the bundle files that embed benchmark results are handed to
`crossdev bench-gate --baseline FILE --threshold T BUNDLE...` (a Mann-Whitney U test plus the
threshold); its exit code (0/1/2) counts as this gate's.
"""
import sys
from pathlib import Path
from typing import List

import crossdev.bench_gate as bench_gate  # not `from crossdev import`: that asks the lazy package first
from crossdev._command import ArgumentParser, guarded
from crossdev.report.merge import InputError, Report, merge

EXIT_PASS, EXIT_GATED, EXIT_BAD_INPUT = 0, 1, 2
PROG = "crossdev gate"




def parse_args(argv):
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("bundles", nargs="+", metavar="BUNDLE",
                   help="result bundle(s), one per runner, or bundle set(s) from `crossdev merge`")
    p.add_argument("--baseline-bench", metavar="FILE", help="Google Benchmark JSON of the baseline run")
    p.add_argument("--bench-threshold", type=float, default=0.05, metavar="FRACTION",
                   help="slowdown that counts as a regression (default 0.05 = 5%%)")
    args = p.parse_args(argv)
    if not 0 < args.bench_threshold < 10:
        p.error(f"--bench-threshold: expected a fraction such as 0.05, got {args.bench_threshold}")
    return args


def parity_verdict(report: Report) -> int:
    gated = report.gating_cases()
    for runner, case in gated:
        where = f"{case.get('file', '')}:{case.get('line', 0)}"
        print(f"GATE {runner.label}: {case['id']}: {case['status']} ({case['execution']}) at {where}: "
              f"{case.get('message', '')}")
    pairs = report.cross_machine.failing()  # two runners' outputs on the same samples (docs/opinfo.md)
    for pair, case in pairs:
        print(f"GATE {pair.label}: {case.case_id}: {case.status} across machines ({pair.execution}): "
              f"{case.failing[0] if case.failing else ''}")
    totals = report.totals()
    print(f"gate: {len(report.runners)} bundle(s), {totals.total} case(s): {totals.real_pass} passed on real devices, "
          f"{totals.simulated_pass} passed simulated, {totals.by_status['xfail']} xfail (allowed), "
          f"{len(gated)} gating" + (f"; {len(pairs)} cross-machine case(s) gating" if pairs else ""))
    return EXIT_GATED if gated or pairs else EXIT_PASS


def bench_verdict(report: Report, baseline: str, threshold: float) -> int:
    if not Path(baseline).is_file():
        what = "a directory" if Path(baseline).is_dir() else "no such file"
        print(f"{PROG}: error: {baseline}: {what}: --baseline-bench expected a Google Benchmark JSON file "
              "(--benchmark_out_format=json) or a crossdev bundle that embeds one", file=sys.stderr)
        return EXIT_BAD_INPUT
    # The files (a bundle, or the bundle set that holds it) of the runners that embed benchmarks.
    with_bench = list(dict.fromkeys(r.file for r in report.runners if r.benchmarks))
    if not with_bench:
        # A baseline was asked for: a run without benchmarks cannot show it did not regress.
        print(f"{PROG}: error: --baseline-bench given but no bundle embeds benchmark results: "
              "performance cannot be gated", file=sys.stderr)
        return EXIT_BAD_INPUT
    # bench_gate reads the files itself, so its messages name the real files.
    argv = ["--baseline", baseline, "--threshold", str(threshold), *with_bench]
    try:
        rc = bench_gate.main(argv)
    except SystemExit as e:  # its usage errors; the arguments are ours, so this is not expected
        rc = e.code if isinstance(e.code, int) else EXIT_BAD_INPUT
    return rc if rc in (EXIT_PASS, EXIT_GATED, EXIT_BAD_INPUT) else EXIT_BAD_INPUT


def empty_bundle_errors(report: Report) -> List[InputError]:
    """A bundle with no cases is bad input: an empty selection ran nothing and proves nothing."""
    return [InputError(path=r.path, message=f"{r.path}: the bundle has no cases (expected at least one: an empty "
                                            "selection runs nothing and proves nothing)")
            for r in report.runners if not r.cases]



def run(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report = merge(args.bundles)
    report.errors += empty_bundle_errors(report)
    for err in report.errors:
        print(f"{PROG}: error: {err.message}", file=sys.stderr)
    verdicts = [parity_verdict(report)]
    if args.baseline_bench:
        verdicts.append(bench_verdict(report, args.baseline_bench, args.bench_threshold))
    if report.errors or EXIT_BAD_INPUT in verdicts:
        print("gate: BAD INPUT (exit 2)")
        return EXIT_BAD_INPUT
    if EXIT_GATED in verdicts:
        print("gate: FAIL (exit 1)")
        return EXIT_GATED
    print("gate: PASS (exit 0)")
    return EXIT_PASS


main = guarded(run, PROG, "the gate")


if __name__ == "__main__":
    sys.exit(main())
