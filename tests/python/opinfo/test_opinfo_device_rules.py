"""PyTorch's cross-device rules in the opinfo suite, each shown to decide a case both ways (issue 39,
docs/opinfo.md "Verdicts that hold on a real accelerator"), with deliberately valid and deliberately wrong
sim kernels (tests/mutants/aten/) under the cuda profile:

- output_process_fn_grad: eigenvectors with other signs pass, forward and backward (eigenvalues 1% off fail:
  test_gate_catalog.py);
- random ops found at run time: dropout2d (its ATen op bernoulli_ is tagged nondeterministic_seeded) is
  judged by bernoulli_'s law and passes (a bernoulli_ that keeps every element fails: test_gate_catalog.py);
- op_db's declared gaps (no cuda dtypes, onlyCPU) are skips counted as declared gaps, never errors;
- a view keeps its base storage when the device's sample is moved to the CPU (as_strided.partial_views);
- the float64 rule passes a device closer to float64 than the CPU golden and fails one beyond its factor;
- `numerics:` takes parity or deployed, anything else is exit 2 with file:line and the valid values.
One engine run shares the valid mutant (it imports op_db once)."""
import json

import pytest
import torch

from conftest import requires_sim

MATRIX = """\
suite: opinfo
cases:
  - {id: r.eigh, source: "issue 39", intent: "eigenvector signs", opinfo: "linalg.eigh", devices: [cuda], dtypes: [float32],
     checks: [forward, backward], max_samples: 4}
  - {id: r.dropout, source: "issue 39", intent: "a random op", opinfo: "nn.functional.dropout2d", devices: [cuda],
     dtypes: [float32], checks: [forward], max_samples: 3}
  - {id: r.gaps, source: "issue 39", intent: "declared gaps", opinfo: [histogram, sparse.mm.reduce], devices: [cuda],
     dtypes: [float32], checks: [forward], max_samples: 1}
  - {id: r.views, source: "issue 39", intent: "views keep their base", opinfo: "as_strided.partial_views", devices: [cuda],
     dtypes: [float32], checks: [forward, backward], max_samples: 4}
"""


def engine_run(cli, tmp_path, built_library, mutants, matrix=MATRIX):
    (tmp_path / "rules.yaml").write_text(matrix)
    libraries = [arg for m in mutants for arg in ("--load-library", built_library(f"crossdev_test_aten_mutant_{m}"))]
    bundle = tmp_path / "bundle.json"
    proc = cli("run", "--matrix", tmp_path / "rules.yaml", "--simulate", "cuda", "--out", bundle, *libraries)
    doc = json.loads(bundle.read_text()) if bundle.exists() else {"cases": []}
    return proc, {c["id"]: c for c in doc["cases"]}


@pytest.fixture(scope="module")
def valid_run(cli, tmp_path_factory, built_library):
    """Eigenvectors with other signs (a valid eigh), sim's own dropout."""
    return engine_run(cli, tmp_path_factory.mktemp("valid"), built_library, ["linalg_eigh_flip_signs"])


@requires_sim
@pytest.mark.parametrize("check", ["forward", "backward"])
def test_eigenvectors_with_other_signs_pass_through_output_process_fn_grad(valid_run, check):
    proc, cases = valid_run
    case = cases[f"r.eigh/linalg.eigh/cuda/float32/{check}"]
    assert case["status"] == "pass", case
    assert case["metrics"]["samples"] >= 2, case


@requires_sim
def test_dropout2d_is_found_random_at_run_time_and_passes_by_its_law(valid_run):
    _, cases = valid_run
    case = cases["r.dropout/nn.functional.dropout2d/cuda/float32/forward"]
    assert case["status"] == "pass", case
    assert "aten::bernoulli_" in case["details"]["random_ops"], case
    assert case["details"]["distribution"].startswith("aten::bernoulli_.float Bernoulli(p="), case
    assert "values drawn on sim:0 (float32): PIT KS D=" in case["details"]["distribution"], case
    assert case["metrics"]["law_values"] >= 100_000, case
    assert "op_db_decorators" in case["details"] and "not taken" in case["details"]["op_db_decorators"], case


@requires_sim
@pytest.mark.parametrize("op, why", [("histogram", "supported_dtypes('cuda') lacks float32"),
                                     ("sparse.mm.reduce", "onlyCPU")])
def test_what_op_db_declares_unsupported_is_a_declared_gap_skip(valid_run, op, why):
    _, cases = valid_run
    case = cases[f"r.gaps/{op}/cuda/float32/forward"]
    assert case["status"] == "skip", case
    assert case["message"].startswith("declared unsupported by op_db") and why in case["message"], case
    assert case["details"]["declared_gap"] == case["message"]


@requires_sim
@pytest.mark.parametrize("check", ["forward", "backward"])
def test_a_view_sample_keeps_its_base_storage_on_the_cpu(valid_run, check):
    _, cases = valid_run
    case = cases[f"r.views/as_strided.partial_views/cuda/float32/{check}"]
    assert case["status"] == "pass", case
    assert case["metrics"]["samples"] >= 3, case


def test_an_unknown_numerics_mode_is_exit_2_with_file_line_and_the_modes(cli, tmp_path):
    matrix = tmp_path / "m.yaml"
    matrix.write_text('suite: opinfo\ncases:\n  - {id: n.bad, source: "t", intent: "t", opinfo: "abs", devices: [cuda],\n'
                      '     dtypes: [float32], numerics: fast}\n')
    proc = cli("run", "--matrix", matrix, "--simulate", "cuda", "--out", tmp_path / "b.json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{matrix}:4" in proc.stderr and "numerics" in proc.stderr, proc.stderr
    assert "parity, deployed" in proc.stderr, proc.stderr


# --- the float64 rule, in-process on a plain function ---------------------------------------------------------
class _Sample:
    """The part of op_db's SampleInput that samples.py and float64_diagnostic.py use."""

    def __init__(self, x):
        self.input, self.args, self.kwargs = x, (), {}

    def transform(self, f):
        return _Sample(f(self.input))


def _judge(device, golden):
    from crossdev.opinfo import float64_diagnostic, samples

    x = torch.linspace(-3, 3, 64)
    diagnostic = float64_diagnostic.Diagnostic(_cumsum, torch.float32, "forward", "function")
    exact = _cumsum(x.double())
    outcome = samples.Outcome(mismatch="differs", kept=samples.Kept(device(exact), golden(exact)))
    return diagnostic.judge(_Sample(x), outcome), diagnostic


def _cumsum(x):
    return torch.cumsum(x, 0)


def test_the_float64_rule_passes_a_device_closer_to_float64_than_the_cpu_golden():
    (text, passes), diagnostic = _judge(lambda e: e.float(), lambda e: (e + 1e-3).float())
    assert passes and text == "", text
    case = {"details": {}, "metrics": {}}
    diagnostic.record(case)
    assert case["metrics"]["float64_rule_passes"] == 1
    assert "within 4x" in case["details"]["float64_rule"], case


@pytest.mark.parametrize("ratio, passes", [(3.5, True), (4.5, False), (100.0, False)])
def test_the_float64_rule_holds_the_device_to_four_times_the_golden_distance(ratio, passes):
    (text, passed), _ = _judge(lambda e: (e + ratio * 1e-3).float(), lambda e: (e + 1e-3).float())
    assert passed is passes, text
    assert passes or "beyond 4x" in text, text


def test_an_exact_golden_leaves_no_room_for_a_device_that_differs():
    (text, passed), _ = _judge(lambda e: (e + 1e-3).float(), lambda e: e.float())
    assert not passed and "beyond 4x" in text, text


def test_no_float64_rule_where_the_float64_run_is_on_another_branch_of_an_ambiguous_answer():
    """An eigenvector's sign: the golden and the float64 run O(1) apart; 'closer to float64' means nothing."""
    (text, passed), _ = _judge(lambda e: (-e).float(), lambda e: (-e).float() * 1.0)
    assert not passed and "the float64 run is no reference" in text, text


# --- TF32: sim under the cuda profile rounds convolution operands to TF32 when cuDNN's flag is on -----------
TF32_MATRIX = """\
suite: opinfo
cases:
  - {id: t.parity, source: "issue 39", intent: "TF32 off by default", opinfo: "nn.functional.conv2d", devices: [cuda],
     dtypes: [float32], checks: [forward], max_samples: 6}
  - {id: t.deployed, source: "issue 39", intent: "the deployed switches at strict tolerance", opinfo: "nn.functional.conv2d",
     devices: [cuda], dtypes: [float32], checks: [forward], max_samples: 6, numerics: deployed,
     tolerance: {rtol: 1.3e-6, atol: 1e-5}}
"""


@requires_sim
def test_a_tf32_convolution_fails_deployed_at_strict_tolerance_names_tf32_and_passes_in_parity(cli, tmp_path):
    (tmp_path / "tf32.yaml").write_text(TF32_MATRIX)
    bundle = tmp_path / "b.json"
    proc = cli("run", "--matrix", tmp_path / "tf32.yaml", "--simulate", "cuda", "--out", bundle,
               env={"CROSSDEV_SIM_DIVERGE": "cuda"})
    cases = {c["id"]: c for c in json.loads(bundle.read_text())["cases"]}
    parity = cases["t.parity/nn.functional.conv2d/cuda/float32/forward"]
    deployed = cases["t.deployed/nn.functional.conv2d/cuda/float32/forward"]
    assert parity["status"] == "pass", parity
    assert parity["details"]["numerics"].startswith("parity: TF32 off for the case"), parity
    assert deployed["status"] == "fail", deployed
    assert "passes with TF32 off: the difference is TF32 in aten::convolution" in deployed["message"], deployed
    assert proc.returncode == 1, proc.stdout + proc.stderr
