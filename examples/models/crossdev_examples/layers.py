"""Layers the example models share, each written plainly and, with fused=True, through crossdev's
fused op (torch.ops.crossdev.*), so the same model judges the fused kernel."""
import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6, fused=False):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.eps, self.fused = eps, fused

    def forward(self, x):
        if self.fused:
            return torch.ops.crossdev.rms_norm(x, self.weight, self.eps)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    def __init__(self, fused=False):
        super().__init__()
        self.fused = fused

    def forward(self, gate, up):
        if self.fused:
            return torch.ops.crossdev.swiglu(gate, up)
        return F.silu(gate) * up
