#!/usr/bin/env python3
"""Check result bundles against the crossdev.bundle schema (docs/bundle-schema.md).

usage: python3 reports/validate.py BUNDLE...
Prints "BUNDLE: ok (N cases)" or every problem as "BUNDLE: path: expected X, got Y".
Exit codes: 0 every bundle is valid, 2 at least one is not (bad input). Case failures inside a
valid bundle are not a validation problem (see ci/gate.py).
"""
import sys
import traceback
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `reports` importable, not reports/ itself
    _root = str(Path(__file__).resolve().parent.parent)
    sys.path[:] = [_root] + [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from reports.bundle import BundleError, load_bundle  # noqa: E402


def main(argv=None) -> int:
    """The command line: run(), and an unexpected exception exits 2, never with a traceback's exit 1."""
    try:
        return run(argv)
    except Exception:  # noqa: BLE001  (tests call run() directly and see any bug)
        print("validate.py: internal error (a bug in reports/: please report it with the input bundles):\n"
              + traceback.format_exc(limit=-3), file=sys.stderr)
        return 2


def run(argv=None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths or any(p in ("-h", "--help") for p in paths):
        print(__doc__.strip(), file=sys.stderr if not paths else sys.stdout)
        return 2 if not paths else 0
    bad = 0
    for path in paths:
        try:
            bundle = load_bundle(path)
        except BundleError as e:
            bad += 1
            for problem in e.problems:  # all of them, not just the first MAX_ERRORS_SHOWN
                print(f"{e.path}: {problem}", file=sys.stderr)
            continue
        print(f"{path}: ok ({len(bundle.cases)} cases, schema_version {bundle.doc['schema_version']})")
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
