"""`suite: opinfo` rows through the engine (`crossdev run`): torch's OpInfo samples on the simulated
device against the CPU, cases in the bundle and JUnit, a crashing op isolated to its case, bad input
exit 2 with file:line (docs/opinfo.md). Fast: two or three ops, at most 3 samples each."""
import json
import textwrap

import pytest

from conftest import requires_sim

pytestmark = requires_sim  # sim is kept out of a process with a real accelerator


def write_matrix(tmp_path, rows, name="opinfo_t.yaml"):
    path = tmp_path / name
    path.write_text("suite: opinfo\ncases:\n" + textwrap.indent(textwrap.dedent(rows).strip("\n"), "  ") + "\n")
    return path


ROW = '- {{id: t.{id}, source: "issue 24", intent: "test", opinfo: "{opinfo}", devices: [mps], dtypes: [{dtypes}], ' \
      'checks: [{checks}], max_samples: 3}}'


def run(cli, tmp_path, matrix, *extra):
    bundle, junit = tmp_path / "b.json", tmp_path / "j.xml"
    proc = cli("run", "--matrix", matrix, "--simulate", "mps", "--out", bundle, "--junit", junit, *extra)
    cases = json.loads(bundle.read_text())["cases"] if bundle.exists() else []
    return proc, {c["id"]: c for c in cases}, junit


@pytest.fixture(scope="module")
def clean_add_run(cli, tmp_path_factory):
    """add on sim, forward and backward: the row t.add of a matrix whose other row, t.gone, --filter
    leaves out; expectations/opinfo/mps.yaml has an entry for t.gone only."""
    tmp_path = tmp_path_factory.mktemp("clean_add")
    matrix = write_matrix(tmp_path, "\n".join([
        ROW.format(id="add", opinfo="add", dtypes="float32", checks="forward, backward"),
        ROW.format(id="gone", opinfo="sin", dtypes="float32", checks="forward")]))
    (tmp_path / "expectations" / "opinfo").mkdir(parents=True)
    (tmp_path / "expectations" / "opinfo" / "mps.yaml").write_text(
        'expectations:\n  - {match: "t.gone/*", status: xfail, reason: "a row this run leaves out", class: numerics}\n')
    return run(cli, tmp_path, matrix, "--filter", "t.add")


def test_a_clean_op_passes_on_sim_against_the_cpu_forward_and_backward(clean_add_run):
    proc, cases, junit = clean_add_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(cases) == ["t.add/add/mps/float32/backward", "t.add/add/mps/float32/forward"]
    for case in cases.values():
        assert case["status"] == "pass", case
        assert case["execution"] == "simulated" and case["device"] == "sim:0"
        assert case["suite"] == "opinfo" and case["row_id"] == "t.add" and case["file"].endswith("opinfo_t.yaml")
        assert case["metrics"]["samples"] == 3 and case["metrics"]["failing_samples"] == 0, "max_samples: 3"
        assert case["details"]["tolerance_source"] == "crossdev per-dtype table"
    assert "t.add/add/mps/float32/backward" in junit.read_text()


def test_a_run_that_leaves_a_row_out_calls_no_entry_stale(clean_add_run):
    """The entry for t.gone matches no case of this run, but --filter left its row out: not stale."""
    proc, cases, junit = clean_add_run
    assert "stale expectation" not in proc.stdout, proc.stdout
    assert "stale_expectations" not in json.loads((junit.parent / "b.json").read_text())


def test_an_entry_that_matches_no_case_of_a_whole_run_is_reported_stale(faulty_sim_run):
    """faulty_sim_run ran every row of its folder: t.gone/* (line 6) matches none of its cases; the entry
    for real mps only (line 5) is not this simulated run's to judge."""
    proc, cases, junit = faulty_sim_run
    where = f"{junit.parent / 'expectations' / 'opinfo' / 'mps.yaml'}:6"
    assert f"warning: {where}: stale expectation 't.gone/*' (xfail, kind mps)" in proc.stdout, proc.stdout
    stale = json.loads((junit.parent / "b.json").read_text())["stale_expectations"]
    assert stale == [{"where": where, "match": "t.gone/*", "status": "xfail", "reason": "a renamed row",
                      "device_kind": "mps"}]


def test_an_absent_device_kind_is_not_run_with_the_reason(faulty_sim_run):
    """t.absent names xpu, which the run (--simulate mps) does not have (it shares faulty_sim_run)."""
    proc, cases, _ = faulty_sim_run
    (case,) = [c for c in cases.values() if c["row_id"] == "t.absent"]
    assert case["id"] == "t.absent/sin/xpu/float32/forward", case
    assert case["status"] == "skip" and case["execution"] == "not_run" and "--simulate xpu" in case["message"], case


BAD_ROWS = [  # (field, value, words): one row each, on lines 3, 4, ... of one matrix
    ("opinfo", "nosuchop*", ["selects no OpInfo"]),
    ("opinfo", "tahn", ["no OpInfo named 'tahn'", "nearest: tan, tanh"]),
    ("dtypes", "float33", ["unknown dtype 'float33'", "float32"]),
    ("checks", "sideways", ["unknown check 'sideways'", "forward, backward"]),
]


@pytest.fixture(scope="module")
def bad_rows_run(cli, tmp_path_factory):
    """One run of a matrix whose every row has one bad value: the check names each, with its file:line."""
    tmp_path = tmp_path_factory.mktemp("bad_rows")
    rows = []
    for i, (field, value, _) in enumerate(BAD_ROWS):
        fields = {"id": f"bad{i}", "opinfo": "sin", "dtypes": "float32", "checks": "forward"}
        fields[field] = value
        rows.append(ROW.format(**fields))
    matrix = write_matrix(tmp_path, "\n".join(rows))
    return matrix, *run(cli, tmp_path, matrix)


@pytest.mark.parametrize("index", range(len(BAD_ROWS)), ids=[f"{f}-{v}" for f, v, _ in BAD_ROWS])
def test_bad_input_exits_2_naming_file_line_and_the_valid_choices(bad_rows_run, index):
    matrix, proc, cases, _ = bad_rows_run
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith(f"{matrix}:{3 + index}: row 't.bad{index}': ")]
    for word in BAD_ROWS[index][2]:
        assert word in line, proc.stderr
    assert not cases, "nothing ran"


def test_an_unknown_device_kind_is_bad_input_at_load(cli, tmp_path):
    matrix = write_matrix(tmp_path, ROW.format(id="k", opinfo="sin", dtypes="float32", checks="forward")
                          .replace("[mps]", "[gpu9]"))
    proc, _, _ = run(cli, tmp_path, matrix)
    assert proc.returncode == 2 and f"{matrix}:3:" in proc.stderr and "unknown device kind 'gpu9'" in proc.stderr


def test_the_pytest_plugin_collects_one_item_per_case_and_loads_its_libraries_into_the_worker(tmp_path, built_library):
    """One item per case; --crossdev-load-library reaches the Python worker, as `crossdev run
    --load-library` does: the library's tan kernel for sim is the one judged (it segfaults: a crash),
    and tanh, on the sim backend's own kernel, passes. The opinfo expectations become markers: tan's
    xfail entry is a strict xfail item (it would be XPASS(strict), a failure, if tan ran sim's kernel)."""
    from plugin_runner import run_pytest
    faults = built_library("crossdev_test_opinfo_faults")
    matrix = write_matrix(tmp_path, ROW.format(id="tan", opinfo="tan*", dtypes="float32", checks="forward"))
    (tmp_path / "expectations" / "opinfo").mkdir(parents=True)
    (tmp_path / "expectations" / "opinfo" / "mps.yaml").write_text(
        'expectations:\n  - {match: "t.tan/tan/*", status: xfail, reason: "tan segfaults on sim", class: crash}\n')
    bundle = tmp_path / "bundle.json"
    proc = run_pytest(str(matrix), "--crossdev-simulate", "mps", "--crossdev-load-library", str(faults), "-q", "-rA",
                      "--crossdev-bundle", str(bundle), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "XFAIL opinfo_t.yaml::t.tan/tan/mps/float32/forward" in proc.stdout, proc.stdout
    tan = {c["id"]: c for c in json.loads(bundle.read_text())["cases"]}["t.tan/tan/mps/float32/forward"]
    assert tan["status"] == "xfail" and "signal 11" in tan["message"], tan
    assert "PASSED [simulated] opinfo_t.yaml::t.tan/tanh/mps/float32/forward" in proc.stdout, proc.stdout
    assert "1 passed, 1 xfailed" in proc.stdout and "did not announce" not in proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def faulty_sim_run(cli, tmp_path_factory, built_library):
    """One engine run for the variant, expectation and absent-kind tests (each run imports op_db twice):
    the faults library on sim (tan segfaults; tanh_ off by 1/256, functional tanh and tanh.out right), with
    expectations/opinfo/mps.yaml next to the matrix, and a row for xpu, which this run does not have."""
    tmp_path = tmp_path_factory.mktemp("faulty_sim")
    faults = built_library("crossdev_test_opinfo_faults")
    matrix = write_matrix(tmp_path, "\n".join([
        ROW.format(id="v", opinfo="tanh", dtypes="float32", checks="forward").replace(
            "max_samples: 3", "max_samples: 3, variants: [function, inplace, out]"),
        ROW.format(id="x", opinfo="tan", dtypes="float32", checks="forward"),
        ROW.format(id="tan", opinfo="tan*", dtypes="float32", checks="forward"),
        ROW.format(id="absent", opinfo="sin", dtypes="float32", checks="forward").replace("[mps]", "[xpu]"),
    ]))
    (tmp_path / "expectations" / "opinfo").mkdir(parents=True)
    (tmp_path / "expectations" / "opinfo" / "mps.yaml").write_text(textwrap.dedent("""\
        expectations:
          - {match: "t.v/tanh/mps/float32/forward/inplace", status: xfail, reason: "tanh_ is off", class: numerics}
          - {match: "t.v/tanh/mps/float32/forward", status: xfail, reason: "fixed since", class: numerics}
          - {match: "t.x/tan/*", status: skip, reason: "segfaults on sim", class: crash}
          - {match: "t.v/*", status: xfail, reason: "on real mps only", execution: real}
          - {match: "t.gone/*", status: xfail, reason: "a renamed row", class: numerics}
        """))
    return run(cli, tmp_path, matrix, "--load-library", faults)


def test_a_segfaulting_op_is_its_cases_crash_and_the_row_goes_on(faulty_sim_run):
    proc, cases, _ = faulty_sim_run  # aten::tan on sim raises SIGSEGV
    crash = cases["t.tan/tan/mps/float32/forward"]
    assert crash["status"] == "crash" and "signal 11" in crash["message"], crash
    assert crash["row_id"] == "t.tan" and crash["file"].endswith("opinfo_t.yaml")
    assert cases["t.tan/tanh/mps/float32/forward"]["status"] == "pass", "the next op ran in a new worker"


def test_inplace_and_out_variants_run_their_own_kernels_as_separate_cases(faulty_sim_run):
    proc, cases, _ = faulty_sim_run
    inplace = cases["t.v/tanh/mps/float32/forward/inplace"]
    assert inplace["details"]["variant"] == "inplace" and inplace["metrics"]["failing_samples"] >= 1, inplace
    assert inplace["metrics"]["failing_samples"] == inplace["metrics"]["samples"], "every sample of tanh_ is off"
    out = cases["t.v/tanh/mps/float32/forward/out"]
    assert out["status"] == "pass" and out["details"]["variant"] == "out", out
    function = cases["t.v/tanh/mps/float32/forward"]
    assert out["metrics"]["samples"] == function["metrics"]["samples"] >= 1, "the same samples as the function"


def test_expectations_turn_a_failure_into_xfail_a_pass_into_xpass_and_skip_unrun(faulty_sim_run):
    proc, cases, _ = faulty_sim_run
    assert proc.returncode == 1, "the unexpected pass (and the crash) gate"
    inplace = cases["t.v/tanh/mps/float32/forward/inplace"]
    assert inplace["status"] == "xfail" and "tanh_ is off" in inplace["message"], inplace
    assert inplace["details"]["expected_class"] == "numerics"
    function = cases["t.v/tanh/mps/float32/forward"]
    assert function["status"] == "xpass" and "remove the expectation" in function["message"], function
    tan = cases["t.x/tan/mps/float32/forward"]
    assert tan["status"] == "skip" and tan["message"].startswith("expected skip (segfaults on sim, "), tan
    assert "expectations/opinfo/mps.yaml:4" in tan["message"]
    assert cases["t.v/tanh/mps/float32/forward/out"]["status"] == "pass", "an entry for real mps is not for sim"


def test_a_bad_expectations_file_is_exit_2_naming_file_line(cli, tmp_path):
    matrix = write_matrix(tmp_path, ROW.format(id="b", opinfo="sin", dtypes="float32", checks="forward"))
    (tmp_path / "expectations" / "opinfo").mkdir(parents=True)
    bad = tmp_path / "expectations" / "opinfo" / "mps.yaml"
    bad.write_text("expectations:\n  - {match: '*', status: xfail, reason: r, class: slow}\n")
    proc, cases, _ = run(cli, tmp_path, matrix)
    assert proc.returncode == 2 and f"{bad}:2:" in proc.stderr and "class 'slow'" in proc.stderr, proc.stderr
    assert not cases


def test_expectations_accept_refuses_under_ci(faulty_sim_run, cli):
    _, _, junit = faulty_sim_run
    file = junit.parent / "expectations" / "opinfo" / "mps.yaml"
    before = file.read_text()
    proc = cli("expectations", "accept", junit.parent / "b.json", env={"CI": "true"})
    assert proc.returncode == 2 and "refused under CI=true" in proc.stderr, proc.stderr
    assert file.read_text() == before


def test_expectations_accept_adds_new_failures_removes_passes_and_keeps_hand_written_entries(faulty_sim_run, cli):
    import yaml
    _, _, junit = faulty_sim_run
    proc = cli("expectations", "accept", junit.parent / "b.json", env={"CI": ""})
    assert proc.returncode == 0, proc.stderr
    file = junit.parent / "expectations" / "opinfo" / "mps.yaml"
    entries = yaml.safe_load(file.read_text())["expectations"]
    assert [e["match"] for e in entries] == [
        "t.v/tanh/mps/float32/forward/inplace",  # still fails: kept as written
        "t.x/tan/*",                             # skip: never run, kept
        "t.v/*",                                 # for real mps only: kept
        "t.tan/tan/mps/float32/forward",         # the new crash
    ], file.read_text()  # and "t.v/tanh/mps/float32/forward", which passes now, and the stale "t.gone/*" are gone
    assert "t.gone/* (stale: matches no case of a run that covered it)" in proc.stdout, proc.stdout
    assert entries[0] == {"match": "t.v/tanh/mps/float32/forward/inplace", "status": "xfail", "reason": "tanh_ is off",
                          "class": "numerics"}
    assert entries[3]["status"] == "xfail" and entries[3]["class"] == "crash"
    assert entries[3]["execution"] == "simulated" and "signal 11" in entries[3]["reason"]


def test_expectations_accept_collapses_a_whole_op_or_dtype_of_one_class_to_a_glob():
    from crossdev.expectations import _collapse, failure_class

    def failure(dtype, check, cls):
        return {"id": f"r/add/mps/{dtype}/{check}", "keys": ["r/add/mps", f"r/add/mps/{dtype}"],
                "class": cls, "message": "m", "execution": "simulated"}
    every = [failure("float16", "forward", "numerics"), failure("float16", "backward", "numerics"),
             failure("bfloat16", "forward", "numerics")]
    assert [m for m, *_ in _collapse(every, {"r/add/mps": 3, "r/add/mps/float16": 2})] == ["r/add/mps/*"]
    assert [m for m, *_ in _collapse(every, {"r/add/mps": 4, "r/add/mps/float16": 2, "r/add/mps/bfloat16": 2})] == \
        ["r/add/mps/float16/*", "r/add/mps/bfloat16/forward"], "float32 passed, and one bfloat16 case"
    mixed = [failure("float16", "forward", "numerics"), failure("float16", "backward", "crash")]
    assert [m for m, *_ in _collapse(mixed, {"r/add/mps": 2, "r/add/mps/float16": 2})] == \
        ["r/add/mps/float16/forward", "r/add/mps/float16/backward"], "two classes: no glob"
    assert failure_class({"status": "error", "message": "RuntimeError: \"tanh\" not implemented for 'Half'"}) == \
        "dtype_unsupported"
    assert failure_class({"status": "error", "message": "NotImplementedError: Could not run 'aten::x'"}) == "unimplemented"
    assert failure_class({"status": "crash", "message": "signal 11"}) == "crash"
    assert failure_class({"status": "fail", "message": "1 of 3 samples differ"}) == "numerics"


# A shard runs only its share of the ops, and the shards merged are the unsharded run:
# test_opinfo_shards.py (the split itself: test_opinfo_worker.py).


@pytest.mark.parametrize("spec", ["3/2", "0/2", "1/0", "2", "a/b", "1/2x"])
def test_a_bad_shard_is_exit_2_naming_the_form(cli, tmp_path, spec):
    matrix = write_matrix(tmp_path, ROW.format(id="s", opinfo="sin", dtypes="float32", checks="forward"))
    proc, cases, _ = run(cli, tmp_path, matrix, "--shard", spec)
    assert proc.returncode == 2 and f"--shard '{spec}': expected I/N with 1 <= I <= N" in proc.stderr, proc.stderr


def test_rows_of_a_suite_that_does_not_shard_run_in_shard_1_only(cli, tmp_path, repo_root):
    ids = {}
    for spec in (None, "1/2", "2/2"):
        bundle = tmp_path / f"{spec or 'all'}.json".replace("/", "of")
        proc = cli("run", "--matrix", repo_root / "matrices" / "context.yaml", "--out", bundle,
                   *(["--shard", spec] if spec else []))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        ids[spec] = [c["id"] for c in json.loads(bundle.read_text())["cases"]]
    assert ids[None] and ids["1/2"] == ids[None] and ids["2/2"] == []
