"""A tiny DiT block (seed 000): adaLN modulate, attention, an MLP with GELU, bias-dropout-add.

    tiny_dit_block        plain PyTorch (aten::gelu, aten::native_layer_norm, ...)
    tiny_dit_block_fused  the same maths through torch.ops.crossdev.{modulate, gelu_tanh,
                          bias_dropout_add_scale}
    tiny_dit_block_dropout_train  dropout active in train mode: a random forward (no seed policy)
"""
import torch
import torch.nn.functional as F
from torch import nn

DIM, HEADS, TOKENS, BATCH, SEED = 32, 4, 8, 2, 0


class Modulate(nn.Module):
    """adaLN: x * (1 + scale) + shift, one shift/scale row per batch element."""

    def __init__(self, fused=False):
        super().__init__()
        self.fused = fused

    def forward(self, x, shift, scale):
        if self.fused:
            return torch.ops.crossdev.modulate(x, shift, scale)
        return x * (1 + scale[:, None, :]) + shift[:, None, :]


class GeluTanh(nn.Module):
    def forward(self, x):
        return torch.ops.crossdev.gelu_tanh(x)


class BiasDropoutAdd(nn.Module):
    """residual + gate * dropout(x + bias): the bias of the layer before, kept apart to be fused."""

    def __init__(self, dim, p=0.1, fused=False):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim) * 0.02)
        self.p, self.fused = p, fused

    def forward(self, x, gate, residual):
        if self.fused:
            return torch.ops.crossdev.bias_dropout_add_scale(x, self.bias, gate[:, None, :], residual, 1.0,
                                                             self.p, self.training)
        return gate[:, None, :] * F.dropout(x + self.bias, self.p, self.training) + residual


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


class Mlp(nn.Module):
    def __init__(self, dim, hidden, fused=False):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = GeluTanh() if fused else nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(hidden, dim, bias=False)  # its bias is in the bias-dropout-add

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class DiTBlock(nn.Module):
    def __init__(self, dim=DIM, heads=HEADS, mlp_ratio=4, fused=False):
        super().__init__()
        self.ada_ln = nn.Sequential(nn.SiLU(), nn.Linear(dim, 6 * dim))
        self.norm1 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.attn_modulate = Modulate(fused)
        self.attn = Attention(dim, heads)
        self.attn_residual = BiasDropoutAdd(dim, fused=fused)
        self.norm2 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.mlp_modulate = Modulate(fused)
        self.mlp = Mlp(dim, mlp_ratio * dim, fused)
        self.mlp_residual = BiasDropoutAdd(dim, fused=fused)

    def forward(self, x, c):
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.ada_ln(c).chunk(6, dim=1)
        x = self.attn_residual(self.attn(self.attn_modulate(self.norm1(x), shift_msa, scale_msa)), gate_msa, x)
        return self.mlp_residual(self.mlp(self.mlp_modulate(self.norm2(x), shift_mlp, scale_mlp)), gate_mlp, x)


def _build(fused, train=False):
    if fused:
        import crossdev
        crossdev.load()  # registers torch.ops.crossdev.*
    torch.manual_seed(SEED)
    model = DiTBlock(fused=fused)
    model.train(train)
    x = torch.randn(BATCH, TOKENS, DIM)
    c = torch.randn(BATCH, DIM)
    return model, (x, c)


def tiny_dit_block():
    return _build(fused=False)


def tiny_dit_block_fused():
    return _build(fused=True)


def tiny_dit_block_dropout_train():
    return _build(fused=False, train=True)
