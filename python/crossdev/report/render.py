"""`crossdev report`: one or more bundles into the offline HTML, Markdown and JUnit
(DIR/index.html, DIR/summary.md and DIR/junit.xml).

usage: crossdev report BUNDLE... --out DIR [--history BUNDLE...] [--title TEXT] [--gate-power FILE]
                      [--baseline FILE]

A BUNDLE is a result bundle (`crossdev run`'s bundle.json, gzip-compressed or not) or a bundle set
written by `crossdev merge`, whose bundles count as if each had been named here.

Exit codes: 0 every input bundle was usable and the report was written; 2 bad input: a bundle
(or history bundle) is missing, truncated, not JSON or not schema-valid. Its error names the
file and is printed on stderr and shown in every output; the usable bundles are still merged and
the report is still written. A --gate-power file (bench/python/gate_power_bench.py) that cannot be
read is exit 2 too, its error shown in its section (not in the conformance verdict). Case failures
do not change the exit code: gating is `crossdev gate`'s job.

--baseline FILE (what `crossdev bench-gate --baseline` reads: a bundle with benchmarks, a Google Benchmark
JSON file, or a bundle set holding one) compares every runner's benchmarks with FILE's by bench-gate's own
decision, shown near the top of the page and on each op's scaling chart. A regression does not change
the exit code (`crossdev bench-gate` gates); a FILE that cannot be read or compared is exit 2, its
message naming the file.
"""
import sys
from pathlib import Path

from crossdev._command import ArgumentParser, guarded
from crossdev.report.atomic import write_set_atomically
from crossdev.report.junit import render_junit
from crossdev.report.merge import merge
from crossdev.report.summary_md import render_markdown
from crossdev.report.views.page import render_page

EXIT_OK, EXIT_BAD_INPUT = 0, 2
PROG = "crossdev report"




def parse_args(argv):
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("bundles", nargs="+", metavar="BUNDLE",
                   help="result bundle(s) (bundle.json, one per runner) or bundle set(s) from `crossdev merge`")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    p.add_argument("--history", nargs="*", default=[], metavar="BUNDLE",
                   help="earlier bundles for the trends section (oldest first)")
    p.add_argument("--title", default="crossdev conformance report")
    p.add_argument("--gate-power", metavar="FILE",
                   help="bench/python/gate_power_bench.py's JSON: the section \"What this gate catches\"")
    p.add_argument("--baseline", metavar="FILE",
                   help="an earlier run's bundle (or Google Benchmark JSON): each benchmark's change, by bench-gate's "
                        "decision")
    return p.parse_args(argv)



def run(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report = merge(args.bundles, args.history, args.gate_power, args.baseline)
    extra = [e for e in (report.gate_power_error, report.baseline_error) if e is not None]
    for err in report.errors + extra:
        print(f"{PROG}: error: {err.message}", file=sys.stderr)

    out = Path(args.out)
    outputs = {
        "index.html": render_page(report, args.title),
        "summary.md": render_markdown(report),
        "junit.xml": render_junit(report),
    }
    try:
        write_set_atomically((out / name, text) for name, text in outputs.items())
    except OSError as e:
        print(f"{PROG}: error: cannot write {e.filename or out}: {e.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    merged = len(report.runners)
    print(f"report: {out / 'index.html'} ({merged} bundle(s) merged, {len(report.errors)} unusable)")
    return EXIT_BAD_INPUT if report.errors or extra else EXIT_OK


main = guarded(run, PROG, "crossdev.report")


if __name__ == "__main__":
    sys.exit(main())
