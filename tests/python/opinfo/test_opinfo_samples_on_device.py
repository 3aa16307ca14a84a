"""op_db's samples are made on the device, as test_compare_cpu makes them (crossdev/opinfo/suite.py
_made_on_device): a device that cannot run the ops op_db's generators use (torch_xla 2.9 cannot lower an
svd of an empty matrix, which make_fullrank_matrices_with_distinct_singular_values runs) is the
device's error, naming the sample and the device's words, never a `harness` error; the samples made before it
keep their verdicts (a mismatch among them fails the case, the error recorded beside it). A lazy device's sample moves to the CPU by value (it has no storage to share)."""
import subprocess
import sys

import torch
from torch.testing._internal.opinfo.core import SampleInput

from crossdev.opinfo import samples, suite


def generator(fail_at):
    for i in range(3):
        if i == fail_at:
            raise RuntimeError("Error while lowering: [] aten::svd, num_outputs=3\nXLA builder error: ...")
        yield SampleInput(torch.ones(2) * i)


def test_a_sample_the_device_cannot_make_is_recorded_beside_the_samples_made_before_it():
    errors = []
    made = list(suite._made_on_device(generator(fail_at=1), errors, "cpu"))
    assert len(made) == 1
    assert errors == ["making sample 1 on the device (op_db's sample_inputs): "
                      "RuntimeError: Error while lowering: [] aten::svd, num_outputs=3"]


def test_samples_the_device_makes_are_all_kept():
    errors = []
    assert len(list(suite._made_on_device(generator(fail_at=None), errors, "cpu"))) == 3
    assert errors == []


# LTC's TorchScript backend gives a `lazy` device on any torch: the same storage-less tensors as torch_xla's.
LAZY_VIEW_TO_CPU = """
import torch, torch._lazy.ts_backend
torch._lazy.ts_backend.init()
from crossdev.opinfo import samples
base = torch.arange(12.)
moved = samples._move(base.to("lazy")[::2], "cpu")
assert moved.device.type == "cpu" and torch.equal(moved, base[::2]), moved
print("moved")
"""


def test_a_view_on_a_lazy_device_moves_to_the_cpu_by_value():
    # its own process: the lazy backend, once started, stays in the process
    r = subprocess.run([sys.executable, "-c", LAZY_VIEW_TO_CPU], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.split() == ["moved"], r.stderr[-2000:]


def test_a_cpu_view_still_moves_with_its_storage():
    base = torch.arange(12.)
    view = base.as_strided((2, 2), (3, 1), 2)
    moved = samples._move(view, "cpu")
    assert moved.untyped_storage().nbytes() == base.untyped_storage().nbytes()
    assert (moved.stride(), moved.storage_offset()) == ((3, 1), 2) and torch.equal(moved, view)
