"""A tiny recursive reasoning model and its training loop (seed 004: TinyRecursiveModels, ported
to MPS): one small network applied again and again, a latent state z refined from the input x and
the current answer y, then the answer refined from z, for several cycles; only the last cycle
carries gradients (the earlier ones run under no_grad, as TRM's training does).

    tiny_recursive        plain PyTorch: embedding, RMSNorm, SwiGLU MLP, the same net 8 times
    tiny_recursive_fused  the same maths through torch.ops.crossdev.{rms_norm, swiglu}
    tiny_recursive_train  tiny_recursive with its training loop: cross-entropy against the sorted
                          input (the puzzle), AdamW at lr 1e-3, 5 steps: the train check

Every call of the shared net is a module call of its own (`net` called 8 times per forward), so a
culprit is named by its path and the call order says which recursion step went wrong first.
"""
import torch
import torch.nn.functional as F
from torch import nn

from .layers import RMSNorm, SwiGLU

VOCAB, DIM, TOKENS, BATCH, SEED = 16, 32, 8, 4, 0
H_CYCLES, L_CYCLES = 2, 3  # answer refinements; latent refinements per answer refinement


class Net(nn.Module):
    """The one small network the recursion reuses: a token-mixing linear and a SwiGLU MLP, pre-norm."""

    def __init__(self, dim, tokens, fused):
        super().__init__()
        self.mix_norm = RMSNorm(dim, fused=fused)
        self.token_mix = nn.Linear(tokens, tokens)
        self.mlp_norm = RMSNorm(dim, fused=fused)
        self.gate = nn.Linear(dim, 2 * dim, bias=False)
        self.up = nn.Linear(dim, 2 * dim, bias=False)
        self.act = SwiGLU(fused)
        self.down = nn.Linear(2 * dim, dim, bias=False)

    def forward(self, h):
        h = h + self.token_mix(self.mix_norm(h).transpose(1, 2)).transpose(1, 2)
        n = self.mlp_norm(h)
        return h + self.down(self.act(self.gate(n), self.up(n)))


class TinyRecursiveModel(nn.Module):
    def __init__(self, fused=False):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.register_buffer("y_init", 0.02 * torch.randn(DIM))  # fixed starting answer and latent, as in TRM
        self.register_buffer("z_init", 0.02 * torch.randn(DIM))
        self.net = Net(DIM, TOKENS, fused)
        self.norm = RMSNorm(DIM, fused=fused)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def refine(self, x, y, z):
        for _ in range(L_CYCLES):
            z = self.net(x + y + z)
        return self.net(y + z), z

    def forward(self, tokens, targets=None):  # targets: the training loop's, unused by the forward
        x = self.embed(tokens)
        y, z = self.y_init.expand_as(x), self.z_init.expand_as(x)
        with torch.no_grad():
            for _ in range(H_CYCLES - 1):
                y, z = self.refine(x, y, z)
        y, _ = self.refine(x, y.detach(), z.detach())
        return self.head(self.norm(y))


def _build(fused):
    if fused:
        import crossdev
        crossdev.load()  # registers torch.ops.crossdev.*
    torch.manual_seed(SEED)
    model = TinyRecursiveModel(fused).eval()
    tokens = torch.randint(0, VOCAB, (BATCH, TOKENS))
    return model, (tokens, tokens.sort(dim=1).values)


def tiny_recursive():
    return _build(fused=False)


def tiny_recursive_fused():
    return _build(fused=True)


def puzzle_loss(logits, tokens, targets):
    """Cross-entropy of every position's answer against the sorted input."""
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def tiny_recursive_train():
    model, inputs = _build(fused=False)
    return {"model": model, "inputs": inputs, "loss": puzzle_loss, "steps": 5,
            "optimizer": lambda parameters: torch.optim.AdamW(parameters, lr=1e-3)}


def train(device="cpu", steps=5):
    """The training loop itself, as a user runs it on one device (seed 004's pretrain.py, in small):
    the losses before each step and after the last."""
    built = tiny_recursive_train()
    model = built["model"].to(device)
    tokens, targets = (t.to(device) for t in built["inputs"])
    optimizer = built["optimizer"](model.parameters())
    losses = []
    for step in range(steps + 1):
        optimizer.zero_grad(set_to_none=True)
        loss = puzzle_loss(model(tokens, targets), tokens, targets)
        losses.append(loss.item())
        if step < steps:
            loss.backward()
            optimizer.step()
    return losses
