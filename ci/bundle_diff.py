#!/usr/bin/env python3
"""Do two result bundles say the same thing? A refactoring must not change a verdict, a metric or a
label, so CI (and issue 15's "the bundle is identical before and after") compares the bundles of two
runs with what legitimately changes from run to run taken out:

  timings        duration_s, duration_us, ts_ms, total_us, the benchmarks section
  identity       created_utc, run_id, git_commit, tool.version, libtorch/cuda/compiler versions
  measurements   metrics that measure the process rather than the code (allocated_delta_mib)
  places         the checkout's absolute path (--root-a/--root-b) and temp-file process ids

usage: python3 ci/bundle_diff.py BEFORE AFTER [--root-a DIR] [--root-b DIR] [--max-lines N]

Exit codes: 0 same, 1 different (the case ids that changed, appeared or disappeared, then a unified
diff of the normalised bundles on stdout), 2 bad input (a bundle reports/ cannot load, on stderr).
"""
import argparse
import difflib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reports.bundle import BundleError, load_bundle  # noqa: E402

VOLATILE_KEYS = {"duration_s", "duration_us", "ts_ms", "total_us", "created_utc", "run_id", "git_commit",
                 "libtorch_version", "cuda_version", "compiler", "benchmarks"}
VOLATILE_METRICS = {"allocated_delta_mib"}
_TEMP_PID = re.compile(r"(/tmp/crossdev_[a-z_]+?)_\d+(_\d+\.\w+)")


def normalise(doc, roots):
    def walk(value, key=None):
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if k in VOLATILE_KEYS or (key == "metrics" and k in VOLATILE_METRICS):
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


def case_changes(a, b):
    """'changed: ID' / 'only in BEFORE: ID' / 'only in AFTER: ID' lines, by case id."""
    before = {c.get("id"): c for c in a["cases"]}
    after = {c.get("id"): c for c in b["cases"]}
    lines = [f"changed: {i}" for i in sorted(before.keys() & after.keys()) if before[i] != after[i]]
    lines += [f"only in before: {i}" for i in sorted(before.keys() - after.keys())]
    lines += [f"only in after: {i}" for i in sorted(after.keys() - before.keys())]
    lines += [f"changed: top-level '{k}'" for k in sorted(a.keys() | b.keys()) if k != "cases" and a.get(k) != b.get(k)]
    return lines


def text(doc):
    return json.dumps(doc, indent=1, sort_keys=True).splitlines()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--root-a", default="", help="BEFORE's checkout, shown as <root>/ (default: none)")
    parser.add_argument("--root-b", default="", help="AFTER's checkout, shown as <root>/ (default: none)")
    parser.add_argument("--max-lines", type=int, default=200, help="diff lines printed at most")
    args = parser.parse_args(argv)
    try:
        a, b = load_bundle(args.before), load_bundle(args.after)
    except BundleError as e:
        print(e, file=sys.stderr)
        return 2
    roots_a = [r.rstrip("/") + "/" for r in [args.root_a] if r]
    roots_b = [r.rstrip("/") + "/" for r in [args.root_b] if r]
    left, right = normalise(a.doc, roots_a), normalise(b.doc, roots_b)
    if left == right:
        print(f"same: {len(a.cases)} cases; only timings, ids, versions, commits and places differ")
        return 0
    changes = case_changes(left, right)
    diff = list(difflib.unified_diff(text(left), text(right), args.before, args.after, lineterm="", n=2))
    print("\n".join(changes[: args.max_lines]))
    print("\n".join(diff[: args.max_lines]))
    if len(diff) > args.max_lines:
        print(f"... {len(diff) - args.max_lines} more diff lines")
    print(f"different: {len(changes)} change(s)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
