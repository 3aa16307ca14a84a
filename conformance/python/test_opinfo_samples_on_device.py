"""op_db's samples are made on the device, as test_compare_cpu makes them (crossdev/opinfo/suite.py
_made_on_device): a device that cannot run the ops op_db's generators use (torch_xla 2.9 cannot lower an
svd of an empty matrix, which make_fullrank_matrices_with_distinct_singular_values runs) fails the case as
the device's `error`, naming the sample and the device's words, never as a `harness` error; the samples
made before it are kept."""
import torch
from torch.testing._internal.opinfo.core import SampleInput

from crossdev.opinfo import suite


def generator(fail_at):
    for i in range(3):
        if i == fail_at:
            raise RuntimeError("Error while lowering: [] aten::svd, num_outputs=3\nXLA builder error: ...")
        yield SampleInput(torch.ones(2) * i)


def test_a_sample_the_device_cannot_make_is_the_cases_error():
    case = {"status": "pass"}
    made = list(suite._made_on_device(generator(fail_at=1), case, "cpu"))
    assert len(made) == 1 and case["status"] == "error"
    assert case["message"] == ("making sample 1 on the device (op_db's sample_inputs): "
                               "RuntimeError: Error while lowering: [] aten::svd, num_outputs=3")


def test_samples_the_device_makes_are_all_kept():
    case = {"status": "pass"}
    assert len(list(suite._made_on_device(generator(fail_at=None), case, "cpu"))) == 3
    assert case == {"status": "pass"}
