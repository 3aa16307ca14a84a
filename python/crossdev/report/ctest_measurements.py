"""Print a bundle's error and bandwidth figures as CTest measurements, for CDash (ci/dashboard.cmake).

usage: python -m crossdev.report.ctest_measurements BUNDLE...
CTest picks up <CTestMeasurement> tags from a test's output and CDash charts them per build:
  parity.<op>.<dtype>.<runner/kind>.max_ulp / .max_abs   worst error vs golden (scoreboard cell)
  bench.<benchmark name>.gbps / .bw_util                 achieved bandwidth and share of the measured peak
  cases.<runner>.real_pass / .simulated_pass / .gating   counts
Exit 0, or 2 when a bundle is unusable (named on stderr). It does not gate; `crossdev gate` does.
"""
import math
import sys

from xml.sax.saxutils import escape, quoteattr

from crossdev.report.bench import build_bench_table
from crossdev.report.merge import merge
from crossdev.report.parity import build_scoreboard


def measurement(name: str, value) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return f'<CTestMeasurement type="text/string" name={quoteattr(name)}>non-finite</CTestMeasurement>'
    return f'<CTestMeasurement type="numeric/double" name={quoteattr(name)}>{escape(repr(float(value)))}</CTestMeasurement>'


def lines(report):
    for runner in report.runners:
        c = report.counts(runner)
        for key, value in (("real_pass", c.real_pass), ("simulated_pass", c.simulated_pass), ("gating", c.gating)):
            yield measurement(f"cases.{runner.label}.{key}", value)
    board = build_scoreboard(report)
    if board:
        for (op, dtype, column), cell in sorted(board.cells.items()):
            golden = cell.refs.get("golden") or cell.refs.get("all references")
            if golden is None or not cell.ran:
                continue
            tag = f"parity.{op}.{dtype}.{column}" + (".SIMULATED" if cell.simulated else "")
            yield measurement(f"{tag}.max_ulp", golden.max_ulp)
            yield measurement(f"{tag}.max_abs", golden.max_abs)
    bench = build_bench_table(report)
    if bench:
        for (key, impl), point in sorted(bench.points.items(), key=lambda kv: kv[1].name):
            if point.bytes_per_second is not None:
                yield measurement(f"bench.{point.name}.gbps", point.bytes_per_second / 1e9)
            if point.bw_util is not None:
                yield measurement(f"bench.{point.name}.bw_util", point.bw_util)


def main(argv=None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    report = merge(paths)
    for err in report.errors:
        print(f"crossdev.report.ctest_measurements: error: {err.message}", file=sys.stderr)
    for line in lines(report):
        print(line)
    return 2 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
