"""The backward of a random op, judged against the device's own forward draw (docs/opinfo.md, "Random ops").

A device draws other random numbers than the CPU, so a random op's gradients cannot be compared with the
CPU's. But given the device's own forward result, the gradient follows: the backward must use the draw the
forward made (dropout's mask, rrelu's slopes, fractional max pooling's windows). For the ops below the law
of the derivative is known from the forward's inputs and outputs alone:

- `scaling` (dropout, dropout2d, dropout3d, rrelu): y = c * x element by element, c drawn (0 or 1/(1-p),
  a slope): d y / d x = y / x, so grad_x = grad_y * y / x wherever x is not 0;
- `homogeneous` (fractional_max_pool2d/3d, and every `scaling` op): f(t x) = t f(x) for t > 0 with the draw
  held fixed, so by Euler's theorem sum(grad_x * x) = sum(grad_y * y) (one identity; a gradient sent to
  another index, or a mask unlike the forward's, breaks it for any grad_y but a null set).

Mutants that must fail it: tests/mutants/aten/dropout_backward_other_mask.cpp (a backward mask unlike the
forward's) and fractional_max_pool2d_backward_wrong_index.cpp (gradients sent to the wrong index)."""
from __future__ import annotations

import fnmatch

import torch

# (glob over the OpInfo's full name, the law of its derivative)
DERIVATIVE_LAWS = (
    ("nn.functional.dropout", "scaling"),
    ("nn.functional.dropout2d", "scaling"),
    ("nn.functional.dropout3d", "scaling"),
    ("nn.functional.rrelu", "scaling"),
    ("nn.functional.fractional_max_pool2d", "homogeneous"),
    ("nn.functional.fractional_max_pool3d", "homogeneous"),
)


def law_for(name: str) -> str | None:
    return next((law for glob, law in DERIVATIVE_LAWS if fnmatch.fnmatchcase(name, glob)), None)


def describe(name: str) -> str:
    law = law_for(name)
    if law == "scaling":
        return "gradient = grad_output * y / x element by element, from the device's own forward draw"
    if law == "homogeneous":
        return "sum(gradient * x) = sum(grad_output * y) (Euler), from the device's own forward draw"
    return ""


def check(name: str, inputs: list, outputs: list, grad_outputs: list, grads: list, tol) -> str:
    """'' when the device's gradients follow from its own forward draw by the op's derivative law (or the op has
    none), else what differs. Every tensor is the device's; the comparison runs on CPU copies in float64."""
    law = law_for(name)
    if law is None or len(inputs) != 1 or len(outputs) != 1 or not grads or grads[0] is None:
        return ""
    x, y, g, grad = (t.detach().to("cpu", torch.float64) for t in (inputs[0], outputs[0], grad_outputs[0], grads[0]))
    if grad.shape != x.shape or g.shape != y.shape:
        return f"grad: shape {tuple(grad.shape)} for an input of shape {tuple(x.shape)}"
    if not x.numel():
        return ""
    if law == "scaling" and y.shape == x.shape:
        nonzero = x != 0
        expected = torch.where(nonzero, g * y / torch.where(nonzero, x, torch.ones_like(x)), grad)
        bound = tol.atol + tol.rtol * expected.abs()
        beyond = ~((grad - expected).abs() <= bound)
        if bool(beyond.any()):
            i = int(beyond.reshape(-1).nonzero()[0])
            return (f"grad: {int(beyond.sum())} of {grad.numel()} element(s) differ from grad_output * y / x (the "
                    f"backward does not use the forward's draw); first at flat index {i}: {grad.reshape(-1)[i].item():.6g}, "
                    f"expected {expected.reshape(-1)[i].item():.6g}")
    lhs, rhs = float((grad * x).sum()), float((g * y).sum())
    scale = float((grad.abs() * x.abs()).sum() + (g.abs() * y.abs()).sum())
    if abs(lhs - rhs) > tol.atol * max(1, x.numel()) ** 0.5 + tol.rtol * scale * 8:
        return (f"grad: sum(gradient * x) = {lhs:.6g} but sum(grad_output * y) = {rhs:.6g}: the gradient does not "
                "follow from the forward's draw (Euler's identity for an op homogeneous in x)")
    return ""
