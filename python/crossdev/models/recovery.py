"""Device errors with the recovery applied (docs/models.md, "Recovery"): where a row asks for it
(`recover: true`, compare_model(recover=True)), a device whose run raised an error that crossdev's
classifier (seed 003's classes) recognises is run again with that class's recovery applied to
the op that raises, and to that op alone:

    unsupported_op  -> move_to_cpu: the op runs on the CPU, its inputs copied there and its
                       outputs back (what PYTORCH_ENABLE_MPS_FALLBACK=1 does for MPS)
    device_mismatch -> move_to_common_device: the op's CPU tensors (not 0-dim) move to the device

Every other class keeps its error: its recovery (moving the whole model elsewhere, a cast) would
not test the device any more. A TorchDispatchMode catches the op's error, so the rest of the
model still runs on the device and is still compared with the CPU golden."""
from __future__ import annotations

from torch.utils._python_dispatch import TorchDispatchMode

from . import errors

APPLIED_FOR = {"unsupported_op": "move_to_cpu", "device_mismatch": "move_to_common_device"}


def applicable(described: dict) -> bool:
    return described.get("category") in APPLIED_FOR


def _written_arguments(func, args, kwargs):
    """The tensors the op writes (its schema's `Tensor(a!)` arguments), positional or keyword."""
    written = []
    for i, argument in enumerate(func._schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            value = args[i] if i < len(args) else kwargs.get(argument.name)
            if value is not None:
                written.append((i, argument.name))
    return written


def _on_cpu(func, args, kwargs, device):
    import torch
    from torch.utils._pytree import tree_map
    moved = tree_map(lambda t: t.to("cpu") if isinstance(t, torch.Tensor) else t, (args, kwargs))
    cpu_args, cpu_kwargs = moved
    out = func(*cpu_args, **cpu_kwargs)
    back = {}
    for i, name in _written_arguments(func, args, kwargs):
        original, on_cpu = (args[i], cpu_args[i]) if i < len(args) else (kwargs[name], cpu_kwargs[name])
        original.copy_(on_cpu)
        back[id(on_cpu)] = original
    return tree_map(lambda t: back.get(id(t), t.to(device)) if isinstance(t, torch.Tensor) else t, out)


def _on_device(func, args, kwargs, device):
    import torch
    from torch.utils._pytree import tree_map
    move = (lambda t: t.to(device) if isinstance(t, torch.Tensor) and t.device.type == "cpu" and t.dim() > 0 else t)
    args, kwargs = tree_map(move, (args, kwargs))
    return func(*args, **kwargs)


_ACTIONS = {"move_to_cpu": _on_cpu, "move_to_common_device": _on_device}


class OpRecovery(TorchDispatchMode):
    """`with OpRecovery(device) as recovery:` a classified op error inside is recovered op by op;
    `recovery.applied` counts each (op, category, action)."""

    def __init__(self, device):
        super().__init__()
        self.device = device
        self.applied: dict = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            return func(*args, **kwargs)
        except Exception as e:  # noqa: BLE001  only classified errors are recovered; the rest propagate
            described = errors.describe(e)
            if not applicable(described):
                raise
            action = APPLIED_FOR[described["category"]]
            out = _ACTIONS[action](func, args, kwargs, self.device)
            key = (func._schema.name, described["category"], action)
            self.applied[key] = self.applied.get(key, 0) + 1
            return out

    def describe(self) -> str:
        return ", ".join(f"{action} for {op} ({category}, {n} call{'s' if n != 1 else ''})"
                         for (op, category, action), n in self.applied.items()) or "nothing"

    def records(self) -> list:
        return [{"op": op, "category": category, "action": action, "calls": n}
                for (op, category, action), n in self.applied.items()]
