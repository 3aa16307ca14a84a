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
                                     "crossdev_examples.llama:tiny_llama", "crossdev_examples.llama:tiny_llama_fused"])
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


def test_the_train_check_compares_the_loss_before_and_after_each_optimizer_step(models):
    result = models.compare_model("crossdev_examples.llama:tiny_llama_train", devices=["sim"],
                                  checks=["forward", "backward", "train"])
    assert result.passed, repr(result)
    assert result[0].checks["train"].compared == 6, "the factory's 5 AdamW steps: 6 losses"


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
    with pytest.raises(ValueError, match="unknown dtype 'float33'; expected one of float32"):
        models.compare_model("crossdev_examples.dit:tiny_dit_block", devices=["sim"], dtypes=["float33"])
    with pytest.raises(ValueError, match="unknown check 'sideways'; expected one of forward, backward, train"):
        models.compare_model("crossdev_examples.dit:tiny_dit_block", devices=["sim"], checks=["sideways"])
