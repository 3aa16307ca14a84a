"""crossdev.compare_model in this process (docs/models.md): the example models pass on sim against
the CPU golden, forward and every parameter's gradient; a device error is an `error` result carrying
the exception and its classification; a random forward says so; a bad factory is a FactoryError
naming the factory and the Python error. The mutants' localisation runs in a child process
(test_models_localisation.py): a mutant kernel cannot be unloaded from this one."""
import pytest
import torch
from torch import nn

from conftest import ROOT, requires_sim

pytestmark = requires_sim  # sim is kept out of a process with a real accelerator

EXAMPLES = ROOT / "examples" / "models"


@pytest.fixture(scope="module")
def models(crossdev_module, monkeypatch_module):
    monkeypatch_module.syspath_prepend(str(EXAMPLES))
    return crossdev_module.models


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.parametrize("factory", ["crossdev_examples.dit:tiny_dit_block", "crossdev_examples.dit:tiny_dit_block_fused",
                                     "crossdev_examples.llama:tiny_llama", "crossdev_examples.llama:tiny_llama_fused",
                                     "crossdev_examples.recursive:tiny_recursive",
                                     "crossdev_examples.recursive:tiny_recursive_fused"])
def test_example_models_agree_on_sim_forward_and_every_gradient(models, factory):
    result = models.compare_model(factory, devices=["sim"])
    assert result.passed, repr(result)
    (on_sim,) = result
    assert on_sim.device == "sim:0" and on_sim.dtype == "float32" and on_sim.first_divergence is None
    assert on_sim.checks["forward"].compared == 1
    assert on_sim.checks["backward"].compared >= 10, "every parameter's gradient is compared"
    assert repr(result) == repr(on_sim) and repr(on_sim).startswith(f"{factory} on sim:0 float32: pass - forward")


def test_bfloat16_uses_its_own_tolerance(models):
    result = models.compare_model("crossdev_examples.dit:tiny_dit_block", devices=["sim"], dtypes=["bfloat16"])
    assert result.passed, repr(result)
    assert result["sim:0"].dtype == "bfloat16"


def test_compare_model_is_crossdev_compare_model_and_takes_a_callable(crossdev_module, models):
    from crossdev_examples.llama import tiny_llama
    assert crossdev_module.compare_model is models.compare_model
    result = crossdev_module.compare_model(tiny_llama, devices="sim", checks=["forward"])
    assert result.passed and list(result[0].checks) == ["forward"], repr(result)
    assert result.model == "crossdev_examples.llama:tiny_llama"


class MakesItsOwnCpuTensor(nn.Module):
    """A device bug of user code: a constant created on the CPU, whatever the input's device."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        return self.linear(x) + torch.ones(4)


def test_a_model_that_raises_on_a_device_is_an_error_result_with_the_text_and_its_class(models):
    result = models.compare_model(lambda: (MakesItsOwnCpuTensor(), (torch.randn(2, 4),)), devices=["sim"])
    (on_sim,) = result
    assert on_sim.status == "error" and not result.passed, repr(result)
    assert "Expected all tensors to be on the same device" in on_sim.error["text"]
    assert on_sim.error["exception"] == "RuntimeError"
    assert on_sim.error["category"] == "device_mismatch", on_sim.error
    assert "classified device_mismatch; recovery: move_to_common_device" in on_sim.message


class ScalesOffTheCpu(nn.Module):
    """A device-dependent bug in user code: an extra scaling off the CPU."""

    def forward(self, x):
        y = torch.tanh(x)
        return y * 1.001 if x.device.type != "cpu" else y


def nested_model_with_a_quirk():
    torch.manual_seed(0)
    inner = nn.Sequential(nn.Linear(8, 8), ScalesOffTheCpu(), nn.Linear(8, 8))
    return nn.Sequential(nn.Linear(8, 8), inner, nn.Linear(8, 8)), (torch.randn(4, 8),)


def test_forward_localisation_names_the_innermost_module_and_the_op_only_the_device_runs(models):
    (on_sim,) = models.compare_model(nested_model_with_a_quirk, devices=["sim"], checks=["forward"])
    assert on_sim.status == "fail" and list(on_sim.checks) == ["forward"], repr(on_sim)
    divergence = on_sim.first_divergence
    assert (divergence.phase, divergence.module, divergence.op) == ("forward", "1.1", "aten::mul"), divergence
    assert "runs on the device only" in divergence.detail
    own = {layer.path: layer.passed for layer in on_sim.layers}
    assert own == {"": False, "0": True, "1": False, "1.0": True, "1.1": False, "1.2": True, "2": True}, own


@pytest.mark.parametrize("factory", ["crossdev_examples.llama:tiny_llama_train",
                                     "crossdev_examples.recursive:tiny_recursive_train"])
def test_the_train_check_compares_the_loss_before_and_after_each_optimizer_step(models, factory):
    result = models.compare_model(factory, devices=["sim"], checks=["forward", "backward", "train"])
    assert result.passed, repr(result)
    assert result[0].checks["train"].compared == 6, "the factory's 5 AdamW steps: 6 losses"
    parameters = result[0].checks["backward"].compared
    assert result[0].checks["optimizer_step"].compared == 5 * parameters, "every parameter after every step"


def test_the_recursive_models_training_loop_learns_and_runs_on_sim(models):
    from crossdev_examples.recursive import train
    on_cpu, on_sim = train("cpu"), train("sim")
    assert on_cpu[-1] < on_cpu[0] and on_sim == pytest.approx(on_cpu, rel=1e-5), (on_cpu, on_sim)


def optimizer_with_a_device_quirk(parameters):
    """A device-dependent optimizer bug: another learning rate off the CPU."""
    parameters = list(parameters)
    return torch.optim.SGD(parameters, lr=0.1 if parameters[0].device.type == "cpu" else 0.1001)


def quirky_training():
    torch.manual_seed(0)
    return {"model": nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8)), "inputs": (torch.randn(4, 8),),
            "loss": lambda output, x: output.pow(2).mean(), "optimizer": optimizer_with_a_device_quirk}


def test_a_train_only_divergence_fails_the_train_check_after_the_first_step(models):
    (on_sim,) = models.compare_model(quirky_training, devices=["sim"], checks=["forward", "backward", "train"], steps=3)
    assert on_sim.status == "fail" and on_sim.checks["forward"].passed and on_sim.checks["backward"].passed, repr(on_sim)
    train = on_sim.checks["train"]
    assert train.compared == 4 and train.failing and "loss after step 0" not in train.failing, train
    assert "outputs and gradients agree: the optimizer's steps diverge" in on_sim.message
    assert on_sim.first_divergence is None
    # Stepped from the CPU golden's gradients, the device's optimizer still diverges: its own error.
    own = on_sim.checks["optimizer_step"]
    assert not own.passed and own.failing[0].endswith(" after step 1"), own
    assert f"its own error: stepped from the CPU golden's gradients, {own.failing[0]} differs" in on_sim.message


class DriftsAfterItsFirstCallOffTheCpu(nn.Module):
    """A device bug that only training meets: off the CPU, every call after the first is scaled."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * 1.01 if x.device.type != "cpu" and self.calls > 1 else x


def training_with_a_drifting_forward():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), DriftsAfterItsFirstCallOffTheCpu(), nn.Tanh(), nn.Linear(8, 8))
    return {"model": model, "inputs": (torch.randn(4, 8),), "loss": lambda output, x: output.pow(2).mean(),
            "optimizer": lambda parameters: torch.optim.SGD(parameters, lr=1.0)}


def test_a_divergence_the_optimizer_inherits_is_not_blamed_on_the_optimizer(models):
    (on_sim,) = models.compare_model(training_with_a_drifting_forward, devices=["sim"],
                                     checks=["forward", "backward", "train"], steps=2)
    assert on_sim.status == "fail" and on_sim.checks["forward"].passed and on_sim.checks["backward"].passed, repr(on_sim)
    assert on_sim.checks["train"].failing == ["loss after step 1", "loss after step 2"], on_sim.checks["train"]
    assert on_sim.checks["optimizer_step"].passed, on_sim.checks["optimizer_step"]
    assert "the divergence is inherited from the forward and backward along the trajectory" in on_sim.message


def test_the_train_check_needs_a_loss_and_an_optimizer(models):
    with pytest.raises(models.FactoryError, match="the train check needs a mapping with model, inputs, loss and optimizer"):
        models.compare_model("crossdev_examples.llama:tiny_llama", devices=["sim"], checks=["train"])


class RaisesEverywhere(nn.Module):
    def forward(self, x):
        raise NotImplementedError("forward is not written yet")


def test_a_model_that_raises_on_the_cpu_too_has_no_golden(models):
    (on_sim,) = models.compare_model(lambda: (RaisesEverywhere(), (torch.randn(2),)), devices=["sim"])
    assert on_sim.status == "error"
    assert on_sim.message.startswith("no CPU golden: the model raised on the CPU in float32: NotImplementedError: "
                                     "forward is not written yet"), on_sim.message


def test_a_random_forward_is_said_instead_of_a_divergence(models):
    (on_sim,) = models.compare_model("crossdev_examples.dit:tiny_dit_block_dropout_train", devices=["sim"])
    assert on_sim.status == "error" and on_sim.first_divergence is None
    assert "the forward draws random numbers (aten::bernoulli_)" in on_sim.message, on_sim.message
    assert "eval()" in on_sim.message
    assert "seed_policy: same_mask" in on_sim.message


def test_the_same_mask_seed_policy_replays_the_cpus_dropout_masks_on_the_device(models):
    # The CPU runs dropout as aten::bernoulli_, sim (PrivateUse1) as aten::native_dropout: the same
    # masks reach both only because the policy draws them on the CPU, by draw index.
    result = models.compare_model("crossdev_examples.dit:tiny_dit_block_dropout_train", devices=["sim"],
                                  checks=["forward", "backward"], seed_policy="same_mask")
    assert result.passed, repr(result)
    # The forward stays random: dropout drops elements (unlike eval()), and the same ones in each run.
    from crossdev.models.randomness import SameMasks
    from crossdev_examples.dit import tiny_dit_block_dropout_train
    model, inputs = tiny_dit_block_dropout_train()
    with SameMasks():
        first = model(*inputs)
    with SameMasks():
        again = model(*inputs)
    assert torch.equal(first, again) and not torch.allclose(first, model.eval()(*inputs))


def test_an_unknown_seed_policy_names_the_valid_ones(models):
    with pytest.raises(ValueError, match="unknown seed policy 'sometimes'; expected one of none, same_mask"):
        models.compare_model("crossdev_examples.dit:tiny_dit_block", devices=["sim"], seed_policy="sometimes")


class UpsamplesBicubic(nn.Module):
    """aten::upsample_bicubic2d: on the mps-like profile's list of ops MPS lacks."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return self.linear(nn.functional.interpolate(x, scale_factor=2, mode="bicubic").flatten(2)[..., :8])


def upsampling_model():
    torch.manual_seed(0)
    return UpsamplesBicubic(), (torch.randn(1, 2, 4, 4),)


@pytest.fixture
def mps_like_sim(crossdev_module):
    before = crossdev_module.sim.config()
    crossdev_module.sim.set_profile("mps-like")
    yield
    crossdev_module.sim.set_profile(before["profile"], before["device_count"], before["unsupported_ops"],
                                    before["unsupported_ops_on_cpu"])


def test_an_op_the_device_lacks_is_an_error_and_with_recover_runs_on_the_cpu_and_the_rerun_is_recorded(models,
                                                                                                    mps_like_sim):
    (refused,) = models.compare_model(upsampling_model, devices=["sim"])
    assert refused.status == "error" and "aten::upsample_bicubic2d" in refused.message, repr(refused)
    assert "[classified unsupported_op; recovery: move_to_cpu]" in refused.message
    assert "recovered" not in refused.error
    (recovered,) = models.compare_model(upsampling_model, devices=["sim"], recover=True)
    assert recovered.status == "pass", repr(recovered)
    assert recovered.error["category"] == "unsupported_op", recovered.error  # what happened first stays recorded
    assert recovered.error["recovered"] == {
        "applied": [{"op": "aten::upsample_bicubic2d", "category": "unsupported_op", "action": "move_to_cpu",
                     "calls": 1}], "rerun_status": "pass"}
    assert "applied move_to_cpu for aten::upsample_bicubic2d (unsupported_op, 1 call); the rerun is pass" \
        in recovered.message


def test_recover_leaves_an_error_without_an_op_level_recovery_as_it_is(models):
    (on_sim,) = models.compare_model(lambda: (RaisesOnTheDevice(), (torch.randn(2),)), devices=["sim"], recover=True)
    assert on_sim.status == "error" and "recovered" not in on_sim.error, repr(on_sim)


class RaisesOnTheDevice(nn.Module):
    def forward(self, x):
        if x.device.type != "cpu":
            raise ValueError("this device is not supported by the model")
        return x * 2


def _raises():
    return 1 / 0


@pytest.mark.parametrize("factory, words", [
    ("no_such_package_xyz.models:build", ["'no_such_package_xyz.models:build'", "cannot import module",
                                          "ModuleNotFoundError", "no_such_package_xyz"]),
    ("crossdev_examples.dit:no_such_factory", ["has no attribute 'no_such_factory'"]),
    ("crossdev_examples.dit", ["expected 'module:callable'"]),
    (_raises, ["test_models_compare:_raises", "raised ZeroDivisionError: division by zero"]),
    (lambda: torch.randn(2), ["returned a Tensor; expected (model, inputs)"]),
    (lambda: (nn.Linear(2, 2), "x"), ["returned a str as inputs; expected a tuple of tensors"]),
    (lambda: (torch.randn(2), (torch.randn(2),)), ["returned a Tensor as its model; expected a torch.nn.Module"]),
])
def test_a_bad_factory_is_a_factory_error_naming_it_and_the_python_error(models, factory, words):
    with pytest.raises(models.FactoryError) as error:
        models.compare_model(factory, devices=["sim"])
    for word in words:
        assert word in str(error.value), str(error.value)


def test_unknown_dtype_and_check_name_the_valid_choices(models):
    with pytest.raises(ValueError, match="unknown dtype 'float33'; expected one of float16, bfloat16, float32, float64"):
        models.compare_model("crossdev_examples.dit:tiny_dit_block", devices=["sim"], dtypes=["float33"])
    with pytest.raises(ValueError, match="unknown check 'sideways'; expected one of forward, backward, train"):
        models.compare_model("crossdev_examples.dit:tiny_dit_block", devices=["sim"], checks=["sideways"])
