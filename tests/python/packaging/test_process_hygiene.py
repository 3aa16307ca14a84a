"""crossdev leaves the process it is loaded into as it was, unless asked (issue 22, item 4):
`import crossdev` imports nothing heavy and registers nothing; the `sim` backend (PrivateUse1) is
registered only by a run that simulates something (`crossdev.run_matrix(simulate=...)`,
`--crossdev-simulate`, `crossdev run --simulate`); a plugin session with no simulation changes
neither `torch.accelerator.current_accelerator()` nor the PrivateUse1 backend name, so a user's
torch_npu- or OpenReg-style backend can still register.

This project's own conftest registers sim for its in-process tests, so every check here runs in a
fresh subprocess."""
import json
import subprocess
import sys
import textwrap

from plugin_runner import ROOT, collected_ids, pytest_env, run_pytest

# What a process looks like to torch: the current accelerator and the PrivateUse1 backend's name.
STATE = textwrap.dedent("""\
    def torch_state():
        import torch
        acc = torch.accelerator.current_accelerator()
        return [None if acc is None else str(acc), torch._C._get_privateuse1_backend_name()]
    """)

# An ops row on the CPU and on kinds this host lacks (not simulated: not_run), and a redirect row.
OPS_MATRIX = textwrap.dedent("""\
    suite: ops
    cases:
      - {id: hyg.gelu, source: "test_process_hygiene.py", intent: "runs on the cpu, forward and backward",
         op: gelu_tanh, devices: [cpu, cuda, mps], dtypes: [float32], shape_sets: [basic], impls: [fused, fallback]}
    """)
REDIRECT_MATRIX = textwrap.dedent("""\
    suite: redirect
    cases:
      - {id: hyg.redirect, source: "test_process_hygiene.py", intent: "a hypothetical host, nothing registered",
         host: mps, request: cpu, expect: "mps:0", action: redirected}
    """)


def python(code, cwd=ROOT):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=pytest_env(), cwd=cwd,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_matrices(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ops.yaml").write_text(OPS_MATRIX)
    (folder / "redirect.yaml").write_text(REDIRECT_MATRIX)
    return folder


def test_import_crossdev_imports_neither_torch_nor_the_extension():
    out = python("import json, sys\nimport crossdev\n"
                 "print(json.dumps(sorted(m for m in ('torch', 'crossdev._crossdev') if m in sys.modules)))")
    assert out == []


def test_import_crossdev_and_its_api_leave_torch_as_it_was():
    out = python(STATE + textwrap.dedent("""\
        import json
        before = torch_state()
        import crossdev
        after_import = torch_state()
        crossdev.resolve(["cpu", None], host="mps")  # loads the extension
        crossdev.host_profile()
        crossdev.harness.prepare("")  # what a run that simulates nothing does first
        print(json.dumps({"before": before, "after_import": after_import, "after_use": torch_state(),
                          "sim": crossdev.sim.is_registered()}))
        """))
    assert out["after_import"] == out["before"] and out["after_use"] == out["before"], out
    assert out["before"][1] != "sim" and out["sim"] is False, out


def test_run_matrix_without_simulation_passes_and_changes_nothing(tmp_path):
    folder = write_matrices(tmp_path / "matrices")
    out = python(STATE + textwrap.dedent(f"""\
        import json
        before = torch_state()
        import crossdev
        results = crossdev.run_matrix({str(folder)!r})
        print(json.dumps({{"before": before, "after": torch_state(), "sim": crossdev.sim.is_registered(),
                          "results": results}}))
        """))
    assert out["after"] == out["before"] and out["sim"] is False, out
    results = {r["id"]: r for r in out["results"]}
    assert not [r for r in results.values() if r["status"] in ("fail", "xpass", "error", "crash")], results
    assert results["hyg.redirect"]["status"] == "pass"
    assert results["hyg.gelu/cpu/float32/basic/fused"]["status"] == "pass"
    # Kinds this host lacks are not run, with the reason, as for any absent device (this host has
    # no cuda or mps: the project's CPU machine; a real device would run them instead).
    for kind in ("cuda", "mps"):
        case = results[f"hyg.gelu/{kind}/float32/basic/fused"]
        if case["execution"] == "not_run":
            assert case["status"] == "skip" and "device not present" in case["message"], case


def test_run_matrix_that_simulates_registers_sim_first(tmp_path):
    folder = write_matrices(tmp_path / "matrices")
    out = python(STATE + textwrap.dedent(f"""\
        import json
        import crossdev
        before = torch_state()
        results = crossdev.run_matrix({str(folder)!r}, simulate="mps")
        print(json.dumps({{"before": before, "after": torch_state(), "sim": crossdev.sim.is_registered(),
                          "results": results}}))
        """))
    results = {r["id"]: r for r in out["results"]}
    mps = results["hyg.gelu/mps/float32/basic/fallback"]  # (fused: no sim kernel, not eligible)
    if out["before"][0] is None:  # no real accelerator: mps is simulated on the sim backend
        assert out["sim"] is True and out["after"][1] == "sim", out
        assert mps["status"] == "pass" and mps["execution"] == "simulated", mps
    assert results["hyg.gelu/cpu/float32/basic/fused"]["status"] == "pass"


CONFTEST = STATE + textwrap.dedent("""\
    import json
    import os

    BEFORE = torch_state()  # before crossdev's plugin is configured
    os.environ["HYGIENE_BEFORE"] = json.dumps(BEFORE)


    def pytest_sessionfinish(session, exitstatus):
        import crossdev
        with open(os.environ["HYGIENE_OUT"], "w") as f:
            json.dump({"before": BEFORE, "after": torch_state(), "sim": crossdev.sim.is_registered()}, f)
    """)

# A test collected after the matrix items: what the user's own tests see.
AFTER_TEST = STATE + textwrap.dedent("""\
    import json
    import os


    def test_the_process_is_as_it_was():
        assert torch_state() == json.loads(os.environ["HYGIENE_BEFORE"])


    def test_no_accelerator_on_a_host_without_one():
        import torch
        if json.loads(os.environ["HYGIENE_BEFORE"])[0] is None:
            assert torch.accelerator.current_accelerator() is None
    """)


def test_a_plugin_session_without_simulation_leaves_torch_as_it_was(tmp_path):
    write_matrices(tmp_path / "matrices")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_zz_after.py").write_text(AFTER_TEST)
    out_file = tmp_path / "hygiene.json"
    r = run_pytest("matrices", "test_zz_after.py", "-v", "-rs", cwd=tmp_path, env={"HYGIENE_OUT": str(out_file)})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    out = json.loads(out_file.read_text())
    assert out["after"] == out["before"] and out["sim"] is False, out
    assert "matrices/ops.yaml::hyg.gelu/cpu/float32/basic/fused PASSED" in r.stdout, r.stdout
    assert "test_zz_after.py::test_the_process_is_as_it_was PASSED" in r.stdout, r.stdout
    assert "test_zz_after.py::test_no_accelerator_on_a_host_without_one PASSED" in r.stdout, r.stdout
    if out["before"][0] is None:  # no real accelerator: the cuda cases are skipped with the reason
        assert "device not present (simulate it with --simulate cuda)" in r.stdout, r.stdout


UNRELATED_TEST = textwrap.dedent("""\
    import sys


    def test_crossdev_loaded_nothing():
        assert "torch" not in sys.modules
        assert "crossdev._crossdev" not in sys.modules
    """)


def test_a_session_that_does_not_use_the_plugin_is_untouched(tmp_path):
    """The plugin loaded (as its entry point loads it in every session), the session asking nothing
    of it: its options exist, and nothing is imported, read, registered or collected, not even the
    YAML files of a folder named `matrices` reached by walking."""
    tests = tmp_path / "tests"
    (tests / "data").mkdir(parents=True)
    (tests / "matrices").mkdir()
    (tests / "test_unrelated.py").write_text(UNRELATED_TEST)
    (tests / "data" / "settings.yaml").write_text("not: [a, crossdev, matrix\n")  # not even YAML
    (tests / "matrices" / "rows.yaml").write_text("suite: [broken\n")
    r = run_pytest("tests", "-v", cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert collected_ids(run_pytest("tests", "--collect-only", "-q", cwd=tmp_path)) == \
        [("tests/test_unrelated.py", "test_crossdev_loaded_nothing")]
    assert "crossdev:" not in r.stdout  # no report header: the plugin was not used
    help_text = run_pytest("--help", cwd=tmp_path).stdout
    for option in ("--crossdev-simulate", "--crossdev-device", "--crossdev-bundle", "crossdev_matrices"):
        assert option in help_text, option
