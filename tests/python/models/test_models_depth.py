"""The error along the depth (docs/models.md): every compared case carries, per module call, the
inherited error of the device's full run with its verdict (captured during the normal comparison:
a passing case too, without own errors), and a failing one the own (teacher-forced) error of the
localised phase; for train the losses per step of the golden, float64 and the device. The worker
sends them as the case's structured `data` (crossdev.models.suite, crossdev.worker.encode_case)."""
import json

import pytest
import torch
from torch import nn

from conftest import requires_sim

pytestmark = requires_sim  # sim is kept out of a process with a real accelerator


class ScalesOffTheCpu(nn.Module):
    """A device-dependent bug in user code: an extra scaling off the CPU."""

    def forward(self, x):
        y = torch.tanh(x)
        return y * 1.001 if x.device.type != "cpu" else y


def chain(quirk):
    def factory():
        torch.manual_seed(0)
        middle = ScalesOffTheCpu() if quirk else nn.Tanh()
        return nn.Sequential(nn.Linear(8, 8), middle, nn.Linear(8, 8)), (torch.randn(4, 8),)
    return factory


def training():
    torch.manual_seed(0)
    return {"model": nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8)), "inputs": (torch.randn(4, 8),),
            "loss": lambda output, x: output.pow(2).mean(), "optimizer": lambda p: torch.optim.SGD(p, lr=0.1)}


def by_phase(result, phase):
    return [(p.path, p) for p in result.depth if p.phase == phase]


def test_a_passing_case_carries_the_inherited_error_of_every_call_and_no_own(crossdev_module):
    (on_sim,) = crossdev_module.compare_model(chain(quirk=False), devices=["sim"])
    assert on_sim.status == "pass", repr(on_sim)
    forward = by_phase(on_sim, "forward")
    assert [path for path, _ in forward] == ["", "0", "1", "2"], "execution order, the model first"
    assert [p.call for _, p in forward] == [0, 1, 2, 3] and [p.parent for _, p in forward] == [None, 0, 0, 0]
    assert all(p.inherited_passed and p.inherited < p.limit and p.own != p.own and p.own_passed is None
               for _, p in forward), forward
    # Backward: the order gradients reach the calls (the last layer first), the model's own output first.
    assert [path for path, _ in by_phase(on_sim, "backward")] == ["", "2", "1", "0"]


def test_a_failing_case_carries_own_errors_the_culprit_alone_out_of_tolerance(crossdev_module):
    from crossdev.models.suite import _case
    from crossdev.worker import encode_case
    (on_sim,) = crossdev_module.compare_model(chain(quirk=True), devices=["sim"], checks=["forward"])
    assert on_sim.status == "fail" and on_sim.first_divergence.module == "1", repr(on_sim)
    forward = dict(by_phase(on_sim, "forward"))
    assert not forward["2"].inherited_passed and forward["2"].own_passed, "the symptom downstream: inherited only"
    assert not forward["1"].own_passed and not forward["1"].inherited_passed
    assert forward["0"].own_passed and forward["0"].inherited_passed
    case = _case(on_sim, {"id": "t/sim/float32", "status": "error", "metrics": {}, "details": {}})
    data = case["data"]
    assert data["first_divergence_call"] == 2 and [p["module"] for p in data["layers"]] == ["(model)", "0", "1", "2"]
    assert data["layers"][2] == {**data["layers"][2], "inherited_passed": False, "own_passed": False}
    record = json.loads(encode_case(case))
    assert record["event"] == "case" and record["data"] == data  # the engine passes it on verbatim


def test_the_train_check_keeps_the_losses_per_step_of_each_run(crossdev_module):
    (on_sim,) = crossdev_module.compare_model(training, devices=["sim"], checks=["forward", "train"], steps=2)
    assert on_sim.status == "pass", repr(on_sim)
    assert sorted(on_sim.losses) == ["device", "float64", "golden"]
    assert all(len(values) == 3 for values in on_sim.losses.values()), on_sim.losses
    assert on_sim.losses["golden"][2] < on_sim.losses["golden"][0], "SGD lowers the loss"
    assert on_sim.losses["device"] == pytest.approx(on_sim.losses["golden"], rel=1e-5)
    assert on_sim.to_dict()["losses"] == on_sim.losses
