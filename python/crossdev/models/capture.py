"""Every module call of one forward, in execution order (forward hooks): its dotted path as
named_modules() gives it, the call that encloses it, copies of its inputs and output, and (when the
forward is back-propagated) the gradient that reached its output."""
from __future__ import annotations

from dataclasses import dataclass, field

from .placement import snapshot


@dataclass
class ModuleCall:
    index: int  # execution order (the order the calls start)
    path: str  # "" is the root model
    parent: int | None  # index of the enclosing call
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    output: object = None
    grad_output: list = field(default_factory=list)  # per output tensor (flattened), None where none reached it
    finished: int = -1  # order in which the calls return (backward runs in the reverse of it)
    draw_start: int = 0  # random draws the run had made when the call started (seed policy same_mask)

    @property
    def name(self) -> str:
        return self.path or "(model)"


class CallRecorder:
    """`with CallRecorder(model, keep_inputs=..., keep_grads=...) as calls:` run the forward inside."""

    def __init__(self, model, keep_inputs: bool = True, keep_grads: bool = False, draws=None):
        self.model = model
        self.draws = draws  # () -> random draws made so far (randomness.position), or None
        self.keep_inputs = keep_inputs
        self.keep_grads = keep_grads
        self.calls: list[ModuleCall] = []
        self._open: list[int] = []
        self._finished = 0
        self._handles = []

    def __enter__(self):
        for path, module in self.model.named_modules():
            self._handles.append(module.register_forward_pre_hook(self._pre(path), with_kwargs=True))
            self._handles.append(module.register_forward_hook(self._post(), with_kwargs=True))
        return self.calls

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles.clear()
        return False

    def _pre(self, path):
        def hook(module, args, kwargs):
            call = ModuleCall(len(self.calls), path, self._open[-1] if self._open else None)
            call.draw_start = self.draws() if self.draws is not None else 0
            if self.keep_inputs:
                call.args, call.kwargs = snapshot(args), snapshot(kwargs)
            self.calls.append(call)
            self._open.append(call.index)
        return hook

    def _post(self):
        def hook(module, args, kwargs, output):
            import torch
            from torch.utils._pytree import tree_flatten
            call = self.calls[self._open.pop()]
            call.output = snapshot(output)
            call.finished = self._finished
            self._finished += 1
            if self.keep_grads:
                leaves = tree_flatten(output)[0]
                call.grad_output = [None] * len(leaves)
                for i, t in enumerate(leaves):
                    if isinstance(t, torch.Tensor) and t.requires_grad:
                        t.register_hook(self._grad_sink(call, i))
        return hook

    @staticmethod
    def _grad_sink(call, i):
        def sink(grad):
            call.grad_output[i] = grad.detach().clone()
        return sink
