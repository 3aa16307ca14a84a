"""crossdev.parse_device accepts and rejects exactly what torch.device accepts for the plain
PyTorch device types, on a list of well over 100 strings, checked against the installed torch."""
import itertools

import pytest
import torch

CROSSDEV_TYPES = {"cpu", "cuda", "mps", "xpu", "xla"}


def candidate_strings():
    types = ["cpu", "cuda", "mps", "xpu", "xla"]
    indices = ["", ":0", ":1", ":7", ":10", ":127", ":01", ":00", ":-1", ":-2", ":+1", ": 1", ":1 ", ":", ":1:2",
               ":0x1", ":1.0", "::1", ":a", ":١"]
    out = [t + i for t, i in itertools.product(types, indices)]
    out += ["CUDA", "Cuda", "CPU", "MPS", " cuda", "cuda ", "cu da", "", ":0", "gpu", "gpu:0", "cuda_0", "cuda-0",
            "meta", "hip:0", "privateuseone", "lazy", "tpu", "tpu:0", "cpu:-1", "\tcpu", "cpu\n", "cuda:1\x00",
            "cuda:128", "cuda:255", "cuda:256", "cuda:99999999999", "xla:0:0", "mps:", "cpu,cuda", "cuda;0"]
    return out


STRINGS = candidate_strings()


def torch_verdict(text):
    try:
        d = torch.device(text)
    except (RuntimeError, ValueError):
        return None
    return d


def test_enough_strings():
    assert len(set(STRINGS)) >= 100


@pytest.mark.parametrize("text", STRINGS, ids=[repr(s) for s in STRINGS])
def test_accepts_exactly_what_torch_device_accepts(crossdev_module, text):
    expected = torch_verdict(text)
    if text.startswith("tpu") or text == "cpu:-1":
        pytest.skip("crossdev extension (tested in test_crossdev_extensions)")
    try:
        ours = crossdev_module.parse_device(text)
    except ValueError as err:
        ours, error = None, str(err)
    else:
        error = ""
    if expected is None:
        assert ours is None, f"torch rejects {text!r} but crossdev accepted {ours}"
        assert repr(text)[1:-1] in error or text in error or "invalid device string" in error
        return
    if expected.type not in CROSSDEV_TYPES:
        assert ours is None and "not a crossdev target" in error
        return
    digits = text.partition(":")[2]
    if digits and int(digits) > 127:
        # Documented divergence: torch wraps the int8 DeviceIndex ('cuda:128' -> index -128);
        # crossdev refuses the string. Prove torch still wraps, so this branch stays honest.
        assert expected.index != int(digits)
        assert ours is None and "out of range" in error
        return
    assert ours is not None, f"torch accepts {text!r} as {expected} but crossdev said: {error}"
    assert ours["type"] == expected.type
    assert ours["index"] == expected.index


def test_crossdev_extensions(crossdev_module):
    assert crossdev_module.parse_device("tpu")["type"] == "xla"
    assert crossdev_module.parse_device("tpu:2")["index"] == 2
    assert crossdev_module.parse_device("cpu:-1")["cpu_override"] is True
    with pytest.raises(ValueError, match="cpu, cuda, mps, xpu, xla"):
        crossdev_module.parse_device("TPU")
