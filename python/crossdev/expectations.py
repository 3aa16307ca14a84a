"""`crossdev expectations accept BUNDLE...`: rewrite the expectation files of every suite whose record allows
them (python_suites.json's `expectations`: opinfo, models), <matrix folder>/expectations/<suite>/<kind>.yaml
(docs/opinfo.md, docs/models.md), from what one or more runs found.

usage: crossdev expectations accept BUNDLE... [--dry-run]

For every case of those suites in the bundles (bundle.json or a bundle set from `crossdev merge`):
  - a new failure (fail, error or crash: no entry expected it) becomes an `xfail` entry with its class
    (crash, dtype_unsupported, unimplemented or numerics, see failure_class), the case's message as
    its reason (led by the runtime's version on a device a Python package provides: "(torch_xla 2.9.0 on
    torch 2.9.0)"), and the execution it was seen under (real or simulated), so a gap of the sim backend
    never expects a failure of the real device. Where every case that ran under one prefix of the case id
    failed with one class (the suite's record names the id's segments: opinfo's row/op/kind and
    row/op/kind/dtype, a model's row/kind), one glob entry stands for all of them;
  - an entry that now passes (its cases are `xpass`, none `xfail`) is removed;
  - an entry a bundle lists as stale (`stale_expectations`: the engine found it matches no case of a
    run that ran every row it could match, conformance/suites/suite_expectations.h) is removed, and so
    is one that all N shards of a sharded run list as unmatched (crossdev.report.shards folds them);
  - a `harness` error (crossdev.harness_error: crossdev's own code failed, not the device) is never
    accepted: it is listed as crossdev's bug to fix, and the command exits 2 after writing the rest;
  - every other entry is kept as written: its reason, class and execution (comments are not kept:
    the file is rewritten as YAML flow mappings, one entry a line).
Entries never hold tolerances, so accepting can never loosen one. The engine's own rules apply to the
result (parity/expectations.h: the first matching entry wins).

Refuses to run under CI=true (exit 2): expectations are accepted by a person, from a run they looked
at, never by the pipeline whose verdict they change. Exit codes: 0 written (or --dry-run), 2 bad input or
harness errors left unaccepted.
"""
from __future__ import annotations

import json
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

from crossdev import harness_error, python_suites
from crossdev.case_statuses import FAILED_STATUSES
from crossdev._command import ArgumentParser, guarded
from crossdev.report.atomic import write_text_atomically
from crossdev.report.bundle import BundleError, load_bundles
from crossdev.report.merge import runner_label
from crossdev.report.shards import fold_shards

EXIT_OK, EXIT_BAD_INPUT = 0, 2
PROG = "crossdev expectations"
FAILED = FAILED_STATUSES
DTYPE_WORDS = ("Half", "BFloat16", "Float8", "ComplexFloat", "ComplexDouble", "Double", "dtype")
REASON_CHARS = 200
# the suites whose record allows expectation files, and what an accepted entry is (the first allowed status)
SUITES = {name: spec for name, spec in python_suites.SUITES.items() if spec.get("expectations")}


def parse_args(argv):
    p = ArgumentParser(prog=PROG, description="Rewrite matrices' expectations/<suite>/<kind>.yaml from runs' bundles.")
    sub = p.add_subparsers(dest="action", required=True, metavar="accept")
    accept = sub.add_parser("accept", help="add new failures, remove entries that now pass, keep the rest")
    accept.add_argument("bundles", nargs="+", metavar="BUNDLE", help="bundle.json files or bundle sets")
    accept.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    return p.parse_args(argv)


def failure_class(case) -> str:
    """What kind of failure a case is: crash (the process died or hung), dtype_unsupported (the device
    raised about the dtype), unimplemented (the device raised otherwise: a missing kernel, an
    unsupported argument), numerics (it ran and differs from the CPU)."""
    if case["status"] == "crash":
        return "crash"
    if case["status"] == "error":
        message = case.get("message", "")
        if re.search(r"not implemented for '|not supported for|unsupported (scalar |d)type", message, re.I) and \
                any(w in message for w in DTYPE_WORDS):
            return "dtype_unsupported"
        return "unimplemented"
    return "numerics"


def expectations_path(case) -> Path:
    """The engine's rule (conformance/suites/expectation_files.cpp expectations_path)."""
    return Path(case["file"]).parent / "expectations" / case["suite"] / f"{case_kind(case)}.yaml"


def case_kind(case) -> str:
    """The case's device kind, as its item event recorded it; cpu@avx2 -> cpu: the file the engine reads
    (kind_of_case)."""
    kind = (case.get("details") or {}).get("device_kind") or _segment(case, "kind")
    return kind.split("@")[0]


def _segments(case) -> list:
    """The case id's segments after the row, named by the suite's record (python_suites.json `case_id`)."""
    return case["id"][len(case["row_id"]) + 1:].split("/")


def _segment(case, name) -> str:
    names = SUITES[case["suite"]]["case_id"][1:]
    return _segments(case)[names.index(name)]


def group_keys(case) -> list:
    """The id prefixes one glob entry may stand for, narrowest last: through the kind, then the dtype (opinfo:
    row/op/kind, row/op/kind/dtype; models: row/kind), each shorter than the id itself."""
    names, parts = SUITES[case["suite"]]["case_id"][1:], _segments(case)
    keys = []
    for name in ("kind", "dtype"):
        if name in names and names.index(name) + 1 < len(parts):
            keys.append("/".join([case["row_id"], *parts[:names.index(name) + 1]]))
    return keys


def _execution(bundle, kind) -> str:
    for device in bundle.target.get("devices", []):
        if device.get("kind") == kind:
            return "simulated" if device.get("provenance") == "simulated" else "real"
    return "real"


def _seen_with(bundle, kind) -> str:
    """The runtime a real device of `kind` ran under when a Python package provides it, from the bundle's
    device name ("xla:0 (torch_xla 2.9.0 on torch 2.9.0, PJRT's CPU client ...)" -> "torch_xla 2.9.0 on
    torch 2.9.0"); "" for any other device."""
    for device in bundle.target.get("devices", []):
        names = device.get("names") or []
        if device.get("kind") == kind and device.get("provenance") == "real" and names and " (" in names[0]:
            return names[0].split(" (", 1)[1].split(",", 1)[0].rstrip(")")
    return ""


def _load_entries(path: Path):
    """(description, [(line, entry dict)]) of an existing file; a file the engine would refuse is bad input."""
    import yaml  # PyYAML: crossdev[bench]

    text = path.read_text()
    node = yaml.compose(text)
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict) or not isinstance(data.get("expectations", []), list):
        raise ValueError(f"{path}: expected a mapping with an 'expectations' list")
    lines = []
    if node is not None:
        for key, value in node.value:
            if key.value == "expectations":
                lines = [item.start_mark.line + 1 for item in value.value]
    return data.get("description"), list(zip(lines, data.get("expectations") or []))


def _entry_text(entry: dict) -> str:
    keys = ["match", "status", "reason", "class", "execution"]
    keys += [k for k in entry if k not in keys]
    return "  - {" + ", ".join(f"{k}: {json.dumps(str(entry[k]), ensure_ascii=False)}" for k in keys if k in entry) + "}"


def _collapse(failures, ran):
    """[(match, class, message)] for new failures of one file: a glob where every case under one of the id's
    prefixes (group_keys: a whole op on a kind, or op and dtype) failed."""
    out, done = [], set()
    groups = defaultdict(list)
    for f in failures:
        for key in f["keys"]:
            groups[key].append(f)
    for f in failures:
        if f["id"] in done:
            continue
        for key, group, glob in [(k, groups[k], k + "/*") for k in f["keys"]] + [(None, [f], f["id"])]:
            classes = {g["class"] for g in group}
            if key is None or (len(classes) == 1 and len(group) == ran[key] and len(group) > 1):
                out.append((glob, f["class"], f["message"], f["execution"]))
                done.update(g["id"] for g in group)
                break
    return out


def run(argv=None) -> int:
    args = parse_args(argv)
    if os.environ.get("CI", "").lower() == "true":
        print(f"{PROG} accept: refused under CI=true: expectations are accepted by a person from a run they read, "
              "never by the pipeline they gate", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        import yaml  # noqa: F401
    except ImportError:
        print(f"{PROG} accept: needs PyYAML (pip install 'crossdev[bench]' or pip install PyYAML)", file=sys.stderr)
        return EXIT_BAD_INPUT
    bundles = []
    for path in args.bundles:
        try:
            bundles += load_bundles(path)
        except (BundleError, OSError) as e:
            print(f"{PROG} accept: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
    stale = defaultdict(set)                            # file -> lines of entries a run found stale
    for bundle in fold_shards(bundles, runner_label):  # a sharded run's stale entries: those no shard matched
        for entry in bundle.doc.get("stale_expectations") or []:
            file, _, line = entry["where"].rpartition(":")
            stale[Path(file)].add(int(line))
    failures = defaultdict(list)                       # file -> new failures
    ran = defaultdict(int)                              # op or dtype key -> cases that ran (not skip)
    verdicts = defaultdict(lambda: defaultdict(set))    # file -> entry line -> statuses of its cases
    harness_errors = []                                 # crossdev's own failures: never accepted
    for bundle in bundles:
        for case in bundle.cases:
            if case.get("suite") not in SUITES or case["id"] == case["row_id"]:
                continue
            path, kind, keys = expectations_path(case), case_kind(case), group_keys(case)
            if case["status"] != "skip":
                for key in keys:
                    ran[key] += 1
            expectation = dict(case.get("details") or {}).get("expectation", "")
            m = re.match(r"(.*):(\d+): xfail: ", expectation)
            if m:
                verdicts[Path(m.group(1))][int(m.group(2))].add(case["status"])
            if harness_error.is_harness_error(case):
                harness_errors.append(case)
            elif case["status"] in FAILED:
                message = " ".join(case.get("message", "").split())
                seen_with = _seen_with(bundle, kind)  # torch_xla's version, where the device is its
                failures[path].append({"id": case["id"], "keys": keys, "suite": case["suite"],
                                       "class": failure_class(case), "execution": _execution(bundle, kind),
                                       "message": (f"({seen_with}) " if seen_with else "") + message[:REASON_CHARS] +
                                                  ("..." if len(message) > REASON_CHARS else "")})
    files = set(failures) | {p for p in set(verdicts) | set(stale) if p.parts[-3] == "expectations" and p.parts[-2] in SUITES}
    for path in sorted(files):
        description, entries = (None, [])
        if path.exists():
            try:
                description, entries = _load_entries(path)
            except Exception as e:  # noqa: BLE001  (yaml.YAMLError, ValueError): the engine would refuse it too
                print(f"{PROG} accept: {path}: cannot read it: {e}", file=sys.stderr)
                return EXIT_BAD_INPUT
        kept, removed, dropped = [], [], []
        for line, entry in entries:
            statuses = verdicts[path].get(line, set())
            (removed if statuses and statuses <= {"xpass"} else dropped if line in stale[path] else kept).append(entry)
        added = [{"match": match, "status": "xfail", "reason": f"accepted: {message}", "class": cls,
                  "execution": execution}
                 for match, cls, message, execution in _collapse(failures[path], ran)]
        description = description or (f"Known differences of the {path.parent.name} suite on {path.stem} "
                                       f"(crossdev expectations accept; {python_suites.suite(path.parent.name)['doc']}).")
        text = f"description: {json.dumps(description, ensure_ascii=False)}\nexpectations:\n" + \
            "".join(_entry_text(e) + "\n" for e in kept + added)
        if not kept and not added:
            text = text.replace("expectations:\n", "expectations: []\n")
        print(f"{path}: {len(added)} added, {len(removed)} removed (now pass), {len(dropped)} removed (stale), "
              f"{len(kept)} kept")
        for e in removed:
            print(f"  - {e.get('match')}")
        for e in dropped:
            print(f"  - {e.get('match')} (stale: matches no case of a run that covered it)")
        for e in added:
            print(f"  + {e['match']} ({e['class']})")
        if not args.dry_run:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomically(path, text)
    for case in harness_errors:
        print(f"{PROG} accept: not accepted, crossdev's own error (fix crossdev, not the expectations): "
              f"{case['id']}: {case['message'][:REASON_CHARS]}", file=sys.stderr)
    return EXIT_BAD_INPUT if harness_errors else EXIT_OK


main = guarded(run, PROG, "crossdev expectations")
