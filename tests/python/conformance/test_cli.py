"""The engine CLI's contract: exit codes (0 pass, 1 conformance failure, 2 bad input), file:line
errors for malformed matrices, simulated labels, and the bundle/JUnit it writes."""
import json
import pathlib
import xml.etree.ElementTree as ET

import pytest

from conftest import requires_sim

ROOT = pathlib.Path(__file__).resolve().parents[3]
BAD = sorted((ROOT / "tests/fixtures/bad_matrices").glob("*.yaml"))


def expected_error(path):
    first = path.read_text().splitlines()[0]
    line, _, text = first.removeprefix("# expect-error: ").partition(": ")
    return int(line), text


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_malformed_matrix_exits_2_with_file_line(cli, path):
    line, text = expected_error(path)
    proc = cli("run", "--matrix", path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"{path}:{line}: "), proc.stderr
    assert text in proc.stderr


def test_failing_matrix_exits_1_and_still_writes_bundle(cli, tmp_path):
    out, junit = tmp_path / "b.json", tmp_path / "j.xml"
    proc = cli("run", "--matrix", ROOT / "tests/fixtures/failing_matrices", "--out", out, "--junit", junit)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    bundle = json.loads(out.read_text())
    statuses = {c["id"]: c["status"] for c in bundle["cases"]}
    assert statuses == {"wrong.device": "fail", "wrong.action": "fail", "wrong.sequence-step": "fail",
                        "right.control": "pass"}
    assert bundle["summary"]["gates"] is True
    suites = ET.parse(junit).getroot()
    assert sum(int(s.get("failures")) for s in suites) == 3
    assert not list(tmp_path.glob("*.tmp.*")), "atomic writes leave no temporary files"


def test_project_matrices_pass_and_label_simulation(cli, tmp_path):
    # The redirect matrices: their host profiles are simulated by nature (the whole catalog, every accelerator
    # simulated, is test_pytest_plugin_verdicts.py's gate).
    out, junit = tmp_path / "b.json", tmp_path / "j.xml"
    redirect = [a for m in sorted((ROOT / "matrices").glob("redirect_*.yaml")) for a in ("--matrix", m)]
    proc = cli("run", *redirect, "--out", out, "--junit", junit, "--quiet",
               "--filter", "*", env={"CROSSDEV_SIMULATE": ""})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    bundle = json.loads(out.read_text())
    assert bundle["schema"] == "crossdev.bundle" and bundle["schema_version"] == 3
    redirect = [c for c in bundle["cases"] if c["suite"] == "redirect"]
    assert len(redirect) >= 112
    assert all(c["execution"] == "simulated" and c["simulated"] for c in redirect)
    assert all(c["status"] == "pass" for c in redirect), [c for c in redirect if c["status"] != "pass"][:3]
    for case in ET.parse(junit).getroot().iter("testcase"):
        ids = {c["id"]: c for c in bundle["cases"]}
        assert case.get("classname").endswith("." + ids[case.get("name")]["execution"])


def test_simulate_marks_devices(cli):
    proc = cli("devices", "--simulate", "cuda:2,mps", "--json")
    assert proc.returncode == 0, proc.stderr
    devices = {d["kind"]: d for d in json.loads(proc.stdout)["devices"]}
    assert devices["cpu"]["provenance"] == "real"
    for kind in ("cuda", "mps"):
        assert devices[kind]["provenance"] in ("simulated", "real")
    assert devices["cuda"]["count"] == 2 or devices["cuda"]["provenance"] == "real"


@requires_sim  # beside a real accelerator `run` does not simulate (conformance/runner/run_context.cpp)
def test_simulate_marks_the_bundle(cli, tmp_path):
    out = tmp_path / "b.json"
    cli("run", "--matrix", ROOT / "matrices/context.yaml", "--simulate", "mps", "--out", out, "--quiet")
    target = json.loads(out.read_text())["execution_target"]
    assert target["simulate_spec"] == "mps"
    assert target["simulated"] is True or any(d["kind"] == "mps" and d["provenance"] == "real" for d in target["devices"])


def test_simulate_env_var_is_honoured(cli):
    proc = cli("devices", "--json", env={"CROSSDEV_SIMULATE": "xpu"})
    kinds = {d["kind"]: d["provenance"] for d in json.loads(proc.stdout)["devices"]}
    assert kinds.get("xpu") in ("simulated", "real")


def test_resolve_sequence_shows_override_toggle(cli):
    proc = cli("resolve", "cpu:-1", "cpu", "cpu:-1", "cpu", "none", "--simulate", "mps", "--json",
               env={"TORCH_ALLOW_REDIRECTS": ""})
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [d["action"] for d in lines] == ["override_on", "honored", "override_off", "redirected", "default_injected"]
    assert lines[3]["resolved"] == "mps:0" and lines[3]["simulated"] is True


def test_resolve_logs_requested_arrow_used(cli):
    proc = cli("resolve", "cuda:1", "--simulate", "mps", env={"CROSSDEV_LOG_LEVEL": "INFO"})
    assert "cuda:1 -> mps:0" in proc.stderr
    proc = cli("resolve", "cuda:1", "--simulate", "mps", env={"TORCHDEVICE_LOG_LEVEL": "INFO", "CROSSDEV_LOG_LEVEL": ""})
    assert "cuda:1 -> mps:0" in proc.stderr
    proc = cli("resolve", "cuda:1", "--simulate", "mps", env={"CROSSDEV_LOG_LEVEL": "ERROR"})
    assert "->" not in proc.stderr


@pytest.mark.parametrize("args, needle", [
    (["bogus"], "unknown command 'bogus'"),
    (["resolve"], "at least one SPEC"),
    (["resolve", "CUDA"], "invalid device string 'CUDA'"),
    (["resolve", "cpu", "--policy", "pytorch"], "unknown policy 'pytorch'"),
    (["devices", "--simulate", "cuda:2,gpu"], "invalid --simulate item 'gpu'"),
    (["run", "--matrix", "/no/such/dir"], "/no/such/dir"),
    (["run", "--frobnicate"], "unknown option '--frobnicate'"),
    (["run", "--out"], "needs a value"),
])
def test_bad_input_exits_2(cli, args, needle):
    proc = cli(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert needle in proc.stderr


@pytest.mark.parametrize("command", ["devices", "resolve", "run"])
def test_every_command_has_help(cli, command):
    proc = cli(command, "--help")
    assert proc.returncode == 0 and "usage: crossdev " + command in proc.stdout


@requires_sim
def test_quiet_prints_the_cases_that_gate_and_not_the_expected_failures(cli, tmp_path):
    """--quiet (issue 49): one progress line per suite, the summary, and only the cases that gate; an xfail
    (layer_norm_modulate's TorchScript form at D=1 on sim, an expectation of matrices/expectations/ops/) is
    counted in the summary and not printed."""
    proc = cli("run", "--filter", "ops.layer_norm_modulate", "--simulate", "cuda", "--quiet", "--out", tmp_path / "b.json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    cases = json.loads((tmp_path / "b.json").read_text())["cases"]
    xfails = [c["id"] for c in cases if c["status"] == "xfail"]
    assert xfails and "xfailed" in proc.stdout.splitlines()[-1], proc.stdout[-2000:]
    assert not [line for line in proc.stdout.splitlines() if any(x in line for x in xfails)], proc.stdout[-2000:]
