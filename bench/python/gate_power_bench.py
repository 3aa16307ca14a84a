#!/usr/bin/env python3
"""The gate's power, measured: each mutant of the catalog, caught or not, over reruns under other seeds.

docs/opinfo.md, "The gate's power": how often the opinfo suite catches each deliberately wrong ATen
kernel of the mutant catalog (tests/mutants/aten/catalog.json), and how often it raises a false alarm.
make test proves each mutant once (tests/python/opinfo/test_gate_catalog.py); this measures the rates,
in make report (ci/report.sh), shown in the report's "What this gate catches".

  - each group of the catalog is ONE `crossdev run`, its mutant libraries loaded (--load-library), over a
    generated matrix: for each rerun k (1..R) the rows of seed k selecting the group's target ops, each op
    with only the checks its targets need, on the simulated cuda profile, float32, max_samples 8;
  - a bug mutant's detection rate: the share of (target case, rerun) pairs whose status is fail or error
    (CAUGHT_STATUSES; the statuses of each are in the output); a legitimate one's false-alarm rate: the
    share that is not pass;
  - one clean run, no mutant loaded, over the union of every target op: every case must pass (a case
    that does not is a false alarm on a legitimate device difference).

CROSSDEV_SIM_DIVERGE=all (sim differs from the CPU wherever a real device may); --diverge off runs with
CROSSDEV_SIM_DIVERGE=0.

usage: gate_power_bench.py [--build-dir build] [--crossdev CMD] [--reruns 3] [--out gate_power.json]
                           [--jobs 2] [--diverge all|off] [--random-laws FILE]
Exit codes: 0 figures written; 1 figures written, but a run left no bundle (its cases are `missing`);
2 bad input (a mutant library not built, the catalog unreadable, no crossdev command).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from typing import Dict, Iterable, List, Optional, Tuple

from crossdev.child_process import describe_exit  # how a child ended, in the engine's words

ROOT = pathlib.Path(__file__).resolve().parents[2]
CATALOG = ROOT / "tests" / "mutants" / "aten" / "catalog.json"
KIND, DTYPE, MAX_SAMPLES = "cuda", "float32", 8
CAUGHT_STATUSES = ("fail", "error")  # a bug mutant is caught by a case with one of these statuses
DIVERGE = {"all": "all", "off": "0"}
MISSING = "missing"  # a target case the bundle does not hold (a run that left no bundle, an op this torch lacks)
MESSAGE_CHARS = 300
CHECK_ORDER = ("forward", "backward")


class BadInput(Exception):
    """Exit 2: the message says what to do."""


def library_path(build_dir: pathlib.Path, name: str) -> pathlib.Path:
    return build_dir / "lib" / f"libcrossdev_test_aten_mutant_{name}.so"


def load_catalog(path: pathlib.Path = CATALOG) -> List[dict]:
    try:
        mutants = json.loads(path.read_text(encoding="utf-8"))["mutants"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"{path}: cannot read the mutant catalog: {exc}") from exc
    for m in mutants:
        missing = [k for k in ("name", "kind", "group", "cases") if k not in m]
        if missing or m["kind"] not in ("bug", "legitimate"):
            raise BadInput(f"{path}: mutant {m.get('name', '?')}: expected name, kind (bug|legitimate), group, cases")
    return mutants


def groups(mutants: Iterable[dict]) -> Dict[int, List[dict]]:
    out: Dict[int, List[dict]] = {}
    for m in mutants:
        out.setdefault(m["group"], []).append(m)
    return dict(sorted(out.items()))


def split_target(target: str) -> Tuple[str, str]:
    """'<OpInfo full name>/<check>' -> (op, check); the OpInfo name may hold dots, never a slash."""
    op, _, check = target.rpartition("/")
    return op, check


def _check_key(checks: Iterable[str]) -> Tuple[str, ...]:
    return tuple(sorted(set(checks), key=lambda c: (CHECK_ORDER.index(c) if c in CHECK_ORDER else len(CHECK_ORDER), c)))


def row_plan(targets: Iterable[str]) -> Dict[Tuple[str, ...], List[str]]:
    """The rows one rerun needs: {checks: [ops]}, each op in the row of exactly the checks its targets
    need (sum/forward runs no backward, tanh/forward + tanh/backward runs both)."""
    needed: Dict[str, set] = {}
    for target in targets:
        op, check = split_target(target)
        needed.setdefault(op, set()).add(check)
    plan: Dict[Tuple[str, ...], List[str]] = {}
    for op in sorted(needed):
        plan.setdefault(_check_key(needed[op]), []).append(op)
    return dict(sorted(plan.items()))


def row_id(prefix: str, checks: Tuple[str, ...], seed: int) -> str:
    return f"{prefix}.{'-'.join(checks)}.s{seed}"


def case_id(row: str, target: str) -> str:
    op, check = split_target(target)
    return f"{row}/{op}/{KIND}/{DTYPE}/{check}"


def matrix_yaml(prefix: str, targets: Iterable[str], reruns: int, intent: str) -> str:
    """The opinfo matrix of one run: for each seed 1..reruns, the rows of row_plan(targets)."""
    plan = row_plan(list(targets))
    lines = ["# generated by bench/python/gate_power_bench.py", "suite: opinfo", "cases:"]
    for seed in range(1, reruns + 1):
        for checks, ops in plan.items():
            lines.append(
                f"  - {{id: {json.dumps(row_id(prefix, checks, seed))}, source: \"tests/mutants/aten/catalog.json\", "
                f"intent: {json.dumps(intent)}, opinfo: {json.dumps(ops)}, devices: [{KIND}], dtypes: [{DTYPE}], "
                f"checks: {json.dumps(list(checks))}, max_samples: {MAX_SAMPLES}, seed: {seed}}}")
    return "\n".join(lines) + "\n"


def target_case_ids(prefix: str, targets: Iterable[str], reruns: int,
                    matrix_targets: Optional[Iterable[str]] = None) -> Dict[str, List[str]]:
    """{target: [case id of rerun 1, ..., rerun R]} in the matrix matrix_yaml writes for matrix_targets (default
    targets): a mutant's targets in its group's matrix, where another mutant's target may add a check to an op."""
    targets = list(targets)
    plan = row_plan(targets if matrix_targets is None else list(matrix_targets))
    checks_of = {op: checks for checks, ops in plan.items() for op in ops}
    out = {}
    for target in targets:
        op, _ = split_target(target)
        out[target] = [case_id(row_id(prefix, checks_of[op], seed), target) for seed in range(1, reruns + 1)]
    return out


def trim(message: str, limit: int = MESSAGE_CHARS) -> str:
    message = " ".join(str(message or "").split())
    return message if len(message) <= limit else message[:limit - 3] + "..."


def _statuses(cases: Dict[str, dict], ids: Dict[str, List[str]]):
    statuses = {t: [cases[c]["status"] if c in cases else MISSING for c in per_run] for t, per_run in ids.items()}
    return statuses


def _messages(cases: Dict[str, dict], ids: Dict[str, List[str]], hit) -> Dict[str, str]:
    """{target: the message of its first case whose status hits (trimmed)}, or "not in the bundle"."""
    out = {}
    for target, per_run in ids.items():
        found = [cases[c] for c in per_run if c in cases and hit(cases[c]["status"])]
        if found:
            out[target] = trim(found[0].get("message", "")) or found[0]["status"]
        elif any(c not in cases for c in per_run):
            out[target] = "not in the bundle"
    return out


def mutant_figures(mutant: dict, cases: Dict[str, dict], prefix: str, reruns: int,
                   group_targets: Optional[Iterable[str]] = None) -> dict:
    """One mutant's entry of the output, from its group's bundle cases ({case id: case}); group_targets: the
    targets the group's matrix was written for (default the mutant's own)."""
    ids = target_case_ids(prefix, mutant["cases"], reruns, group_targets)
    statuses = _statuses(cases, ids)
    flat = [s for per_run in statuses.values() for s in per_run]
    bug = mutant["kind"] == "bug"
    hit = (lambda s: s in CAUGHT_STATUSES) if bug else (lambda s: s != "pass")
    count = sum(hit(s) for s in flat)
    messages = _messages(cases, ids, hit)
    entry = {k: mutant.get(k, "") for k in ("name", "kind", "group", "rule", "bug", "aten")}
    entry.update(cases=list(mutant["cases"]), runs=len(flat), **{"caught" if bug else "false_alarms": count},
                 rate=count / len(flat) if flat else 0.0, by_status=dict(sorted(Counter(flat).items())),
                 statuses=statuses, messages=messages)
    return entry


def clean_figures(cases: Dict[str, dict], prefix: str, targets: List[str], reruns: int) -> dict:
    ids = target_case_ids(prefix, targets, reruns)
    statuses = _statuses(cases, ids)
    flat = [s for per_run in statuses.values() for s in per_run]
    messages = _messages(cases, ids, lambda s: s != "pass")
    alarms = sum(s != "pass" for s in flat)
    return {"cases": len(ids), "runs": len(flat), "false_alarms": alarms, "rate": alarms / len(flat) if flat else 0.0,
            "by_status": dict(sorted(Counter(flat).items())), "statuses": statuses, "messages": messages}


def union_targets(mutants: Iterable[dict]) -> List[str]:
    return sorted({t for m in mutants for t in m["cases"]})


def read_cases(bundle: pathlib.Path) -> Dict[str, dict]:
    return {c["id"]: c for c in json.loads(bundle.read_text(encoding="utf-8"))["cases"]}


def run_crossdev(crossdev: List[str], workdir: pathlib.Path, prefix: str, targets: List[str], reruns: int,
                 libraries: List[pathlib.Path], diverge: str, intent: str):
    """One `crossdev run`: ({case id: case}, error or None, seconds)."""
    matrix = workdir / f"{prefix}.yaml"
    matrix.write_text(matrix_yaml(prefix, targets, reruns, intent), encoding="utf-8")
    bundle = workdir / f"{prefix}.json"
    cmd = [*crossdev, "run", "--matrix", str(matrix), "--simulate", KIND, "--out", str(bundle), "--quiet",
           "--row-timeout", "3600", *(a for lib in libraries for a in ("--load-library", str(lib)))]
    env = dict(os.environ, CROSSDEV_SIM_DIVERGE=DIVERGE[diverge])
    started = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    seconds = time.perf_counter() - started
    (workdir / f"{prefix}.log").write_text(done.stdout, encoding="utf-8")
    if done.returncode not in (0, 1) or not bundle.exists():
        tail = "\n".join(done.stdout.strip().splitlines()[-15:])
        return {}, f"{prefix}: crossdev run {describe_exit(done.returncode)}" + \
            ("" if bundle.exists() else " without a bundle") + (f":\n{tail}" if tail else ""), seconds
    return read_cases(bundle), None, seconds


def check_libraries(build_dir: pathlib.Path, mutants: Iterable[dict]) -> None:
    missing = [library_path(build_dir, m["name"]) for m in mutants if not library_path(build_dir, m["name"]).exists()]
    if missing:
        named = ", ".join(map(str, missing[:3])) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise BadInput(f"{len(missing)} mutant librar{'y is' if len(missing) == 1 else 'ies are'} not built: {named}; "
                       f"the mutants are built with the tests: make test (or cmake --build {build_dir} --target crossdev_tests), then rerun")


def crossdev_command(spec: str) -> List[str]:
    """--crossdev: a path or a command line (`python -m crossdev`)."""
    cmd = shlex.split(spec)
    if not cmd or shutil.which(cmd[0]) is None:
        raise BadInput(f"--crossdev {spec!r}: no such command (install crossdev, make install, or name the venv's "
                       "bin/crossdev)")
    return cmd


def random_laws(path: Optional[str]):
    """The random-law figures of bench/python/random_false_alarm_bench.py, embedded as they are."""
    if not path or not pathlib.Path(path).exists():
        return None
    try:
        return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"gate_power_bench.py: warning: {path}: not merged: {exc}", file=sys.stderr)
        return None


def write_json(path: pathlib.Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", default="build", type=pathlib.Path,
                   help="where lib/libcrossdev_test_aten_mutant_*.so are")
    p.add_argument("--crossdev", default="crossdev",
                   help="the crossdev command: a path, or a command line such as 'build/venv/bin/python -m crossdev' "
                        "(default: crossdev on PATH)")
    p.add_argument("--reruns", type=int, default=3, help="seeds 1..R per target case (default 3)")
    p.add_argument("--out", default="gate_power.json", type=pathlib.Path)
    p.add_argument("--jobs", type=int, default=2, help="runs in parallel (default 2)")
    p.add_argument("--diverge", choices=sorted(DIVERGE), default="all",
                   help="CROSSDEV_SIM_DIVERGE=all (default) or 0 (off: sim runs the CPU's kernels)")
    p.add_argument("--random-laws", metavar="FILE", help="random_false_alarm_bench.py's JSON, embedded if it exists")
    p.add_argument("--verbose", action="store_true", help="a console line for every mutant (default: only those "
                   "the gate judged wrongly; every figure is in --out either way)")
    p.add_argument("--catalog", default=CATALOG, type=pathlib.Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.reruns < 1 or args.jobs < 1:
        p.error("--reruns and --jobs must be >= 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        mutants = load_catalog(args.catalog)
        check_libraries(args.build_dir, mutants)
        crossdev = crossdev_command(args.crossdev)
    except BadInput as exc:
        print(f"gate_power_bench.py: error: {exc}", file=sys.stderr)
        return 2
    by_group = groups(mutants)
    started = time.perf_counter()
    results, errors = {}, []
    with tempfile.TemporaryDirectory(prefix="crossdev-gate-power-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        workdir = pathlib.Path(tmp)
        jobs = {pool.submit(run_crossdev, crossdev, workdir, f"g{g}", union_targets(ms), args.reruns,
                            [library_path(args.build_dir, m["name"]) for m in ms], args.diverge,
                            "the gate's power"): f"g{g}" for g, ms in by_group.items()}
        jobs[pool.submit(run_crossdev, crossdev, workdir, "clean", union_targets(mutants), args.reruns, [],
                         args.diverge, "no mutant: every case passes")] = "clean"
        for future in concurrent.futures.as_completed(jobs):
            prefix = jobs[future]
            cases, error, seconds = future.result()
            results[prefix] = cases
            if error:  # a run that went wrong is said at once; the others only in the summary below
                print(f"{prefix}: {len(cases)} case(s) in {seconds:.0f} s; {error}", flush=True)
                errors.append(error)
    entries = [mutant_figures(m, results[f"g{g}"], f"g{g}", args.reruns, union_targets(ms))
               for g, ms in by_group.items() for m in ms]
    doc = {"reruns": args.reruns, "diverge": args.diverge, "kind": KIND, "dtype": DTYPE, "max_samples": MAX_SAMPLES,
           "caught_statuses": list(CAUGHT_STATUSES), "mutants": entries,
           "clean": clean_figures(results["clean"], "clean", union_targets(mutants), args.reruns),
           "errors": errors, "seconds": round(time.perf_counter() - started, 1)}
    laws = random_laws(args.random_laws)
    if laws is not None:
        doc["random_laws"] = laws
    write_json(args.out, doc)
    # A console line for each mutant the gate did not judge as it should (a bug missed in a run, a legitimate
    # difference flagged), every one with --verbose; the figures of all are in the JSON and the report.
    bugs = [e for e in entries if e["kind"] == "bug"]
    legitimate = [e for e in entries if e["kind"] != "bug"]
    for e in entries:
        flawless = e["caught"] == e["runs"] if e["kind"] == "bug" else e["false_alarms"] == 0
        if args.verbose or not flawless:
            figure = (f"caught {e['caught']}" if e["kind"] == "bug" else f"false alarms {e['false_alarms']}") + f" of {e['runs']}"
            print(f"{e['name']} ({e['kind']}): {figure} ({e['rate']:.0%}) {e['by_status']}")
    clean = doc["clean"]
    print(f"gate power: {sum(e['caught'] == e['runs'] for e in bugs)} of {len(bugs)} bugs caught in every run, "
          f"{sum(e['false_alarms'] == 0 for e in legitimate)} of {len(legitimate)} legitimate differences never flagged; "
          f"clean: {clean['false_alarms']} false alarm(s) in {clean['runs']} ({clean['cases']} cases x {args.reruns}); "
          f"{args.out} in {doc['seconds']} s")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
