"""crossdev.models: your model on every device (docs/models.md).

    import crossdev
    result = crossdev.compare_model("crossdev_examples.dit:tiny_dit_block", devices=["sim"])
    print(result)            # a report line per device
    assert result.passed, result

The model is built once on the CPU by its factory, copied to each device, and its forward outputs
and every parameter's gradient are compared with the CPU golden (a float64 CPU run bounds the
error expected). When a comparison fails, teacher forcing names the innermost module, first in
execution order, whose own error is out of tolerance, and the first ATen op inside it.
"""
from .compare import CHECKS, DEFAULT_CHECKS, DTYPES, compare_model
from .factory import FactoryError, build, load_factory
from .result import CheckOutcome, DeviceResult, ModelComparison

__all__ = ["CHECKS", "DEFAULT_CHECKS", "DTYPES", "CheckOutcome", "DeviceResult", "FactoryError", "ModelComparison", "build",
           "compare_model", "load_factory"]
