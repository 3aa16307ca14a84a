"""crossdev.pytest_plugin: collection from the C++ catalog, expectations as markers, pytest's own
options (-k, -x, --lf, --junitxml, -n), the bundle, and bad input. Each runs pytest in a
subprocess, as a user would (plugin_runner.py)."""
import json
import pathlib
import textwrap

import pytest
import yaml

from plugin_runner import BUILD_DIR, ROOT, collected_ids, junit_cases, make_report_simulate, run_pytest

pytestmark = pytest.mark.schedule_first  # about 40 pytest sessions over the catalog: minutes (conftest.py)

FAILING = ROOT / "tests" / "fixtures" / "failing_matrices" / "wrong_expectations.yaml"
BAD_MATRIX = ROOT / "tests" / "fixtures" / "bad_matrices" / "bad_device.yaml"
MUTANTS = BUILD_DIR / "lib" / "libcrossdev_mutants.so"


def yaml_row_ids():
    """Row ids of every matrix file, read with PyYAML: a reader independent of the C++ catalog."""
    ids = {}
    for path in sorted((ROOT / "matrices").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if isinstance(doc, dict) and "suite" in doc:
            ids[f"matrices/{path.name}"] = [row["id"] for row in doc["cases"]]
    return ids


def test_collects_every_row_of_every_suite_with_catalog_ids():
    r = run_pytest("matrices/", "--collect-only", "-q", "--crossdev-simulate", make_report_simulate())
    assert r.returncode == 0, r.stdout + r.stderr
    items = collected_ids(r)
    assert len(items) == len(set(items)), "duplicate node ids"
    # The example id, exactly as the C++ catalog names it.
    assert ("matrices/ops.yaml", "ops.modulate/cuda/float32/odd_tail/fused") in items
    # Two readers: every row PyYAML sees has its item(s) in its file (an ops row one per case,
    # "<row id>/..."), and no item belongs to a row PyYAML does not know.
    rows = yaml_row_ids()
    assert {path for path, _ in items} == set(rows)
    for path, ids in rows.items():
        names = [name for p, name in items if p == path]
        for row_id in ids:
            mine = [n for n in names if n == row_id or n.startswith(row_id + "/")]
            assert mine, f"{path}: row {row_id} has no item"
        assert all(any(n == i or n.startswith(i + "/") for i in ids) for n in names)
    ops = [name for path, name in items if path == "matrices/ops.yaml"]
    assert len(ops) > len(rows["matrices/ops.yaml"]), "ops rows expand into one item per case"


def test_failures_carry_the_engine_message_and_exit_1(tmp_path):
    r = run_pytest(FAILING, "-q", "--junitxml", tmp_path / "j.xml")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "3 failed, 1 passed" in r.stdout
    assert "wrong.device" in r.stdout and "expected" in r.stdout
    cases = junit_cases(tmp_path / "j.xml")
    # `crossdev run`'s classname: the execution label is part of it (these hosts are hypothetical).
    assert {c[0] for c in cases} == {"crossdev.redirect.simulated"}
    assert sorted((c[1], c[2]) for c in cases) == [("right.control", "passed"), ("wrong.action", "failure"),
                                                   ("wrong.device", "failure"), ("wrong.sequence-step", "failure")]


def test_dash_x_stops_at_the_first_failure():
    r = run_pytest(FAILING, "-q", "-x")
    assert r.returncode == 1
    assert "1 failed" in r.stdout and "passed" not in r.stdout.splitlines()[-1]


def test_dash_k_selects_cases_by_id():
    r = run_pytest(FAILING, "-q", "-k", "right")
    assert r.returncode == 0, r.stdout
    assert "1 passed, 3 deselected" in r.stdout
    r = run_pytest("matrices/", "-q", "--collect-only", "-k", "ops.modulate and cuda and odd_tail and fused",
                   "--crossdev-simulate", "cuda:1")
    assert [name for _, name in collected_ids(r)] == [f"ops.modulate/cuda/{d}/odd_tail/fused"
                                                      for d in ("float32", "float16", "bfloat16", "float64")]


def test_lf_reruns_the_last_failures(tmp_path):
    cache = ["-o", f"cache_dir={tmp_path / 'cache'}"]
    first = run_pytest(FAILING, "-q", *cache, cache=True)
    assert first.returncode == 1
    again = run_pytest(FAILING, "-q", "--lf", *cache, cache=True)
    assert again.returncode == 1
    assert "3 failed, 1 deselected" in again.stdout, again.stdout


def test_xdist_runs_the_cases_in_workers_with_the_same_verdicts(tmp_path, cli):
    pytest.importorskip("xdist")
    r = run_pytest(FAILING, "matrices/redirect_table.yaml", "-q", "-n", "2",
                   "--crossdev-bundle", tmp_path / "plugin.json", "--junitxml", tmp_path / "j.xml")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "bringing up nodes" in r.stdout  # xdist ran it
    plugin = json.loads((tmp_path / "plugin.json").read_text())
    want = {}
    for matrix in (FAILING, ROOT / "matrices" / "redirect_table.yaml"):
        out = tmp_path / f"{matrix.stem}.json"
        c = cli("run", "--matrix", matrix, "--out", out, "--quiet")
        assert c.returncode in (0, 1), c.stderr
        want.update({case["id"]: case["status"] for case in json.loads(out.read_text())["cases"]})
    assert {case["id"]: case["status"] for case in plugin["cases"]} == want
    assert len(junit_cases(tmp_path / "j.xml")) == len(want)


def write_ops_matrix(folder):
    """One ops row, four cases on the CPU; expectations: an xfail the mutant makes true, an xfail
    that passes (strict: fails), a skip, and a stale entry."""
    (folder / "expectations" / "ops").mkdir(parents=True)
    (folder / "ops.yaml").write_text(textwrap.dedent("""\
        suite: ops
        cases:
          - {id: t.gelu, source: "test", intent: "expectations become markers", op: gelu_tanh,
             devices: [cpu], dtypes: [float32], shape_sets: [basic, odd_tail], impls: [fused, fallback]}
        """))
    (folder / "expectations" / "ops" / "cpu.yaml").write_text(textwrap.dedent("""\
        expectations:
          - {match: "t.gelu/cpu/float32/basic/fused", status: xfail, reason: "the mutant breaks the fused kernel"}
          - {match: "t.gelu/cpu/float32/basic/fallback", status: xfail, reason: "believed broken, is not"}
          - {match: "t.gelu/cpu/float32/odd_tail/*", status: skip, reason: "skipped on purpose"}
          - {match: "t.nothing/*", status: xfail, reason: "written for a row that is gone"}
        """))


def test_expectations_become_strict_xfail_and_skip_markers(tmp_path, cli):
    folder = tmp_path / "matrices"  # a folder named `matrices`, named on the command line, is a catalog
    write_ops_matrix(folder)
    env = {"CROSSDEV_MUTANT": "gelu_tanh.truncated_beta"}
    r = run_pytest(folder, "-v", "-rxXs", "--crossdev-load-library", MUTANTS, "--crossdev-bundle",
                   tmp_path / "plugin.json", env=env)
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    assert "1 failed, 2 skipped, 1 xfailed" in out
    assert "XFAIL" in out and "the mutant breaks the fused kernel" in out
    assert "[XPASS(strict)] believed broken, is not" in out
    assert "skipped on purpose" in out
    assert "stale expectation 't.nothing/*'" in out  # a pytest warning, in the warnings summary
    # The same folder through `crossdev run` gives the same verdicts.
    c = cli("run", "--matrix", folder, "--out", tmp_path / "cli.json", "--load-library", MUTANTS, env=env)
    assert c.returncode == 1, c.stdout + c.stderr
    statuses = {case["id"]: case["status"] for case in json.loads((tmp_path / "cli.json").read_text())["cases"]}
    plugin = {case["id"]: case["status"] for case in json.loads((tmp_path / "plugin.json").read_text())["cases"]}
    assert plugin == statuses
    assert sorted(statuses.values()) == ["skip", "skip", "xfail", "xpass"]


@pytest.mark.parametrize("args, names", [
    (["--crossdev-import", "no_such_module_xyz"], ["no_such_module_xyz", "importable module"]),
    (["--crossdev-load-library", "/nonexistent/libx.so"], ["/nonexistent/libx.so", "shared library"]),
    (["--crossdev-picker", "no_such_module_xyz:get_device", "--crossdev-picker-preset", "cuda-first"],
     ["no_such_module_xyz"]),
    (["--crossdev-picker", "seed004_get_device:nope", "--crossdev-picker-preset", "cuda-first"],
     ["'nope'", "get_device"]),
    (["--crossdev-picker", "seed004_get_device:get_device", "--crossdev-picker-preset", "gpu-first"],
     ["'gpu-first'", "torchdevice", "cuda-first", "hf-accelerate", "lightning"]),
    (["--crossdev-device", "gpu"], ["--crossdev-device", "'gpu'", "cpu", "cuda", "mps", "xpu", "xla"]),
    (["--crossdev-simulate", "cuda:x"], ["--crossdev-simulate", "cuda:x", "cpu, cuda, mps, xpu, xla"]),
])
def test_bad_option_is_a_usage_error_naming_it_and_the_choices(args, names):
    from plugin_runner import PICKERS
    r = run_pytest("matrices/redirect_table.yaml", "--collect-only", "-q", *args, extra_path=[PICKERS])
    assert r.returncode == 4, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    for name in names:
        assert name in r.stderr, r.stderr


def test_malformed_matrix_is_a_collection_error_with_file_and_line():
    r = run_pytest(BAD_MATRIX, "-q")
    assert r.returncode == 2, r.stdout + r.stderr
    line, message = BAD_MATRIX.read_text().splitlines()[0].split("expect-error: ", 1)[1].split(": ", 1)
    assert f"bad_device.yaml:{line}: " in r.stdout and message in r.stdout


def test_device_option_keeps_the_cases_of_those_kinds():
    r = run_pytest("matrices/ops.yaml", "--collect-only", "-q", "--crossdev-device", "tpu")
    names = [name for _, name in collected_ids(r)]
    assert names and all(n.split("/")[1] == "xla" for n in names)
    assert "deselected" in r.stdout


def test_a_crashing_row_under_xdist_fails_its_case_and_the_run_goes_on():
    pytest.importorskip("xdist")
    # CROSSDEV_TEST_CRASH_ROW: the test-only hooks library makes that row die like a segfaulting kernel.
    hooks = BUILD_DIR / "lib" / "libcrossdev_test_hooks.so"
    r = run_pytest(FAILING, "-q", "-n", "1", "-p", "no:faulthandler", "--crossdev-load-library", hooks,
                   env={"CROSSDEV_TEST_CRASH_ROW": "right.control"}, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "crashed" in r.stdout + r.stderr
    assert "4 failed" in r.stdout  # three wrong rows and the crashed one; nothing lost


def test_crossdev_import_registers_custom_ops_before_collection(tmp_path):
    (tmp_path / "myops.py").write_text(textwrap.dedent("""\
        import os, torch

        @torch.library.custom_op("myops_test::twice", mutates_args=())
        def twice(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        # What the collection that follows will see: the op is in torch.ops.
        open(os.environ["MYOPS_MARK"], "w").write(str(torch.ops.myops_test.twice(torch.ones(2)).tolist()))
        """))
    mark = tmp_path / "mark.txt"
    r = run_pytest(FAILING, "--collect-only", "-q", "--crossdev-import", "myops", extra_path=[tmp_path],
                   env={"MYOPS_MARK": str(mark)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert mark.read_text() == "[2.0, 2.0]"


# ---------------------------------------------------------------------------- which YAML files are matrices

RIGHT_ROW = textwrap.dedent("""\
    suite: redirect
    cases:
      - {{id: {id}, source: "test_pytest_plugin.py", intent: "collected when asked",
         host: mps, request: cpu, expect: "mps:0", action: redirected}}
    """)


@pytest.fixture()
def project(tmp_path):
    """A user's tree: tests with unrelated YAML (one in a folder named `matrices`, reached by
    walking), a top-level matrices/ and a checks/ folder of matrices."""
    (tmp_path / "tests" / "data").mkdir(parents=True)
    (tmp_path / "tests" / "matrices").mkdir()
    (tmp_path / "tests" / "test_plain.py").write_text("def test_plain():\n    pass\n")
    (tmp_path / "tests" / "data" / "settings.yaml").write_text("not: [a, crossdev, matrix\n")
    (tmp_path / "tests" / "matrices" / "rows.yaml").write_text("suite: [broken\n")
    for folder, row in (("matrices", "top.row"), ("checks", "checks.row")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "rows.yaml").write_text(RIGHT_ROW.format(id=row))
    return tmp_path


COLLECTION_CASES = [
    # Walking finds YAML files: none is a matrix, whatever its folder is called.
    (["tests"], None, [("tests/test_plain.py", "test_plain")]),
    # A folder named `matrices`, named on the command line.
    (["matrices"], None, [("matrices/rows.yaml", "top.row")]),
    # Another folder named on the command line is not a catalog ...
    (["checks"], None, []),
    # ... unless crossdev_matrices lists it (relative to the ini file's folder, or the rootdir).
    (["checks"], "checks", [("checks/rows.yaml", "checks.row")]),
    # A YAML file named on the command line always is one.
    (["checks/rows.yaml"], None, [("checks/rows.yaml", "checks.row")]),
    # With no argument pytest walks the rootdir: the ini's catalogs are collected, nothing else.
    ([], "checks", [("checks/rows.yaml", "checks.row"), ("tests/test_plain.py", "test_plain")]),
    # An ini catalog that collection does not reach leaves the session alone.
    (["tests"], "checks", [("tests/test_plain.py", "test_plain")]),
]


@pytest.mark.parametrize("args, ini, ini_style, want", [
    (args, ini, style, want) for args, ini, want in COLLECTION_CASES for style in (["-o", "pytest.ini"] if ini else [None])])
def test_matrices_are_collected_only_when_asked(project, args, ini, ini_style, want):
    extra = []
    if ini_style == "-o":
        extra = ["-o", f"crossdev_matrices={ini}"]
    elif ini_style == "pytest.ini":
        (project / "pytest.ini").write_text(f"[pytest]\ncrossdev_matrices =\n    {ini}\n")
    r = run_pytest(*args, "--collect-only", "-q", *extra, cwd=project)
    assert r.returncode in (0, 5), r.stdout + r.stderr
    assert sorted(collected_ids(r)) == sorted(want), r.stdout


def test_an_explicit_yaml_file_that_is_not_a_matrix_is_a_collection_error(project):
    r = run_pytest("tests/data/settings.yaml", "-q", cwd=project)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "settings.yaml" in r.stdout


def test_a_missing_crossdev_matrices_entry_is_a_usage_error(project):
    r = run_pytest("tests", "-q", "-o", "crossdev_matrices=nowhere", cwd=project)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "crossdev_matrices: 'nowhere'" in r.stderr and "does not exist" in r.stderr, r.stderr


def test_a_projects_own_device_and_simulate_options_do_not_clash(project):
    """Many projects define --device in their conftest; the plugin's options all carry --crossdev-."""
    (project / "tests" / "conftest.py").write_text(textwrap.dedent("""\
        def pytest_addoption(parser):
            parser.addoption("--device", default="cpu")
            parser.addoption("--simulate", default="")
        """))
    (project / "tests" / "test_plain.py").write_text(textwrap.dedent("""\
        def test_plain(pytestconfig):
            assert pytestconfig.getoption("--device") == "cuda"
            assert pytestconfig.getoption("--simulate") == "yes"
        """))
    r = run_pytest("tests", "matrices", "-q", "--device", "cuda", "--simulate", "yes", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout, r.stdout
