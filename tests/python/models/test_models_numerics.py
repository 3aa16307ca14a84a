"""The models suite's numerics (docs/models.md, "Numerics modes" and "Tolerance"):
- the float64 rule (crossdev/float64_rule.py, one FACTOR for both suites) passes a device more
  accurate than the CPU golden, and one farther from float64 than the golden but within FACTOR,
  and fails one beyond FACTOR; through the engine, a pass by it says so in the case and is counted
  in its metrics (float64_rule_passes);
- a row's `numerics:` outside numerics.MODES is exit 2 naming the row's file:line and the modes;
- on sim under `--simulate cuda` with the divergence switch (cuDNN's TF32 flag honoured, on by
  default as in PyTorch), a convolution model fails under `numerics: deployed`, its message naming
  TF32 and aten::convolution from the rerun with TF32 off, and passes under `parity` (the default)."""
import json
import pathlib
import os
import re
import subprocess
import sys

import pytest
import torch

from conftest import BUILD_DIR, INSTALLED, requires_sim

# The worker's path (the fixture's own PYTHONPATH entry kept: build tree runs); factories come from --import.
ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [None if INSTALLED else str(BUILD_DIR / "python"),
                                                   os.environ.get("PYTHONPATH")]))}

FACTORIES = """\
import torch
from torch import nn


class Cancellation(nn.Module):
    \"\"\"On the CPU (the golden and the float64 reference) x + 1e4 - 1e4, which loses x's low bits in
    float32 (up to 4.9e-4); on any other device x itself: another implementation, more accurate.\"\"\"

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(16))

    def forward(self, x):
        y = x * self.w
        return (y + 1e4) - 1e4 if y.device.type == "cpu" else y


def cancellation():
    torch.manual_seed(0)
    return Cancellation(), (torch.rand(4, 16),)


def convnet():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 4))
    return model, (torch.randn(2, 3, 8, 8),)
"""


@pytest.fixture(scope="module")
def tolerance(crossdev_module):
    return crossdev_module.models.tolerance


@pytest.fixture
def factories(tmp_path):
    folder = tmp_path / "factories"
    folder.mkdir()
    (folder / "numerics_models.py").write_text(FACTORIES)
    return folder


def run(cli, tmp_path, rows, simulate, factories, env=None):
    matrix = tmp_path / "models_numerics.yaml"
    matrix.write_text("suite: models\ncases:\n" + "".join(f"  - {row}\n" for row in rows))
    bundle = tmp_path / "b.json"
    simulated = ["--simulate", simulate] if simulate else []
    proc = cli("run", "--matrix", matrix, *simulated, "--import", factories, "--out", bundle, env={**ENV, **(env or {})})
    cases = json.loads(bundle.read_text())["cases"] if bundle.exists() else []
    return matrix, proc, {c["id"]: c for c in cases}


# The float64 rule, on tensors whose distances are exact in float32: the reference 0, the golden
# 2^-10 from it (outside float32's tolerance of the device whatever the device's value below).
UNIT = 2.0 ** -10


def judged(tolerance, device_units, golden_units=1.0):
    reference = torch.zeros(8, dtype=torch.float64)
    golden = torch.full((8,), golden_units * UNIT)
    return tolerance.judge(torch.full((8,), device_units * UNIT), golden, reference)


def test_the_float64_rule_is_the_shared_one(tolerance):
    from crossdev import float64_rule
    assert tolerance.float64_rule is float64_rule and not hasattr(tolerance, "ACCUMULATION_FACTOR")


@pytest.mark.parametrize("device_units", [0.0, 0.5, float(4.0 - 0.25)])
def test_the_float64_rule_passes_a_device_as_accurate_or_within_its_factor_of_the_golden(tolerance, device_units):
    from crossdev.float64_rule import FACTOR
    assert device_units < FACTOR  # 0: exact; 0.5: more accurate than the CPU; 3.75: farther, within 4x
    j = judged(tolerance, device_units)
    assert j.passed and j.by_float64_rule, j.describe()
    assert f"device {device_units * UNIT:.3g} from float64, CPU golden {UNIT:.3g}: within {FACTOR:g}x" in j.rule, j.rule


def test_the_float64_rule_fails_a_device_beyond_its_factor(tolerance):
    from crossdev.float64_rule import FACTOR
    j = judged(tolerance, FACTOR + 1)
    assert not j.passed and not j.by_float64_rule, j.describe()
    assert f"the float64 rule fails: device {(FACTOR + 1) * UNIT:.3g} from float64, CPU golden {UNIT:.3g}: " \
           f"beyond {FACTOR:g}x" in j.describe(), j.describe()


def test_within_the_dtypes_tolerance_is_not_a_float64_rule_pass(tolerance):
    j = judged(tolerance, 1.0)  # the device equals the golden
    assert j.passed and not j.by_float64_rule and "within torch.float32 tolerance" in j.rule, j.rule


@requires_sim
def test_a_pass_by_the_float64_rule_says_so_in_the_case_and_is_counted(cli, tmp_path, factories):
    row = ('{id: t.cancel, source: "issue 39", intent: "float64 rule", model: "numerics_models:cancellation", '
           'devices: [mps], dtypes: [float32], checks: [forward]}')
    _, proc, cases = run(cli, tmp_path, [row], "mps", factories)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = cases["t.cancel/mps/float32"]
    assert case["status"] == "pass", case
    assert case["metrics"]["float64_rule_passes"] == 1 and case["metrics"]["forward_float64_rule_passes"] == 1, case
    # the device (x itself) is more accurate than the CPU golden (x + 1e4 - 1e4 in float32): up to 4.9e-4 off
    assert "1 by the float64 rule, first output[0]: device " in case["message"], case["message"]
    device, golden = (float(v) for v in re.search(r"device (\S+) from float64, CPU golden (\S+): within 4x",
                                                   case["message"]).groups())
    assert device < 1e-9 and 1e-5 < golden <= 4.9e-4, case["message"]
    assert "numerics" not in case["details"], "mps has no TF32 switch to record"


def test_an_unknown_numerics_mode_is_exit_2_naming_file_line_and_the_modes(cli, tmp_path, factories):
    from crossdev.numerics import MODES
    row = ('{id: t.bad, source: "issue 39", intent: "bad mode", model: "numerics_models:convnet", devices: [cpu], '
           'dtypes: [float32],\n     numerics: fast}')
    matrix, proc, cases = run(cli, tmp_path, [row], None, factories)
    assert proc.returncode == 2 and not cases, proc.stdout + proc.stderr
    assert f"{matrix}:4:" in proc.stderr, proc.stderr  # the line of the `numerics:` key
    assert f"numerics: 'fast' is not a numerics mode; expected one of: {', '.join(MODES)}" in proc.stderr, proc.stderr


# The probe registers sim in a process of its own (sim_tf32_probe.py), never in the xdist worker's.
SIM_TF32_PROBE = pathlib.Path(__file__).resolve().parents[1] / "sim_tf32_probe.py"


def sim_tf32_missing() -> str:
    """Why sim under `--simulate cuda` (divergence on) does not round to TF32 as PyTorch's flags say, or ''."""
    env = {**os.environ, **ENV, "CROSSDEV_SIM_DIVERGE": "cuda"}
    proc = subprocess.run([sys.executable, str(SIM_TF32_PROBE)], capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode != 0:
        return f"the sim TF32 probe failed: {proc.stderr.strip().splitlines()[-1:]}"
    differences = json.loads(proc.stdout.strip().splitlines()[-1])
    # TF32 keeps 10 mantissa bits: ~1e-3 relative on these sums of products, float32's orders ~1e-6.
    missing = [f"{op} (TF32 on vs off: {d:.3g})" for op, d in differences.items() if d < 1e-4]
    return ("sim under --simulate cuda (CROSSDEV_SIM_DIVERGE=cuda) does not round to TF32 when PyTorch's flag is "
            f"on: {', '.join(missing)} (impl/sim's TF32 emulation is not in this build)") if missing else ""


@requires_sim
def test_a_sim_cuda_convolution_fails_deployed_naming_tf32_and_passes_under_parity(cli, tmp_path, factories):
    missing = sim_tf32_missing()
    if missing:
        pytest.skip(missing)
    rows = ['{id: t.deployed, source: "issue 39", intent: "TF32 on", model: "numerics_models:convnet", '
            'devices: [cuda], dtypes: [float32], checks: [forward], numerics: deployed}',
            '{id: t.parity, source: "issue 39", intent: "TF32 off (the default mode)", model: "numerics_models:convnet", '
            'devices: [cuda], dtypes: [float32], checks: [forward]}']
    _, proc, cases = run(cli, tmp_path, rows, "cuda", factories, env={"CROSSDEV_SIM_DIVERGE": "cuda"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    deployed, parity = cases["t.deployed/cuda/float32"], cases["t.parity/cuda/float32"]
    assert deployed["status"] == "fail" and deployed["execution"] == "simulated", deployed
    assert deployed["details"]["first_divergence"] == "0" and deployed["details"]["first_divergence_op"] == "aten::convolution"
    assert "passes with TF32 off: the difference is TF32 in aten::convolution" in deployed["message"], deployed["message"]
    assert deployed["details"]["tf32_off_rerun"] == "pass", deployed["details"]
    assert deployed["details"]["numerics"].startswith("deployed: the deployed switches (TF32 on)"), deployed["details"]
    assert "cudnn_allow_tf32=True" in deployed["details"]["numerics"], deployed["details"]
    assert parity["status"] == "pass", parity["message"]
    assert parity["details"]["numerics"].startswith("parity: TF32 off for the case (matmul, cuDNN)"), parity["details"]
    assert "tf32_off_rerun" not in parity["details"]
