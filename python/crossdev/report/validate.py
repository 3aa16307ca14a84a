"""Check result bundles against the crossdev.bundle schema (docs/bundle-schema.md).

usage: python -m crossdev.report.validate BUNDLE...
Prints "BUNDLE: ok (N cases)" or every problem as "BUNDLE: path: expected X, got Y". A bundle set
(`crossdev merge`) is valid when the set and every bundle in it are.
Exit codes: 0 every bundle is valid, 2 at least one is not (bad input). Case failures inside a
valid bundle are not a validation problem (see `crossdev gate`).
"""
import sys

from crossdev._command import guarded
from crossdev.report.bundle import BundleError, load_bundles

PROG = "crossdev.report.validate"



def run(argv=None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths or any(p in ("-h", "--help") for p in paths):
        print(__doc__.strip(), file=sys.stderr if not paths else sys.stdout)
        return 2 if not paths else 0
    bad = 0
    for path in paths:
        try:
            bundles = load_bundles(path)
        except BundleError as e:
            bad += 1
            for problem in e.problems:  # all of them, not just the first MAX_ERRORS_SHOWN
                print(f"{e.path}: {problem}", file=sys.stderr)
            continue
        if len(bundles) == 1 and bundles[0].file == bundles[0].path:
            bundle = bundles[0]
            print(f"{path}: ok ({len(bundle.cases)} cases, schema_version {bundle.doc['schema_version']})")
        else:
            cases = sum(len(b.cases) for b in bundles)
            print(f"{path}: ok (a bundle set: {len(bundles)} bundle(s), {cases} cases)")
    return 2 if bad else 0


main = guarded(run, PROG, "crossdev.report")


if __name__ == "__main__":
    sys.exit(main())
