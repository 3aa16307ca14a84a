"""The Python worker's protocol (`python -m crossdev.worker`, docs/python-worker.md) and the opinfo
suite's selection glob, without the engine. Fast: one or two ops, few samples, the CPU as the device."""
import json
import os
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, INSTALLED


def events_of(stdout):
    """The worker's events (docs/python-worker.md), one JSON object per line; every line must be one."""
    return [json.loads(line) for line in stdout.splitlines()]


def worker(request, timeout=240):
    """Run one request through a fresh worker: (returncode, its events, stderr)."""
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BUILD_DIR / "python"), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "crossdev.worker"], input=json.dumps(request) + "\n",
                          capture_output=True, text=True, env=env, timeout=timeout)
    return proc.returncode, events_of(proc.stdout), proc.stderr


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
    assert lines[-1] == {"event": "done"}
    bad = [(e["row"], e["key"], e["message"]) for e in lines if e["event"] == "bad"]
    assert bad[0][:2] == (0, "opinfo") and "no OpInfo named 'addd'" in bad[0][2] and "nearest: add" in bad[0][2]
    assert bad[1][:2] == (0, "dtypes") and "'float33'" in bad[1][2] and "float32" in bad[1][2]
    assert bad[2][:2] == (0, "checks") and "forward, backward" in bad[2][2]
    assert bad[3][:2] == (1, "opinfo") and "selects no OpInfo" in bad[3][2]
    assert len(bad) == 4, "row 2 (add) is good"


def test_run_streams_plan_start_case_done_as_the_engines_events():
    rc, lines, err = worker(run_request(opinfo="add", checks=["forward", "backward"]))
    assert rc == 0, err
    assert lines[0] == {"event": "plan", "count": 2}
    assert lines[1] == {"event": "start", "index": 0, "id": "t.row/add/cpu/float32/forward"}
    case = lines[2]
    assert case["event"] == "case" and case["id"] == "t.row/add/cpu/float32/forward"
    assert case["status"] == "pass", f"the status by name (case_statuses.json): {case!r}"
    assert case["execution"] == "real", "the execution by name"
    assert case["metrics"]["samples"] == 2, "max_samples: 2 of op_db's many samples of add"
    assert case["details"]["tolerance_source"] == "crossdev per-dtype table"
    assert lines[3] == {"event": "start", "index": 1, "id": "t.row/add/cpu/float32/backward"}
    assert lines[-1] == {"event": "done"} and len(lines) == 6


def _cases(lines):
    return {e["id"]: e for e in lines if e["event"] == "case"}


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
    assert lines[0] == {"event": "plan", "count": 2}, "the plan is the whole row's, so the engine knows where it stands"
    assert lines[1]["event"] == "start" and lines[1]["index"] == 1 and lines[-1] == {"event": "done"}
    assert [e["index"] for e in lines if e["event"] == "start"] == [1]


def test_a_library_that_cannot_load_is_fatal_naming_it_before_the_suite_runs(tmp_path):
    """The process setup every Python suite gets (crossdev.worker.prepare_process): --load-library's
    paths are loaded before the suite; one that cannot load is FATAL naming it, never ignored."""
    not_a_library = tmp_path / "libnot_a_library.so"
    not_a_library.write_text("not an ELF file")
    rc, lines, err = worker(dict(run_request(), libraries=[str(not_a_library)]))
    assert rc == 0, err
    assert lines[0]["event"] == "fatal", lines
    assert lines[0]["message"].startswith(f"cannot load '{not_a_library}' (--load-library)"), lines
    assert lines[1:] == [{"event": "done"}], "nothing of the suite ran"


def test_an_unknown_suite_is_fatal_naming_the_suites():
    rc, lines, err = worker({"request": "run", "suite": "nosuch"})
    assert lines == [{"event": "fatal", "message": "unknown Python suite 'nosuch'; expected one of claims, models, opinfo"},
                     {"event": "done"}]


def test_a_request_that_is_not_json_is_fatal():
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = str(BUILD_DIR / "python")
    proc = subprocess.run([sys.executable, "-m", "crossdev.worker"], input="{not json\n", capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, "a bad request is answered; the worker goes on serving"
    lines = events_of(proc.stdout)
    assert lines[0]["event"] == "fatal" and lines[0]["message"].startswith("the request is not JSON"), lines
    assert lines[1:] == [{"event": "done"}], lines


def test_no_request_at_all_is_fatal():
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = str(BUILD_DIR / "python")
    proc = subprocess.run([sys.executable, "-m", "crossdev.worker"], input="", capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 2
    (fatal,) = events_of(proc.stdout)
    assert fatal["event"] == "fatal" and fatal["message"].startswith("no request on stdin"), proc.stdout


def test_one_worker_serves_requests_in_turn_each_answer_ending_with_done():
    """The engine keeps one worker per process (runner/python_rows.h): it reads a request, answers it
    up to `done`, then reads the next, until its stdin closes; a `fatal` answer does not end it."""
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BUILD_DIR / "python"), env.get("PYTHONPATH")]))
    requests = [run_request(opinfo="add"), {"request": "run", "suite": "nosuch"}, run_request(opinfo="sin", start=0)]
    proc = subprocess.run([sys.executable, "-m", "crossdev.worker"],
                          input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                          env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr
    lines = events_of(proc.stdout)
    answers, current = [], []
    for line in lines:
        current.append(line)
        if line == {"event": "done"}:
            answers.append(current)
            current = []
    assert current == [] and len(answers) == 3, lines
    assert answers[0][0] == {"event": "plan", "count": 1} and answers[0][2]["id"] == "t.row/add/cpu/float32/forward"
    assert answers[1][0]["event"] == "fatal" and answers[1][0]["message"].startswith("unknown Python suite 'nosuch'")
    assert answers[2][0] == {"event": "plan", "count": 1} and answers[2][2]["id"] == "t.row/sin/cpu/float32/forward"
    assert answers[2][2]["status"] == "pass"


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
    assert lines[0]["event"] == "fatal" and lines[0]["message"].startswith("the glob 'nosuchop*' selects no OpInfo"), lines
    assert lines[1:] == [{"event": "done"}], "no plan: never an empty, silently green row"


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
