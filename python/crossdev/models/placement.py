"""Copies of a CPU model and its inputs in a dtype and on a device. The dtype conversion happens on
the CPU first, so every device starts from bit-identical values (rounding is not a device's error).

Shared parameters: `Module.to()` keeps a Parameter object only when the moved tensor is
shallow-copy compatible with the CPU's (`torch._has_compatible_shallow_copy_type`: TensorImpl's
dense CPU, CUDA, MPS, HIP, XPU and HPU tensors). On any other kind (xla's XLATensorImpl, a
PrivateUse1 backend such as sim) every module gets a Parameter of its own, so weights tied across
modules (GPT-2's lm_head and wte) come apart. `ties()` names a model's shared parameters,
`broken_ties()` those a device copy split; sim emulating a kind that keeps them re-ties its copy as
that kind's `.to()` would (sim cannot: the decision is made on the CPU tensor's side)."""
from __future__ import annotations

import copy
import threading
from dataclasses import dataclass

# The kinds whose tensors are shallow-copy compatible with the CPU's, so `.to()` keeps Parameter objects
# (c10/core/TensorImpl.h, has_compatible_shallow_copy_type's dense backends).
KEEPS_PARAMETERS = ("cpu", "cuda", "mps", "hip", "xpu", "hpu")

_DISPATCH_LOCK = threading.Lock()


def _plain(value) -> bool:
    """Whether every leaf of `value` (tuples, lists, dicts) is a tensor or an immutable scalar."""
    import torch
    from torch.utils._pytree import tree_flatten
    return all(isinstance(leaf, (torch.Tensor, int, float, bool, str, bytes, type(None), torch.dtype, torch.device))
               for leaf in tree_flatten(value)[0])


def map_tensors(value, fn):
    """`value` with fn(t) for every tensor in it, however deep: containers and objects too (a
    transformers Cache passed as a keyword holds the key/value tensors of earlier layers). Objects
    are deep-copied, so a later call that mutates them (Cache.update) leaves the original as it was;
    a tensor reached twice maps to one result. An object that cannot be copied is passed as it is."""
    import torch
    from torch.utils._pytree import tree_map
    if _plain(value):
        return tree_map(lambda t: fn(t) if isinstance(t, torch.Tensor) else t, value)
    dispatch = copy._deepcopy_dispatch  # exact-type table that copy.deepcopy consults before __deepcopy__
    kinds = (torch.Tensor, torch.nn.Parameter)
    with _DISPATCH_LOCK:
        saved = {k: dispatch.get(k) for k in kinds}
        try:
            for k in kinds:
                dispatch[k] = lambda t, memo: fn(t)
            return copy.deepcopy(value)
        except Exception:  # noqa: BLE001  an object deepcopy cannot copy: tensors in containers only
            pass
        finally:
            for k, v in saved.items():
                if v is None:
                    dispatch.pop(k, None)
                else:
                    dispatch[k] = v
    return tree_map(lambda t: fn(t) if isinstance(t, torch.Tensor) else t, value)


def convert(value, device, dtype=None):
    """Tensors anywhere in `value` (containers, objects), detached, floating ones in `dtype`, on `device`."""
    def move(t):
        t = t.detach()
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        return t.to(device)

    return map_tensors(value, move)


def snapshot(value):
    """A detached copy of every tensor in `value`, however deep: a call's inputs as they were when it ran."""
    return map_tensors(value, lambda t: t.detach().clone())


def ties(model) -> list:
    """The model's shared parameters: for each Parameter reached under more than one name
    (named_parameters(remove_duplicate=False)), its names in the order the model lists them."""
    names = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), []).append(name)
    return [tuple(group) for group in names.values() if len(group) > 1]


@dataclass(frozen=True)
class BrokenTie:
    """One shared parameter of the CPU model that is `parts` separate parameters on the device."""
    names: tuple  # every name of the CPU's one parameter
    parts: int  # how many parameters the device copy has for them
    remedy: str

    def describe(self, where: str) -> str:
        listed = " and ".join(self.names) if len(self.names) == 2 else ", ".join(self.names)
        return (f"{listed} are one parameter on the CPU and {self.parts} on {where} after .to(): "
                f"{self.remedy}")


def _remedy(model, names) -> str:
    if callable(getattr(model, "tie_weights", None)):
        return "call tie_weights() after moving"
    first, *rest = names
    return f"assign {first} to {', '.join(rest)} again after moving (the shared Parameter)"


def broken_ties(model, twin) -> list:
    """[BrokenTie] for each shared parameter of the CPU `model` that its device copy `twin` splits."""
    on_device = {}
    for name, p in twin.named_parameters(remove_duplicate=False):
        on_device[name] = id(p)
    broken = []
    for group in ties(model):
        parts = len({on_device.get(name) for name in group})
        if parts > 1:
            broken.append(BrokenTie(group, parts, _remedy(model, group)))
    return broken


def retie(model, twin) -> None:
    """Make `twin` share its parameters as the CPU `model` does: each shared parameter's other names
    point at the Parameter of its first name (what `.to()` gives on a kind in KEEPS_PARAMETERS)."""
    for first, *rest in ties(model):
        keep = twin.get_parameter(first)
        for name in rest:
            owner, _, attribute = name.rpartition(".")
            setattr(twin.get_submodule(owner) if owner else twin, attribute, keep)


def model_copy(model, device, dtype=None, keeps_parameters=None):
    """A deep copy of the CPU model in `dtype` (floating parameters and buffers) on `device`.
    keeps_parameters: for a simulated device, whether the kind it stands for keeps Parameter objects
    on `.to()` (then the copy is re-tied as that kind's would be); None: what `.to()` does here."""
    twin = copy.deepcopy(model)
    if dtype is not None:
        twin.to(dtype=dtype)
    twin = twin.to(device)
    if keeps_parameters:
        retie(model, twin)
    return twin
