#!/usr/bin/env python3
"""Merge crossdev result bundles and write DIR/index.html, DIR/summary.md and DIR/junit.xml.

usage: python3 reports/render.py BUNDLE... --out DIR [--history BUNDLE...] [--title TEXT]

Exit codes: 0 every input bundle was usable and the report was written; 2 bad input: a bundle
(or history bundle) is missing, truncated, not JSON or not schema-valid. Its error names the
file and is printed on stderr and shown in every output; the usable bundles are still merged and
the report is still written. Case failures do not change the exit code: gating is ci/gate.py's job.
"""
import argparse
import sys
import traceback
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `reports` importable, not reports/ itself
    _root = str(Path(__file__).resolve().parent.parent)
    sys.path[:] = [_root] + [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from reports.atomic import write_set_atomically  # noqa: E402
from reports.junit import render_junit  # noqa: E402
from reports.merge import merge  # noqa: E402
from reports.summary_md import render_markdown  # noqa: E402
from reports.views.page import render_page  # noqa: E402

EXIT_OK, EXIT_BAD_INPUT = 0, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 already; keep its message, add the usage line
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def parse_args(argv):
    p = _Parser(prog="render.py", description=__doc__.split("\n\n")[0])
    p.add_argument("bundles", nargs="+", metavar="BUNDLE", help="result bundle(s) (bundle.json), one per runner")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    p.add_argument("--history", nargs="*", default=[], metavar="BUNDLE",
                   help="earlier bundles for the trends section (oldest first)")
    p.add_argument("--title", default="crossdev conformance report")
    return p.parse_args(argv)


def main(argv=None) -> int:
    """The command line: run(), and an unexpected exception exits 2, never with a traceback's exit 1."""
    try:
        return run(argv)
    except Exception:  # noqa: BLE001  (a bug must not pass as a verdict; tests call run() and see it)
        print("render.py: internal error (a bug in reports/: please report it with the input bundles):\n"
              + traceback.format_exc(limit=-3), file=sys.stderr)
        return EXIT_BAD_INPUT


def run(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report = merge(args.bundles, args.history)
    for err in report.errors:
        print(f"render.py: error: {err.message}", file=sys.stderr)

    out = Path(args.out)
    outputs = {
        "index.html": render_page(report, args.title),
        "summary.md": render_markdown(report),
        "junit.xml": render_junit(report),
    }
    try:
        write_set_atomically((out / name, text) for name, text in outputs.items())
    except OSError as e:
        print(f"render.py: error: cannot write {e.filename or out}: {e.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    merged = len(report.runners)
    print(f"report: {out / 'index.html'} ({merged} bundle(s) merged, {len(report.errors)} unusable)")
    return EXIT_BAD_INPUT if report.errors else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
