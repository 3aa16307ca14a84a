"""`crossdev diff`: do two result bundles say the same thing?

A refactoring must not change a verdict, a metric or a label, so CI (and issue 15's "the bundle is
identical before and after") compares the bundles of two runs with what legitimately changes from
run to run taken out:

  timings        duration_s, duration_us, ts_ms, total_us, the benchmarks section
  identity       created_utc, run_id, git_commit, tool.version, libtorch/cuda/compiler versions
  measurements   metrics that measure the process rather than the code (allocated_delta_mib), and the
                 warnings a case raised (details.warnings: a once-per-process warning lands in whichever
                 case ran first)
  places         the checkout's absolute path (--root-a/--root-b) and temp-file process ids

usage: crossdev diff BEFORE AFTER [--root-a DIR] [--root-b DIR] [--max-lines N]

BEFORE and AFTER are bundles, or bundle sets from `crossdev merge`: then the runners are paired by
their label (<device_kind>@<host>, see docs/bundle-schema.md) and each pair is compared.

Exit codes: 0 same, 1 different (the case ids that changed, appeared or disappeared, then a unified
diff of the normalised bundles on stdout), 2 bad input (a bundle crossdev.report cannot load, or a
usage error, on stderr).
"""
import argparse
import difflib
import json
import re
import sys

from crossdev.report.bundle import BundleError, load_bundles
from crossdev.report.merge import _assign_labels

PROG = "crossdev diff"

VOLATILE_KEYS = {"duration_s", "duration_us", "ts_ms", "total_us", "created_utc", "run_id", "git_commit",
                 "libtorch_version", "cuda_version", "compiler", "benchmarks"}
VOLATILE_METRICS = {"allocated_delta_mib"}
VOLATILE_DETAILS = {"warnings"}
_TEMP_PID = re.compile(r"(/tmp/crossdev_[a-z_]+?)_\d+(_\d+\.\w+)")


def normalise(doc, roots):
    def walk(value, key=None):
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if k in VOLATILE_KEYS or (key == "metrics" and k in VOLATILE_METRICS) or \
                        (key == "details" and k in VOLATILE_DETAILS):
                    continue
                out[k] = walk(v, k)
            return out
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str):
            for root in roots:
                value = value.replace(root, "<root>/")
            return _TEMP_PID.sub(r"\1_<pid>\2", value)
        return value

    doc = walk(doc)
    doc.get("tool", {}).pop("version", None)
    doc["cases"] = sorted(doc.get("cases", []), key=lambda c: c.get("id", ""))
    return doc


def case_changes(a, b, runner=""):
    """'changed: ID' / 'only in BEFORE: ID' / 'only in AFTER: ID' lines, by case id."""
    at = f"{runner}: " if runner else ""
    before = {c.get("id"): c for c in a["cases"]}
    after = {c.get("id"): c for c in b["cases"]}
    lines = [f"changed: {at}{i}" for i in sorted(before.keys() & after.keys()) if before[i] != after[i]]
    lines += [f"only in before: {at}{i}" for i in sorted(before.keys() - after.keys())]
    lines += [f"only in after: {at}{i}" for i in sorted(after.keys() - before.keys())]
    lines += [f"changed: {at}top-level '{k}'" for k in sorted(a.keys() | b.keys())
              if k != "cases" and a.get(k) != b.get(k)]
    return lines


def runner_changes(left, right):
    """case_changes for each runner (label -> normalised bundle) of two bundle sets."""
    lines = []
    for label in left:
        if label in right:
            lines += case_changes(left[label], right[label], label)
        else:
            lines.append(f"only in before: runner {label}")
    lines += [f"only in after: runner {label}" for label in right if label not in left]
    return lines


def _is_single(bundles):
    return len(bundles) == 1 and bundles[0].file == bundles[0].path


def text(doc):
    return json.dumps(doc, indent=1, sort_keys=True).splitlines()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description="Do two result bundles say the same thing, apart from "
                                                            "timings, ids, versions, commits and places?")
    parser.add_argument("before", metavar="BEFORE", help="bundle (or bundle set) of the first run")
    parser.add_argument("after", metavar="AFTER", help="bundle (or bundle set) of the second run")
    parser.add_argument("--root-a", default="", help="BEFORE's checkout, shown as <root>/ (default: none)")
    parser.add_argument("--root-b", default="", help="AFTER's checkout, shown as <root>/ (default: none)")
    parser.add_argument("--max-lines", type=int, default=200, help="diff lines printed at most")
    args = parser.parse_args(argv)
    try:
        a, b = load_bundles(args.before), load_bundles(args.after)
    except BundleError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    roots_a = [r.rstrip("/") + "/" for r in [args.root_a] if r]
    roots_b = [r.rstrip("/") + "/" for r in [args.root_b] if r]
    if _is_single(a) and _is_single(b):
        left, right = normalise(a[0].doc, roots_a), normalise(b[0].doc, roots_b)
        changes = case_changes(left, right) if left != right else []
    else:  # bundle sets: pair the runners by label
        _assign_labels(a)
        _assign_labels(b)
        left = {r.label: normalise(r.doc, roots_a) for r in a}
        right = {r.label: normalise(r.doc, roots_b) for r in b}
        changes = runner_changes(left, right) if left != right else []
    cases = sum(len(r.cases) for r in a)
    if left == right:
        print(f"same: {cases} cases; only timings, ids, versions, commits and places differ")
        return 0
    diff = list(difflib.unified_diff(text(left), text(right), args.before, args.after, lineterm="", n=2))
    print("\n".join(changes[: args.max_lines]))
    print("\n".join(diff[: args.max_lines]))
    if len(diff) > args.max_lines:
        print(f"... {len(diff) - args.max_lines} more diff lines")
    print(f"different: {len(changes)} change(s)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
