"""Seed 000's device-compatible functions, verbatim in behaviour, as the Python reference the
crossdev ops are compared with (test_parity_seed000.py). Plain PyTorch, no JIT: these are the
fallbacks the seed switched to when `@torch.jit.script` hit "Unknown device for graph fuser".
"""
import torch.nn.functional as F


def device_compatible_modulate(x, shift, scale):
    """Device-compatible modulation without JIT compilation."""
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


def device_compatible_bias_dropout_scale(x, bias, scale, residual, dropout_prob, training=True):
    """Device-compatible bias dropout scale without JIT compilation."""
    if bias is not None:
        out = scale * F.dropout(x + bias, p=dropout_prob, training=training)
    else:
        out = scale * F.dropout(x, p=dropout_prob, training=training)

    if residual is not None:
        out = out + residual
    return out
