"""The pickers users actually run, judged by the plugin's picker check against the presets that
model them, on every named host: accelerate's `PartialState().device` against `hf-accelerate`,
Lightning's `Fabric().device` against `lightning` (both pinned in pyproject.toml's test extra).

They agree only when the simulation is faithful (crossdev.picker_check): accelerate also asks
`torch.backends.mps.is_built()`, Lightning `platform.processor()`; neither finds torch_xla through
`importlib.util.find_spec` alone but imports it or reads its metadata and calls it (the stand-in
torch_xla); and both cache what they found, so each host runs in a fresh process."""
import importlib.util

import pytest

from test_pytest_plugin_picker import outcomes, picker_run

pytestmark = pytest.mark.schedule_first  # each real picker in a fresh process per host: about a minute (conftest.py)


@pytest.fixture(scope="module")
def hosts(crossdev_module):
    return crossdev_module.harness.named_hosts()


def preset_kind(crossdev_module, host, preset):
    return crossdev_module.resolve([None], host=host, policy=preset)[0]["resolved_type"]


def require(package):
    assert importlib.util.find_spec(package) is not None, \
        f"{package} is missing: it is a pinned test dependency (pyproject.toml's test extra; ci/setup.sh --test installs it)"


@pytest.mark.parametrize("package, spec, preset", [
    ("accelerate", "accelerate_device:partial_state_device", "hf-accelerate"),
    ("lightning_fabric", "lightning_fabric_device:fabric_device", "lightning"),
])
def test_the_real_picker_agrees_with_its_preset_on_every_host(tmp_path, hosts, package, spec, preset):
    require(package)
    r = picker_run(tmp_path, spec, preset=preset)
    got = outcomes(r)
    print(f"{spec} vs {preset}:", got)
    assert got == {h: "PASSED" for h in hosts}, r.stdout[-6000:]
    assert r.returncode == 0


def test_accelerate_default_device_is_not_what_the_preset_models(tmp_path, hosts, crossdev_module):
    """`PartialState().default_device` has no XLA branch (docs/redirect-policy.md): it parts from
    hf-accelerate exactly on the hosts where the preset picks XLA, and agrees everywhere else."""
    require("accelerate")
    r = picker_run(tmp_path, "accelerate_device:default_device", preset="hf-accelerate")
    want = {h: ("FAILED" if preset_kind(crossdev_module, h, "hf-accelerate") == "xla" else "PASSED") for h in hosts}
    assert "FAILED" in want.values() and "PASSED" in want.values()
    assert outcomes(r) == want, r.stdout[-6000:]
    assert "preset hf-accelerate picks xla:0" in r.stdout
