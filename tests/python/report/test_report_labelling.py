"""Issue 11 item 9: a bundle cannot contradict itself about where its cases ran.

`execution` (real | simulated | not_run), the optional `simulated` flag, the case `device` and the
execution target's device provenance are cross-checked by the validator; a contradiction is bad
input (exit 2), so a simulated result can never be counted as a real-device pass.
"""
import copy
import json
import subprocess
import sys

import pytest

from crossdev.report import sample
from crossdev.report.bundle import BundleError, parse_bundle
from crossdev.report.validate import main as validate_main

OPS_ID = "rms_norm.row/cuda/float32/small/fused"


def problems(doc):
    with pytest.raises(BundleError) as e:
        parse_bundle(json.dumps(doc), "b.json")
    return e.value.problems


def simulated_cuda_run(execution="simulated", device="sim:0", simulated_flag=None):
    """A CPU host that simulated cuda: the ops case ran on the sim backend."""
    case = sample.ops_case("rms_norm", "cuda", "float32", "fused", execution=execution)
    case["device"] = device
    case["simulated"] = execution == "simulated" if simulated_flag is None else simulated_flag
    return sample.bundle("cpu", [case, sample.case("ctx.cpu", "context")], simulated=True, simulate_spec="cuda:1")


def test_a_consistent_simulated_run_validates():
    parse_bundle(json.dumps(simulated_cuda_run()), "b.json")
    for doc in sample.demo_bundles().values():
        parse_bundle(json.dumps(doc), "demo.json")


def test_execution_real_with_simulated_true_is_rejected():
    """The issue's example: execution real, simulated true, on sim:0."""
    found = problems(simulated_cuda_run(execution="real", simulated_flag=True))
    assert f"bundle.cases[0] (id '{OPS_ID}').simulated: true contradicts execution 'real' " \
           "(expected simulated == (execution == \"simulated\"))" in found
    assert f"bundle.cases[0] (id '{OPS_ID}').device: 'sim:0' is the simulator backend, so execution 'real' " \
           "is a contradiction (expected execution simulated)" in found


def test_execution_simulated_with_simulated_false_is_rejected():
    found = problems(simulated_cuda_run(execution="simulated", simulated_flag=False))
    assert f"bundle.cases[0] (id '{OPS_ID}').simulated: false contradicts execution 'simulated' " \
           "(expected simulated == (execution == \"simulated\"))" in found


def test_real_on_the_sim_backend_is_rejected_even_without_the_flag():
    doc = simulated_cuda_run(execution="real")
    del doc["cases"][0]["simulated"]
    assert any(".device: 'sim:0' is the simulator backend" in p for p in problems(doc))


def test_real_on_a_kind_the_run_only_simulated_is_rejected():
    doc = simulated_cuda_run(execution="real", device="cuda:0")
    assert f"bundle.cases[0] (id '{OPS_ID}').device: 'cuda:0' is of kind cuda, which this run simulated " \
           "(execution_target.devices provenance simulated), so execution 'real' is a contradiction" in problems(doc)


def test_target_simulated_flag_must_match_device_provenance():
    doc = simulated_cuda_run()
    doc["execution_target"]["simulated"] = False
    assert "bundle.execution_target.simulated: false, but device kind(s) cuda have provenance simulated " \
           "(expected true when any device kind was simulated)" in problems(doc)
    doc = sample.bundle("cpu", [sample.case("a", "context")])
    doc["execution_target"]["simulated"] = True
    assert "bundle.execution_target.simulated: true, but no device kind has provenance simulated " \
           "(expected false when every device kind is real)" in problems(doc)


def test_device_kind_must_be_a_real_kind():
    doc = simulated_cuda_run()
    doc["execution_target"]["device_kind"] = "cuda"
    assert "bundle.execution_target.device_kind: 'cuda' has provenance simulated in execution_target.devices " \
           "(expected the most capable real kind)" in problems(doc)


@pytest.mark.parametrize("device", ["hypothetical:cpu-only", "probe", "probe+simulate:cuda:1", "cpu", ""])
def test_real_results_the_writer_produces_stay_valid(device):
    """Manager rows run real CPU work on hypothetical host profiles; their device is the host's source."""
    doc = simulated_cuda_run()
    extra = sample.case("manager.reset", "manager", device=device)
    doc = sample.bundle("cpu", doc["cases"] + [extra], simulated=True, simulate_spec="cuda:1")
    parse_bundle(json.dumps(doc), "b.json")


def test_not_run_cases_may_name_any_device():
    doc = simulated_cuda_run(execution="not_run", device="cuda:0")
    parse_bundle(json.dumps(doc), "b.json")


def test_contradiction_is_bad_input_for_validate_and_gate(tmp_path, repo_root, capsys):
    path = tmp_path / "liar.json"
    path.write_text(json.dumps(simulated_cuda_run(execution="real", simulated_flag=True)))
    assert validate_main([str(path)]) == 2
    assert f"{path}: bundle.cases[0]" in capsys.readouterr().err
    proc = subprocess.run([sys.executable, "-m", "crossdev", "gate", str(path)], cwd=repo_root, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "contradicts execution 'real'" in proc.stderr


def test_sample_bundle_records_its_simulated_kinds():
    doc = copy.deepcopy(sample.demo_bundles()["mps-sim.json"])
    devices = {d["kind"]: d["provenance"] for d in doc["execution_target"]["devices"]}
    assert devices == {"cpu": "real", "mps": "simulated"}
