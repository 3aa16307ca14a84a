"""`crossdev merge`: several runners' (or shards') bundles into one bundle set, a file that
`crossdev report`, `crossdev gate`, `crossdev bench-gate` and `crossdev diff` accept wherever they
accept a bundle.

usage: crossdev merge BUNDLE... --out FILE

Each BUNDLE is a result bundle (bundle.json from `crossdev run`, gzip-compressed or not) or a bundle
set from an earlier merge, whose bundles are taken one by one (a merge of merges is flat). Every
bundle is checked as `crossdev report` checks it and kept unchanged, with the file it came from, in
a "crossdev.bundle_set" (docs/bundle-schema.md). Readers then see each bundle as if it had been
named on their own command line: one runner each in the report, every case in the gate.

Exit codes: 0 FILE written; 2 bad input: a BUNDLE is missing or not a valid bundle (each bad file is
named on stderr, with what was expected) or FILE cannot be written. On exit 2 FILE is not written:
a merge job must not publish a set that silently lacks a runner. FILE is replaced atomically.
"""
import json
import math
import sys
import time
from typing import Any, List

from crossdev._command import ArgumentParser, guarded
from crossdev.report.atomic import write_text_atomically
from crossdev.report.bundle import Bundle, BundleError, load_bundles
from crossdev.report.schema import BUNDLE_SET_NAME

EXIT_OK, EXIT_BAD_INPUT = 0, 2
PROG = "crossdev merge"
SET_VERSION = 1




def parse_args(argv):
    p = ArgumentParser(prog=PROG, description="Combine runners' bundles into one bundle set that crossdev report, "
                                       "gate, bench-gate and diff read as they read bundles.")
    p.add_argument("bundles", nargs="+", metavar="BUNDLE",
                   help="result bundle(s) (bundle.json, gzip-compressed or not) or earlier bundle set(s)")
    p.add_argument("--out", required=True, metavar="FILE", help="the bundle set to write (replaced atomically)")
    return p.parse_args(argv)


def _dump(value: Any) -> str:
    """JSON text for a loaded bundle, where json.dumps would refuse: an integer part too large for a float
    (1e999 in a bundle, valid, reads as an infinity) is written back as 1e999, which reads the same."""
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):  # the loader rejects NaN, so this cannot come from a valid bundle
            raise ValueError("a NaN in a bundle that passed validation")
        return "1e999" if value > 0 else "-1e999"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_dump(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _bundle_text(doc: Any) -> str:
    try:
        return json.dumps(doc, ensure_ascii=False, allow_nan=False)
    except ValueError:  # an infinity (1e999): the slow writer spells it as the input did
        return _dump(doc)


def bundle_set_text(bundles: List[Bundle]) -> str:
    """The crossdev.bundle_set document: an envelope, then one line per bundle."""
    import crossdev  # the package's version; `import crossdev` loads neither torch nor the compiled core

    head = {
        "schema": BUNDLE_SET_NAME,
        "schema_version": SET_VERSION,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tool": {"name": "crossdev", "version": str(getattr(crossdev, "__version__", "unknown"))},
    }
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "bundles": [']
    entries = [f' {{"source": {json.dumps(b.source, ensure_ascii=False)}, "bundle": {_bundle_text(b.doc)}}}'
               for b in bundles]
    return "\n".join(lines + [",\n".join(entries), "]}"]) + "\n"



def run(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    bundles: List[Bundle] = []
    bad = 0
    for path in args.bundles:
        try:
            bundles.extend(load_bundles(path))
        except BundleError as e:
            bad += 1
            print(f"{PROG}: error: {e}", file=sys.stderr)
    if bad:
        print(f"{PROG}: {bad} of {len(args.bundles)} input file(s) unusable: {args.out} not written", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        write_text_atomically(args.out, bundle_set_text(bundles))
    except OSError as e:
        print(f"{PROG}: error: cannot write {e.filename or args.out}: {e.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    cases = sum(len(b.cases) for b in bundles)
    print(f"merge: {args.out} ({len(bundles)} bundle(s) from {len(args.bundles)} file(s), {cases} case(s))")
    return EXIT_OK


main = guarded(run, PROG, "crossdev merge")


if __name__ == "__main__":
    sys.exit(main())
