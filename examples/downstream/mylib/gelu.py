"""mylib_py::gelu_tanh, a Python custom op: tanh-approximated GELU with its own autograd formula.
Importing this module registers it with the dispatcher, so torch.ops.mylib_py.gelu_tanh (and any
C++ caller, crossdev's candidate rows included) can call it."""
import math

import torch

_C = math.sqrt(2.0 / math.pi)
_A = 0.044715


def _opmath(x):
    return x if x.dtype == torch.float64 else x.float()


@torch.library.custom_op("mylib_py::gelu_tanh", mutates_args=())
def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    v = _opmath(x)
    return (0.5 * v * (1.0 + torch.tanh(_C * (v + _A * v * v * v)))).to(x.dtype)


@gelu_tanh.register_fake
def _(x):
    return torch.empty_like(x)


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _backward(ctx, grad):
    (x,) = ctx.saved_tensors
    v = _opmath(x)
    t = torch.tanh(_C * (v + _A * v * v * v))
    slope = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * _C * (1.0 + 3.0 * _A * v * v)
    return (_opmath(grad) * slope).to(x.dtype)


gelu_tanh.register_autograd(_backward, setup_context=_setup_context)
