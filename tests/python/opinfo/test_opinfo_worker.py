"""The Python worker's protocol (`python -m crossdev.worker`, docs/python-worker.md) and the opinfo
suite's selection glob, without the engine. Fast: one or two ops, few samples, the CPU as the device."""
import json
import os
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, INSTALLED


def worker(request, timeout=240):
    """Run one request through a fresh worker: (returncode, protocol lines, stderr)."""
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BUILD_DIR / "python"), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "crossdev.worker"], input=json.dumps(request) + "\n",
                          capture_output=True, text=True, env=env, timeout=timeout)
    return proc.returncode, proc.stdout.rstrip("\n").split("\n"), proc.stderr  # not splitlines(): \x1e is a record separator


def row(**fields):
    base = {"id": "t.row", "opinfo": "sin", "devices": ["cpu"], "dtypes": ["float32"], "checks": ["forward"],
            "max_samples": 2}
    base.update(fields)
    return base


def run_request(start=0, **fields):
    return {"request": "run", "suite": "opinfo", "libraries": [], "simulated_kinds": [], "kinds": {"cpu": "real"},
            "row": row(**fields), "start": start}


def test_check_names_every_bad_value_with_the_valid_choices():
    rc, lines, err = worker({"request": "check", "suite": "opinfo", "libraries": [], "simulated_kinds": [],
                             "rows": [row(opinfo="addd", dtypes=["float33"], checks=["sideways"]),
                                      row(opinfo="zzz*"), row(opinfo="add")]})
    assert rc == 0, err
    assert lines[-1] == "DONE"
    bad = [line.split("\t") for line in lines if line.startswith("BAD ")]
    assert bad[0][:2] == ["BAD 0", "opinfo"] and "no OpInfo named 'addd'" in bad[0][2] and "nearest: add" in bad[0][2]
    assert bad[1][:2] == ["BAD 0", "dtypes"] and "'float33'" in bad[1][2] and "float32" in bad[1][2]
    assert bad[2][:2] == ["BAD 0", "checks"] and "forward, backward" in bad[2][2]
    assert bad[3][:2] == ["BAD 1", "opinfo"] and "selects no OpInfo" in bad[3][2]
    assert len(bad) == 4, "row 2 (add) is good"


def test_run_streams_plan_start_case_done_in_the_engines_record_format():
    rc, lines, err = worker(run_request(opinfo="add", checks=["forward", "backward"]))
    assert rc == 0, err
    assert lines[0] == "PLAN 2"
    assert lines[1] == "START 0\tt.row/add/cpu/float32/forward"
    fields = lines[2].split("\t")
    assert fields[0] == "CASE" and len(fields) == 15, "runner/case_codec.cpp's record: CASE and 14 fields"
    assert fields[1] == "t.row/add/cpu/float32/forward"
    assert fields[8] == "pass", f"the status by name (case_statuses.json): {lines[2]!r}"
    assert fields[10] == "real", "the execution by name"
    metrics = dict(kv.split("\x1e") for kv in fields[13].split("\x1f"))
    assert float(metrics["samples"]) == 2, "max_samples: 2 of op_db's many samples of add"
    details = dict(kv.split("\x1e") for kv in fields[14].split("\x1f"))
    assert details["tolerance_source"] == "crossdev per-dtype table"
    assert lines[3] == "START 1\tt.row/add/cpu/float32/backward"
    assert lines[-1] == "DONE" and len(lines) == 6


def _cases(lines):
    out = {}
    for line in lines:
        if line.startswith("CASE\t"):
            fields = line.split("\t")
            out[fields[1]] = {"status": fields[8], "message": fields[11]}
    return out


def test_variants_are_separate_cases_and_a_missing_form_is_skipped_with_the_reason():
    """sort has an out= form (a (values, indices) tuple) but no in-place one; out= has no autograd.
    The same request carries expectations: a skip entry keeps its case from running, and the first
    matching entry wins (the function's backward matches an xfail entry first, so it runs)."""
    expectations = {"cpu": [
        {"match": "t.row/sort/cpu/*/backward", "status": "xfail", "reason": "r1", "where": "f:1"},
        {"match": "t.row/sort/cpu/*/backward/inplace", "status": "skip", "reason": "hangs", "where": "f:2"},
        {"match": "t.row/sort/cpu/float32/backward", "status": "skip", "reason": "never first", "where": "f:3"}]}
    rc, lines, err = worker(dict(run_request(opinfo="sort", variants=["function", "inplace", "out"],
                                             checks=["forward", "backward"]), expectations=expectations))
    assert rc == 0, err
    cases = _cases(lines)
    assert list(cases) == ["t.row/sort/cpu/float32/forward", "t.row/sort/cpu/float32/backward",
                           "t.row/sort/cpu/float32/forward/inplace", "t.row/sort/cpu/float32/backward/inplace",
                           "t.row/sort/cpu/float32/forward/out", "t.row/sort/cpu/float32/backward/out"]
    passed, skipped = "pass", "skip"  # by name (case_statuses.json)
    assert [c["status"] for c in cases.values()] == [passed, passed, skipped, skipped, passed, skipped], cases
    assert "no in-place variant" in cases["t.row/sort/cpu/float32/forward/inplace"]["message"]
    assert cases["t.row/sort/cpu/float32/backward/inplace"]["message"] == "expected skip (hangs, f:2)"
    assert "do not support autograd" in cases["t.row/sort/cpu/float32/backward/out"]["message"]


def test_the_workers_glob_is_the_engines():
    from crossdev.opinfo.expectations import glob_match
    assert glob_match("a/*/c", "a/b/x/c"), "'*' crosses '/'"
    assert glob_match("a?c", "abc") and not glob_match("a?c", "ac")
    assert glob_match("a[b]c", "abc") and not glob_match("a[!b]c", "abc"), "[...] classes, as --filter has"
    assert glob_match("a\\b", "a\\b") and not glob_match("a\\*", "a*"), "a backslash is literal"
    assert not glob_match("a.c", "abc"), "'.' is literal"


def test_run_resumes_at_the_start_index_after_a_crash():
    rc, lines, err = worker(run_request(start=1, checks=["forward", "backward"]))
    assert rc == 0, err
    assert lines[0] == "PLAN 2", "the plan is the whole row's, so the engine knows where it stands"
    assert lines[1].startswith("START 1\t") and lines[-1] == "DONE"
    assert not any(line.startswith("START 0") for line in lines)


def test_a_library_that_cannot_load_is_fatal_naming_it_before_the_suite_runs(tmp_path):
    """The process setup every Python suite gets (crossdev.worker.prepare_process): --load-library's
    paths are loaded before the suite; one that cannot load is FATAL naming it, never ignored."""
    not_a_library = tmp_path / "libnot_a_library.so"
    not_a_library.write_text("not an ELF file")
    rc, lines, err = worker(dict(run_request(), libraries=[str(not_a_library)]))
    assert rc == 0, err
    assert lines[0].startswith(f"FATAL cannot load '{not_a_library}' (--load-library)"), lines
    assert lines[1:] == ["DONE"], "nothing of the suite ran"


def test_an_unknown_suite_is_fatal_naming_the_suites():
    rc, lines, err = worker({"request": "run", "suite": "nosuch"})
    assert lines == ["FATAL unknown Python suite 'nosuch'; expected one of claims, models, opinfo", "DONE"]


def test_a_request_that_is_not_json_is_fatal():
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = str(BUILD_DIR / "python")
    proc = subprocess.run([sys.executable, "-m", "crossdev.worker"], input="{not json\n", capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, "a bad request is answered; the worker goes on serving"
    lines = proc.stdout.rstrip("\n").split("\n")
    assert lines[0].startswith("FATAL the request is not JSON") and lines[1:] == ["DONE"], lines


def test_no_request_at_all_is_fatal():
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = str(BUILD_DIR / "python")
    proc = subprocess.run([sys.executable, "-m", "crossdev.worker"], input="", capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout.startswith("FATAL no request on stdin"), proc.stdout


def test_one_worker_serves_requests_in_turn_each_answer_ending_with_done():
    """The engine keeps one worker per process (runner/python_rows.h): it reads a request, answers it
    up to DONE, then reads the next, until its stdin closes; a FATAL answer does not end it."""
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BUILD_DIR / "python"), env.get("PYTHONPATH")]))
    requests = [run_request(opinfo="add"), {"request": "run", "suite": "nosuch"}, run_request(opinfo="sin", start=0)]
    proc = subprocess.run([sys.executable, "-m", "crossdev.worker"],
                          input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                          env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.rstrip("\n").split("\n")
    answers, current = [], []
    for line in lines:
        current.append(line)
        if line == "DONE":
            answers.append(current)
            current = []
    assert current == [] and len(answers) == 3, lines
    assert answers[0][0] == "PLAN 1" and answers[0][2].split("\t")[1] == "t.row/add/cpu/float32/forward"
    assert answers[1][0].startswith("FATAL unknown Python suite 'nosuch'")
    assert answers[2][0] == "PLAN 1" and answers[2][2].split("\t")[1] == "t.row/sin/cpu/float32/forward"
    assert answers[2][2].split("\t")[8] == "pass"


@pytest.fixture(scope="module")
def op_db():
    from crossdev.opinfo import selection
    return selection.load_op_db()


def test_the_glob_is_over_name_and_name_dot_variant(op_db):
    from crossdev.opinfo.selection import full_name, select
    assert [full_name(op) for op in select(op_db, "normal*")] == ["normal.in_place", "normal", "normal.number_mean"]
    assert [full_name(op) for op in select(op_db, "normal.number_mean")] == ["normal.number_mean"]
    assert [full_name(op) for op in select(op_db, "tan*")] == ["tan", "tanh"]
    assert [full_name(op) for op in select(op_db, "tan*", exclude=["tanh"])] == ["tan"]
    assert select(op_db, "sin") and all(full_name(op) == "sin" for op in select(op_db, "sin"))


def test_selection_problems_name_the_nearest_matches(op_db):
    from crossdev.opinfo.selection import selection_problem
    assert selection_problem(op_db, "sin") is None
    assert "nearest: tan, tanh" in selection_problem(op_db, "tahn")
    assert "selects no OpInfo" in selection_problem(op_db, "nosuchop.*")
    assert "exclude" in selection_problem(op_db, "tan*", exclude=["tan*"])


def test_a_row_that_selects_nothing_is_fatal_at_run_time_too():
    rc, lines, err = worker(run_request(opinfo="nosuchop*"))
    assert rc == 0, err
    assert lines[0].startswith("FATAL the glob 'nosuchop*' selects no OpInfo"), lines
    assert lines[1:] == ["DONE"], "no PLAN: never an empty, silently green row"


def test_shards_split_the_ops_disjointly_and_together_plan_every_case(op_db):
    from crossdev.opinfo.suite import plan
    row = {"id": "t.row", "opinfo": "a*", "devices": ["cpu"], "dtypes": ["float32"], "checks": ["forward", "backward"]}
    ids = lambda cases: [(c[1], c[4]) for c in cases]  # noqa: E731  (op full name, check)
    whole = ids(plan(op_db, row))
    shards = [ids(plan(op_db, row, (i, 3))) for i in (1, 2, 3)]
    assert all(shards), "every shard of 3 has some of the a* ops"
    assert sorted(sum(shards, [])) == sorted(whole), "together: every case, each once"
    owner = {name: i for i, shard in enumerate(shards) for name, _ in shard}
    assert all(owner[name] == i for i, shard in enumerate(shards) for name, _ in shard), "an op's cases stay together"
    assert ids(plan(op_db, row, (2, 3))) == shards[1], "stable: the same split every time"


def test_op_db_samples_are_seeded_as_before_without_the_stack_walk(op_db, monkeypatch):
    """op_db's TrackedInputIter seeds every sample from extract_test_fn(), and OpInfo.sample_inputs asks it
    (opinfo.core's own name for it) for the test's sample skips: the same draws with the walk skipped."""
    import inspect

    import torch
    from torch.testing._internal import common_utils

    from crossdev.opinfo import seeding

    def draws():
        return [float(x) for x in common_utils.TrackedInputIter((torch.rand(()) for _ in range(3)), "sample input")]
    walked = draws()  # with the walk (no unittest test here: common_utils.SEED)
    from torch.testing._internal.opinfo import core
    for module in (common_utils, core):  # restored after the test
        monkeypatch.setattr(module, "extract_test_fn", module.extract_test_fn)
    seeding.skip_test_fn_lookup()

    walks = []  # (extract_test_fn swallows any exception: count the walks instead)
    monkeypatch.setattr(inspect, "stack", lambda *args, **kwargs: walks.append(1) or [])
    assert common_utils.extract_test_fn() is None and core.extract_test_fn() is None
    assert draws() == walked
    assert not walks, "a name of extract_test_fn still walks the stack"
