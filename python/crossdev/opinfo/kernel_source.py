"""Which kernel an OpInfo case ran on sim (docs/opinfo.md, "Composite or CPU kernel on sim").

sim is not the CPU under another name: its backend fallback runs the CPU's kernel only where ATen
has nothing more specific for PrivateUse1. An op with a CompositeExplicitAutograd kernel runs that
kernel on sim, as on any new out-of-tree backend, while the CPU golden runs the CPU's own kernel: that
compares two implementations. An op that reaches sim's fallback runs the very CPU kernel of the
golden on host memory: it proves the plumbing only.

The ATen ops a case reaches are recorded with a TorchDispatchMode around one sample's device call
(forward, and the gradient for a backward case); the dispatch mode sees them after autograd and after
CompositeImplicitAutograd has decomposed (that decomposition runs on the CPU too). Each op's
PrivateUse1 entry in the dispatcher's table says what ran: a kernel of sim's own, a composite
kernel ("default backend kernel" from CompositeExplicitAutograd), or sim's backend fallback.
A CompositeExplicitAutogradNonFunctional entry is the structured wrapper around the op's `out=`
overload, whose entry decides; views only reinterpret metadata and are not counted."""
from __future__ import annotations

import functools

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

COMPOSITE = "composite"        # a CompositeExplicitAutograd kernel ran on the device
CPU_FALLBACK = "cpu_fallback"  # the CPU's kernel, through sim's backend fallback
SIM_KERNEL = "sim_kernel"      # only sim's own kernels (copies, allocation) and views ran
MEANING = {
    COMPOSITE: "a composite kernel (CompositeExplicitAutograd) ran on the device: the code a new backend inherits, "
               "compared with the CPU's own kernel",
    CPU_FALLBACK: "the CPU's kernel ran through sim's backend fallback: proves the plumbing only",
    SIM_KERNEL: "only sim's own kernels (allocation, copies) and views ran",
}


@functools.lru_cache(maxsize=None)
def dispatch_entry(qualified: str) -> str:
    """What PrivateUse1 runs for `aten::op.overload`: COMPOSITE, CPU_FALLBACK, SIM_KERNEL or 'view'."""
    table = torch._C._dispatch_dump_table(qualified)
    line = next((l for l in table.splitlines() if l.startswith("PrivateUse1:")), "")
    if "[backend fallback]" in line or not line:
        return CPU_FALLBACK
    if "RegisterCompositeExplicitAutogradNonFunctional" in line:
        out = _out_overload(qualified)
        return dispatch_entry(out) if out else COMPOSITE
    if "RegisterCompositeExplicitAutograd" in line or "[default backend kernel]" in line:
        return COMPOSITE
    return SIM_KERNEL


def _out_overload(qualified: str) -> str | None:
    """The out= overload of a structured op (`aten::tanh` -> `aten::tanh.out`, `aten::tanh_backward` ->
    `aten::tanh_backward.grad_input`): the overload with a keyword-only argument it writes."""
    name = qualified.split("::")[-1].split(".")[0]
    packet = getattr(torch.ops.aten, name, None)
    for overload in (packet.overloads() if packet is not None else []):
        schema = getattr(packet, overload)._schema
        if any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in schema.arguments):
            return f"aten::{name}.{overload}"
    return None


def _is_view(func) -> bool:
    returns = func._schema.returns
    return bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)


def _qualified(func) -> str:
    name = func._schema.name
    return name + ("." + func._schema.overload_name if func._schema.overload_name else "")


class _Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not _is_view(func):
            name = _qualified(func)
            self.ops.setdefault(name, dispatch_entry(name))
        return func(*args, **(kwargs or {}))


def label(ops: dict) -> str:
    """The case's label from {aten op: entry}: composite wins (the case compared two implementations)."""
    kinds = set(ops.values())
    for kind in (COMPOSITE, CPU_FALLBACK):
        if kind in kinds:
            return kind
    return SIM_KERNEL


# Allocation, fills and copies: their composite kernels only allocate and copy (the sample's move to
# the device, the gradient's zeros), so they do not make a case "composite".
PLUMBING = ("_to_copy", "copy_", "clone", "contiguous", "empty*", "new_*", "*_like", "zeros", "ones", "full",
            "fill_*", "zero_", "scalar_tensor", "arange*", "lift_fresh")


def _is_plumbing(qualified: str) -> bool:
    import fnmatch

    name = qualified.split("::")[-1].split(".")[0]
    return any(fnmatch.fnmatchcase(name, glob) for glob in PLUMBING)


def describe(run_on_device) -> dict:
    """details for a case: `kernel_source` (its label) and `device_kernels` (each ATen op reached and
    what ran for it, allocation and copies left out); `run_on_device()` runs one sample's op on the device."""
    recorder = _Recorder()
    with recorder:
        run_on_device()
    ops = {name: kind for name, kind in recorder.ops.items() if not _is_plumbing(name)}
    grouped = {}
    for name, kind in sorted(ops.items()):
        grouped.setdefault(kind, []).append(name)
    return {"kernel_source": label(ops),
            "device_kernels": "; ".join(f"{kind}: {', '.join(names)}" for kind, names in sorted(grouped.items()))
                              or "only views, allocation and copies"}


def device_run(op, sample, device, check, call, to_device):
    """A closure running `sample`'s op on `device` as the case does (forward, then the gradient of every
    output that requires grad for a backward case), for describe(); the sample is moved first."""
    dev = to_device(sample, device)
    inputs = [t for t in tree_flatten((dev.input, dev.args, dev.kwargs))[0]
              if isinstance(t, torch.Tensor) and t.requires_grad]

    def run():
        result = call(op, dev)
        if check != "backward":
            return
        outs = [t for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
        if outs and inputs:
            with torch.utils._python_dispatch._disable_current_modes():
                grads = [torch.ones_like(t) for t in outs]
            torch.autograd.grad(outs, inputs, grads, allow_unused=True)
    return run


_LABELS = {}  # (op name, variant_test_name, dtype name, check, form) -> details: the same on every simulated kind (one PrivateUse1 table)


def for_case(op, sample, device, check, variant, dtype_name) -> dict:
    """describe() for one case's first compared sample; {} when it cannot be told (the labelling never
    changes a case's verdict). Once per op, dtype, check and form in a process: the simulated kinds share
    sim's dispatcher entries and op_db's seeded samples, so a second kind would record the same ops."""
    form = "function" if variant == "out" else variant  # out= reaches the same kernels as the function
    key = (op.name, op.variant_test_name, dtype_name, check, form)
    if key not in _LABELS:
        _LABELS[key] = _record(op, sample, device, check, form)
    return dict(_LABELS[key])


def _record(op, sample, device, check, form) -> dict:
    from . import samples

    try:
        return describe(device_run(op, sample, device, check,
                                   lambda o, s: samples._call(o, s, form),
                                   lambda s, d: samples.keep_on_host(op, s, samples._to_device(s, d))))
    except Exception as e:  # noqa: BLE001
        return {"kernel_source": "unknown", "device_kernels": f"not recorded: {type(e).__name__}: {e}"[:300]}
