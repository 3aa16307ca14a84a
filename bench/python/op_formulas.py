"""The ops of crossdev_bench as eager PyTorch functions, for torch.compile to generate code from.

Each formula is the op's fallback semantics (docs/ops.md), written the way a user would write it
before reaching for a fused kernel; torch.compile (Inductor) turns it into its own fused CPU code.
One row per op: the function takes the tensors and scalars of one call (crossdev.bench.make_inputs)
and returns the output. Dropout uses torch's own RNG (Inductor generates it inline): its mask differs
from crossdev's portable one, but the memory traffic, which is what the benchmark compares, is the
same.
"""
import torch
import torch.nn.functional as F


def modulate(t, s, training):
    return t["x"] * (1 + t["scale"][:, None, :]) + t["shift"][:, None, :]


def bias_dropout_add_scale(t, s, training):
    x = t["x"] + t["bias"] if "bias" in t else t["x"]
    scale = t["scale"] if "scale" in t else s.get("scale_value", 1.0)
    out = scale * F.dropout(x, p=s.get("p", 0.0), training=training)
    return out + t["residual"] if "residual" in t else out


def rms_norm(t, s, training):
    x = t["x"]
    acc = x.float()
    normed = acc * torch.rsqrt(acc.pow(2).mean(-1, keepdim=True) + s.get("eps", 1e-6))
    return (normed * t["weight"].float()).to(x.dtype)


def layer_norm_modulate(t, s, training):
    x = t["x"]
    normed = F.layer_norm(x, [x.size(-1)], None, None, s.get("eps", 1e-5))
    return normed * (1 + t["scale"][:, None, :]) + t["shift"][:, None, :]


def gelu_tanh(t, s, training):
    return F.gelu(t["x"], approximate="tanh")


def swiglu(t, s, training):
    return F.silu(t["gate"]) * t["up"]


def rotary(t, s, training):
    x, cos, sin = t["x"], t["cos"][:, None, :], t["sin"][:, None, :]
    half = x.size(-1) // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def scaled_masked_softmax(t, s, training):
    logits = t["scores"] * s.get("scale", 1.0)
    mask = t.get("mask")
    if mask is None:
        return torch.softmax(logits, -1)
    logits = logits.masked_fill(mask, float("-inf"))
    return torch.softmax(logits, -1).masked_fill(mask, 0.0)


FORMULAS = {
    "modulate": modulate,
    "bias_dropout_add_scale": bias_dropout_add_scale,
    "rms_norm": rms_norm,
    "layer_norm_modulate": layer_norm_modulate,
    "gelu_tanh": gelu_tanh,
    "swiglu": swiglu,
    "rotary": rotary,
    "scaled_masked_softmax": scaled_masked_softmax,
}
