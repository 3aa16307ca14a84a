"""Shared parameters (docs/models.md, "Shared parameters"): the CPU model's ties (weights tied across
modules, a module used twice) are kept on a device whose `.to()` keeps Parameter objects (cuda, mps,
xpu: sim emulating them re-ties its copy) and named, with the remedy, where the device's `.to()`
splits them (xla; sim emulating it splits them as xla does). The gradients are compared as training on
the device would see them, so a split tie fails. The call inputs localisation replays are deep copies
of what the call got: a cache object passed as a keyword (transformers' Cache) included."""
import pytest
import torch
from torch import nn

from conftest import requires_sim

pytestmark = requires_sim


class TiedLM(nn.Module):
    """An embedding and an output head sharing one weight, as GPT-2's lm_head and wte."""

    def __init__(self, vocab=16, width=8, with_tie_weights=False):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(vocab, width)
        self.body = nn.Linear(width, width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.embed.weight
        if with_tie_weights:
            self.tie_weights = lambda: setattr(self.head, "weight", self.embed.weight)

    def forward(self, ids):
        return self.head(torch.tanh(self.body(self.embed(ids))))


class UsedTwice(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.block = nn.Linear(8, 8)

    def forward(self, x):
        return self.block(torch.relu(self.block(x)))


def tied():
    return TiedLM(), (torch.randint(0, 16, (2, 5), generator=torch.Generator().manual_seed(1)),)


def tied_with_remedy():
    return TiedLM(with_tie_weights=True), tied()[1]


def used_twice():
    return UsedTwice(), (torch.randn(3, 8, generator=torch.Generator().manual_seed(1)),)


@pytest.fixture
def profile(crossdev_module):
    """Activate a sim profile for one test; the one before is restored."""
    before = crossdev_module.sim.config()["profile"]
    yield crossdev_module.sim.set_profile
    crossdev_module.sim.set_profile(before)


def test_ties_lists_every_name_of_a_shared_parameter(crossdev_module):
    from crossdev.models.placement import ties
    assert ties(tied()[0]) == [("embed.weight", "head.weight")]
    assert ties(used_twice()[0]) == [], "a module used twice is one module: its parameters are listed once"
    assert ties(nn.Linear(2, 2)) == []


@pytest.mark.parametrize("emulated", ["cuda-like", "mps-like", "xpu-like"])
def test_sim_keeps_ties_as_the_devices_it_emulates_do(crossdev_module, profile, emulated):
    profile(emulated)
    result = crossdev_module.compare_model(tied, devices=["sim"])
    assert result.passed, repr(result)
    outcome = result[0].checks["shared_parameters"]
    assert outcome.passed and outcome.compared == 1, repr(result)
    assert result[0].message.startswith("shared_parameters: 1 shared parameters kept; forward:")


@pytest.mark.parametrize("emulated", ["tpu-like", "plain"])
def test_a_split_tie_fails_and_names_both_parameters_and_the_remedy(crossdev_module, profile, emulated):
    profile(emulated)
    (result,) = crossdev_module.compare_model(tied, devices=["sim"])
    assert result.status == "fail", repr(result)
    assert not result.checks["shared_parameters"].passed
    assert ("embed.weight and head.weight are one parameter on the CPU and 2 on sim after .to(): "
            "assign embed.weight to head.weight again after moving") in result.message
    # the gradients as training sees them: the embedding's misses the head's share
    assert result.checks["backward"].failing == ["embed.weight"], repr(result)
    assert "the gradients that differ are those of the split shared parameters" in result.message
    assert result.first_divergence is None, "the split explains the gradients: nothing to localise"


def test_the_remedy_is_tie_weights_where_the_model_has_it(crossdev_module, profile):
    profile("tpu-like")
    (result,) = crossdev_module.compare_model(tied_with_remedy, devices=["sim"])
    assert result.status == "fail" and "after .to(): call tie_weights() after moving" in result.message


def test_a_model_without_ties_has_no_shared_parameters_check(crossdev_module, profile):
    profile("tpu-like")
    (result,) = crossdev_module.compare_model(used_twice, devices=["sim"])
    assert result.passed and "shared_parameters" not in result.checks, repr(result)


def test_a_split_tie_with_the_forward_alone_still_fails(crossdev_module, profile):
    profile("tpu-like")
    (result,) = crossdev_module.compare_model(tied, devices=["sim"], checks=["forward"])
    assert result.status == "fail" and result.checks["forward"].passed, repr(result)
    assert list(result.checks) == ["shared_parameters", "forward"]


class Cache:
    """A cache passed as a keyword, as transformers' Cache: each call appends to it."""

    def __init__(self):
        self.keys = []

    def update(self, k):
        self.keys.append(k)
        return torch.cat(self.keys, dim=0)


def test_call_inputs_are_deep_copies_detached_from_the_graph(crossdev_module):
    from crossdev.models.placement import convert, snapshot
    x = torch.randn(2, 3, requires_grad=True)
    cache = Cache()
    cache.update(x * 2)  # a non-leaf tensor held by an object
    copied = snapshot({"past": cache, "x": x})
    assert copied["past"] is not cache and len(copied["past"].keys) == 1
    assert not copied["past"].keys[0].requires_grad and copied["past"].keys[0].grad_fn is None
    copied["past"].update(torch.zeros(2, 3))
    assert len(cache.keys) == 1, "replaying a call leaves the recorded cache as it was"
    moved = convert({"past": cache}, "cpu", torch.float64)
    assert moved["past"].keys[0].dtype == torch.float64 and cache.keys[0].dtype == torch.float32


def test_a_device_that_cannot_be_set_up_is_its_own_error_with_the_real_cause(crossdev_module):
    pytest.importorskip("torch")
    import importlib.util
    if importlib.util.find_spec("torch_xla") is not None:
        pytest.skip("torch_xla is installed here: xla can be set up")
    result = crossdev_module.compare_model(tied, devices=["xla", "sim"])
    on_xla, on_sim = result
    assert on_xla.status == "error" and on_xla.error["category"] is None, repr(on_xla)
    assert on_xla.message.startswith("setting up device 'xla' failed: ModuleNotFoundError: No module named 'torch_xla'")
    assert on_sim.status in ("pass", "fail"), "the other device is compared all the same"
