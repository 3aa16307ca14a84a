"""A tiny LLaMA-style model (seed 001): embedding, RMSNorm, rotary, causal SDPA, SwiGLU, two blocks.

    tiny_llama        plain PyTorch
    tiny_llama_fused  the same maths through torch.ops.crossdev.{rms_norm, rotary, swiglu}
    tiny_llama_train  tiny_llama with next-token cross-entropy and AdamW (lr 1e-3): the train check
"""
import torch
import torch.nn.functional as F
from torch import nn

from .layers import RMSNorm, SwiGLU

VOCAB, DIM, HEADS, LAYERS, TOKENS, BATCH, SEED = 64, 32, 4, 2, 8, 2, 0


class Rotary(nn.Module):
    """LLaMA's half rotation of x [B, T, H, Dh] by position."""

    def __init__(self, head_dim, tokens, fused=False):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(tokens).float(), inv_freq)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.fused = fused

    def forward(self, x):
        if self.fused:
            return torch.ops.crossdev.rotary(x, self.cos, self.sin)
        h = x.shape[-1] // 2
        rotated = torch.cat([-x[..., h:], x[..., :h]], dim=-1)
        return x * self.cos[None, :, None, :] + rotated * self.sin[None, :, None, :]


class Attention(nn.Module):
    def __init__(self, dim, heads, tokens, fused):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.rotary = Rotary(dim // heads, tokens, fused)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = (w(x).view(b, t, self.heads, d // self.heads) for w in (self.wq, self.wk, self.wv))
        q, k = self.rotary(q), self.rotary(k)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(b, t, d))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden, fused):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)  # gate
        self.w3 = nn.Linear(dim, hidden, bias=False)  # up
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.act = SwiGLU(fused)

    def forward(self, x):
        return self.w2(self.act(self.w1(x), self.w3(x)))


class Block(nn.Module):
    def __init__(self, dim, heads, tokens, fused):
        super().__init__()
        self.attention_norm = RMSNorm(dim, fused=fused)
        self.attention = Attention(dim, heads, tokens, fused)
        self.ffn_norm = RMSNorm(dim, fused=fused)
        self.feed_forward = FeedForward(dim, 3 * dim, fused)

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class TinyLlama(nn.Module):
    def __init__(self, fused=False):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block(DIM, HEADS, TOKENS, fused) for _ in range(LAYERS))
        self.norm = RMSNorm(DIM, fused=fused)
        self.output = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.output(self.norm(x))


def _build(fused):
    if fused:
        import crossdev
        crossdev.load()  # registers torch.ops.crossdev.*
    torch.manual_seed(SEED)
    model = TinyLlama(fused).eval()
    tokens = torch.randint(0, VOCAB, (BATCH, TOKENS))
    return model, (tokens,)


def tiny_llama():
    return _build(fused=False)


def tiny_llama_fused():
    return _build(fused=True)


def next_token_loss(logits, tokens):
    """Cross-entropy of each position's logits against the next token."""
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))


def tiny_llama_train():
    model, inputs = _build(fused=False)
    return {"model": model, "inputs": inputs, "loss": next_token_loss, "steps": 5,
            "optimizer": lambda parameters: torch.optim.AdamW(parameters, lr=1e-3)}
