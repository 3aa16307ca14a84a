"""One OpInfo sample on the device and on the CPU (the golden, as test_mps.py's TestConsistency
does), forward or backward, and the comparison of every tensor they return."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import torch
from torch.utils._pytree import tree_flatten, tree_map

from . import open_contract
from .host_arguments import keep_on_host
from .selection import full_name
from .tolerances import Tolerance


class DeviceError(Exception):
    """The op raised on the device but not on the CPU: the case's `error`."""


class GoldenError(Exception):
    """The op raised on the CPU: the sample has no golden and is not counted."""


@dataclass
class Kept:
    """What a failing sample's float64 diagnostic needs (float64_diagnostic.py): both sides' results
    (outputs, or gradients for backward) and the grad_outputs the backward used."""
    actual: object
    expected: object
    grad_outputs: list = field(default_factory=list)


@dataclass
class Outcome:
    """One sample's comparison: `mismatch` is "" when every tensor agrees; `kept` is set when it is not.
    `shapes`: the sample's input shapes where the runner records them (the CPU-capability axis).
    `random_ops`: the nondeterministic_seeded ATen ops the golden's call drew from (random_ops.py; empty
    when it drew nothing, or returned the same bits for another seed); its values were then not compared.
    `golden_sample`: the CPU sample the golden ran (the float64 rule runs it again in float64).
    `open_outputs`: what of the result the contract left to the backend (open_contract.OPEN_OUTPUTS)."""
    mismatch: str = ""
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float = 0.0
    shapes: list = field(default_factory=list)
    kept: Kept | None = None
    random_ops: list = field(default_factory=list)
    golden_sample: object = None
    open_outputs: str = ""
    tf32_ops: list = field(default_factory=list)  # the TF32 ATen ops a deployed-TF32 sample reached
    metadata_mismatch: bool = False
    elements: int = 0  # the elements of the compared results: a sample with none compared nothing
    updated_inputs: int = 0  # inputs the op updates in place (running statistics, ...), compared after the call
    random_calls: list = field(default_factory=list)  # the device's random ATen calls (random_laws.RandomCall)
    pristine_sample: object = None  # the golden's sample as it was before the calls (crossdev repro records it)


# Device types whose ops are recorded and run later, when a result is read (torch_xla's xla, LTC's lazy): an
# op's error surfaces there, so the device's side reads its results where its errors are the device's. Their
# tensors have no storage of their own to share: a view is a functionalized copy.
LAZY_DEVICE_TYPES = ("xla", "lazy")


def _move(t, device):
    """`t` on `device`, detached, requires_grad as it was. A view keeps its base: the whole storage is
    moved and the view taken again with the same sizes, strides and offset (op_db's as_strided samples
    are views into a larger storage, which a plain .to() would drop). A lazy device's tensor moves as
    test_compare_cpu moves every sample, with .to(): it has no storage to keep."""
    if not isinstance(t, torch.Tensor):
        return t
    lazy = t.device.type in LAZY_DEVICE_TYPES
    if t.layout == torch.strided and not t.is_nested and not lazy and t.numel() and t.element_size():
        elements = t.untyped_storage().nbytes() // t.element_size()
        if t.storage_offset() != 0 or elements != t.numel() or not t.is_contiguous():
            base = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.detach().untyped_storage(), 0, (elements,), (1,))
            view = base.to(device).as_strided(t.size(), t.stride(), t.storage_offset())
            return view.detach().requires_grad_(t.requires_grad)  # a leaf view, as op_db makes them
    return t.detach().to(device).requires_grad_(t.requires_grad)


def _to_device(sample, device):
    return sample.transform(lambda t: _move(t, device))


def on_cpu(op, device_sample):
    """The golden's sample: the device's sample moved to the CPU (test_compare_cpu: samples are made on
    the device, `sample.transform(to_cpu)`), views with their base storage."""
    return _to_device(device_sample, "cpu")


def _on_cpu(sample) -> bool:
    """Whether a sample's tensors are on the CPU (made there, as TestConsistency makes mps's)."""
    flat, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return all(t.device.type == "cpu" for t in flat if isinstance(t, torch.Tensor))


def processed(sample, result, op=None):
    """op_db's output_process_fn_grad of the sample applied to a result (test_compare_cpu does so on both
    sides: e.g. the absolute value of eigenvectors, whose sign is any device's choice), then, for `op`, the
    sign-canonical form of factors whose signs the contract leaves open (open_contract.OPEN_SIGNS: QR)."""
    fn = getattr(sample, "output_process_fn_grad", None)
    result = fn(result) if fn is not None else result
    if op is None or not hasattr(op, "variant_test_name"):  # a plain callable (the in-process diagnostics)
        return result
    return open_contract.sign_canonical(full_name(op), result)


def process_fn_name(sample) -> str:
    """The name of the sample's output_process_fn_grad, '' for SampleInput's default (the identity)."""
    fn = getattr(sample, "output_process_fn_grad", None)
    name = getattr(fn, "__qualname__", "") if fn is not None else ""
    return "" if not name or name.startswith("SampleInput.") else f"{getattr(fn, '__module__', '')}.{name}"


def shapes_of(sample) -> list:
    flat, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return [tuple(t.shape) for t in flat if isinstance(t, torch.Tensor)]


def variant_missing(op, variant: str, check: str) -> str | None:
    """Why op_db's OpInfo has no `variant` form for this check, or None when it has one."""
    if variant == "inplace" and op.inplace_variant is None:
        return "op_db: no in-place variant (op.inplace_variant is None)"
    if variant == "out" and not op.supports_out:
        return "op_db: no out= variant (supports_out=False)"
    if variant == "out" and check == "backward":
        return "out= forms do not support autograd: the out variant has no backward check"
    return None


def _empty_like_on(template, device):
    """The preallocated out= argument: an empty tensor like each tensor of the functional result."""
    if isinstance(template, torch.Tensor):
        return torch.empty_like(template.detach(), device=device)
    if isinstance(template, (tuple, list)):
        return tuple(_empty_like_on(t, device) for t in template)
    raise TypeError(f"out= needs tensor results; the op returned {type(template).__name__}")


def _call(op, sample, variant="function", out_template=None, device=None):
    """The op's `variant` form on `sample`: op(...), op.inplace_variant(clone of the input, ...) (the
    clone keeps the sample's own input intact and lets an input that requires grad be written), or
    op(..., out=<preallocated like the CPU's functional result on `device`>), returning `out`."""
    if variant == "inplace":
        inp = tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, sample.input)
        return op.inplace_variant(inp, *sample.args, **sample.kwargs)
    if variant == "out":
        out = _empty_like_on(out_template, device)
        op(sample.input, *sample.args, **sample.kwargs, out=out)
        return out
    return op(sample.input, *sample.args, **sample.kwargs)


def _compare_tensor(label, actual, expected, tol: Tolerance, values: bool, out: Outcome) -> None:
    out.elements += expected.numel()
    if actual.shape != expected.shape or actual.dtype != expected.dtype or actual.layout != expected.layout:
        out.metadata_mismatch = True  # no float64 rule for it: only values can be closer to exact
        out.mismatch = out.mismatch or (f"{label}: metadata differs: device {tuple(actual.shape)} {actual.dtype} "
                                        f"{actual.layout}, cpu {tuple(expected.shape)} {expected.dtype} {expected.layout}")
        return
    if not values:
        return
    from crossdev import parity

    a = actual.detach().to("cpu")
    e = expected.detach()
    if a.layout != torch.strided:
        a, e = a.to_dense(), e.to_dense()
    try:
        c = parity.compare(a, e, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
    except (RuntimeError, ValueError, TypeError):  # a dtype the comparator does not measure: assert_close's verdict
        try:
            torch.testing.assert_close(a, e, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
            c = {"passed": True}
        except AssertionError as mismatch:
            c = {"passed": False, "summary": str(mismatch).strip().splitlines()[0]}
    for key in ("max_abs", "max_rel", "max_ulp"):
        value = c.get(key)
        if value is not None and value == value:  # a NaN metric is "non-finite": reported by the verdict
            setattr(out, key, max(getattr(out, key), float(value)))
    if not c["passed"]:
        out.mismatch = out.mismatch or f"{label}: {c['summary']}"


def _compare(actual, expected, tol, values, out, what, open_outputs=None):
    """Every value of two results; `open_outputs` ({position: (how, reason)}, positions of the flattened
    result) are left out ("not compared") or compared in the golden's dtype (open_contract.OPEN_OUTPUTS)."""
    a_flat, _ = tree_flatten(actual)
    e_flat, _ = tree_flatten(expected)
    if len(a_flat) != len(e_flat):
        out.mismatch = f"{what}: the device returned {len(a_flat)} values, the CPU {len(e_flat)}"
        return
    for i, (a, e) in enumerate(zip(a_flat, e_flat)):
        label = f"{what}[{i}]"
        how = (open_outputs or {}).get(i, (None, None))[0]
        if how == "not compared":
            continue
        if how == "values in the golden's dtype" and isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor):
            a = a.to(e.dtype)
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            _compare_tensor(label, a, e, tol, values, out)
        elif isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            out.mismatch = out.mismatch or f"{label}: a tensor on one side only ({type(a).__name__} vs {type(e).__name__})"
        elif a is not None or e is not None:
            out.elements += 1  # a number, a bool, a shape: one value compared
            if values and a != e and not (a != a and e != e):
                out.mismatch = out.mismatch or f"{label}: {a!r} on the device, {e!r} on the CPU"


def _compare_updated_inputs(cpu_sample, dev_sample, tol: Tolerance, out: Outcome) -> None:
    """Every tensor of the sample after the call, device against CPU: an op that updates an input in place
    (batch norm's running_mean and running_var in training, an out-of-place op's buffer) is compared there
    too. Inputs neither side changed are equal and cost one torch.equal."""
    cpu_flat, _ = tree_flatten((cpu_sample.input, cpu_sample.args, cpu_sample.kwargs))
    dev_flat, _ = tree_flatten((dev_sample.input, dev_sample.args, dev_sample.kwargs))
    if len(cpu_flat) != len(dev_flat):
        return
    for i, (e, a) in enumerate(zip(cpu_flat, dev_flat)):
        if not (isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor)) or e.layout != torch.strided:
            continue
        a_cpu = a.detach().to("cpu")
        if a_cpu.shape == e.shape and a_cpu.dtype == e.dtype and torch.equal(a_cpu, e.detach()):
            continue
        before = out.elements
        _compare_tensor(f"input {i} after the call (updated in place)", a_cpu, e, tol, True, out)
        out.elements = before
        out.updated_inputs += 1
        if out.mismatch:
            return


def _grad_inputs(sample):
    flat, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return [t for t in flat if isinstance(t, torch.Tensor) and t.requires_grad]


def _grad_output_like(t):
    """A random grad_output like `t` (a sparse output gets one with its layout and pattern: randn_like has
    no sparse kernel, which failed to_sparse's backward on the CPU)."""
    if t.layout == torch.strided:
        return torch.randn_like(t)
    dense = torch.randn(t.shape, dtype=t.dtype, device=t.device)
    if t.layout == torch.sparse_coo:
        return dense.sparse_mask(t.detach().coalesce())
    return dense.to_sparse(layout=t.layout)


def backward_sides(expected, actual, golden_sample, device_sample):
    """What a backward check differentiates on each side: (golden outputs, device outputs, golden
    inputs, device inputs, grad_outputs), the outputs and inputs that require grad, grad_outputs random
    like the golden's outputs (the same on both sides); None when there is nothing to differentiate."""
    e_outs = [t for t in tree_flatten(expected)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    a_outs = [t for t in tree_flatten(actual)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    e_inputs, a_inputs = _grad_inputs(golden_sample), _grad_inputs(device_sample)
    if not e_outs or not e_inputs:
        return None
    return e_outs, a_outs, e_inputs, a_inputs, [_grad_output_like(t) for t in e_outs]


def golden(op, cpu_sample, variant: str):
    """(result, output_process_fn_grad of it, the out= template, the RandomSeen of the call: the random ATen ops
    it reached, every ATen op it reached). A sample that reaches a nondeterministic_seeded op is random: a
    second seed cannot tell (an in-place fill returns its input; a draw of few values repeats by chance)."""
    from . import random_ops

    seen = random_ops.RandomSeen()
    with seen:
        template = _call(op, cpu_sample) if variant == "out" else None
        result = _call(op, cpu_sample, variant, template, "cpu")
    return result, processed(cpu_sample, result, op), template, seen


def materialize(result, device) -> None:
    """On a lazy device, run what `result` depends on now (a copy to the host, discarded): an error of the op
    under test is raised here, inside the device's side, not later in the comparison (a `harness` error)."""
    if str(device).split(":")[0] not in LAZY_DEVICE_TYPES:
        return
    for t in tree_flatten(result)[0]:
        if isinstance(t, torch.Tensor) and t.layout == torch.strided:
            t.detach().to("cpu")


def run_sample(op, sample, device, check: str, tol: Tolerance, values: bool, variant: str = "function",
               tf32_tol: Tolerance | None = None) -> Outcome:
    """`sample` is made on the device (op.sample_inputs(device, ...)), as test_compare_cpu makes it; the
    golden runs its CPU copy (on_cpu). `variant` (function, inplace, out: samples.variant_missing says
    when the OpInfo lacks it) is run on both sides: the golden is the same form on the CPU. Both results
    go through op_db's output_process_fn_grad before they are compared or differentiated. `tf32_tol`: the
    tolerance of a sample that reaches a TF32 op (crossdev.numerics.TF32_OPS) when TF32 is on (deployed)."""
    out = Outcome()  # shapes: the caller names a failing sample's (shapes_of)
    made_on_cpu = _on_cpu(sample)
    cpu_sample = sample if made_on_cpu else on_cpu(op, sample)
    out.golden_sample = cpu_sample
    # the device's copy is made before the golden runs: an op that updates its inputs in place (batch norm's
    # running statistics) must find the sample's values on both sides, not the golden's updated ones
    dev_sample = keep_on_host(op, cpu_sample, _to_device(sample, device) if made_on_cpu else sample)
    # the sample's values before either call (an op may update its inputs in place): `crossdev repro` records them
    out.pristine_sample = cpu_sample.transform(lambda t: t.detach().clone().requires_grad_(t.requires_grad)
                                               if isinstance(t, torch.Tensor) else t)
    try:
        raw_expected, expected, template, seen = golden(op, cpu_sample, variant)
    except Exception as e:  # noqa: BLE001
        raise GoldenError(f"{type(e).__name__}: {e}") from e
    out.random_ops = seen.ops
    if tf32_tol is not None:
        from crossdev import numerics
        out.tf32_ops = sorted(seen.reached & set(numerics.TF32_OPS))
        tol = tf32_tol if out.tf32_ops else tol
    from . import random_laws
    recorder = random_laws.RandomCalls() if out.random_ops else contextlib.nullcontext()
    try:
        with recorder:  # the device's random ATen calls, each judged by its law (suite._randomness)
            actual = processed(dev_sample, _call(op, dev_sample, variant, template, device), op)
        materialize(actual, device)
    except Exception as e:  # noqa: BLE001
        raise DeviceError(f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}") from e
    if out.random_ops:
        out.random_calls = recorder.calls
        if random_laws.all_deterministic(recorder.calls):  # rrelu in eval: its values are compared as any op's
            out.random_ops = []
    values = values and not out.random_ops
    opened = open_contract.open_outputs(full_name(op), cpu_sample)
    if opened:
        out.open_outputs = "; ".join(sorted({f"{how}: {reason}" for how, reason in opened.values()}))
    if check == "forward":
        if values:  # an order the contract leaves open: each side in canonical form (open_contract.OPEN_ORDER)
            actual, expected = open_contract.comparable(full_name(op), cpu_sample, dev_sample, actual, expected)
        _compare(actual, expected, tol, values, out, "output", opened)
        if out.mismatch:
            out.kept = Kept(actual, expected)
        elif values:
            _compare_updated_inputs(cpu_sample, dev_sample, tol, out)
        return out
    # backward: the same grad_outputs on both sides, gradients of every input that requires grad
    sides = backward_sides(expected, actual, cpu_sample, dev_sample)
    if sides is None:
        return out
    e_outs, a_outs, e_inputs, a_inputs, grad_outs = sides
    try:
        e_grads = torch.autograd.grad(e_outs, e_inputs, grad_outs, allow_unused=True)
    except Exception as e:  # noqa: BLE001  (linalg.eig: a loss op_db's sample makes ill-defined)
        raise GoldenError(f"backward: {type(e).__name__}: {e}") from e
    try:
        # each grad_output where its output is (`to("cpu")` on a device tensor returns a CPU tensor)
        a_grads = torch.autograd.grad(a_outs, a_inputs, [g.to(a.device) for g, a in zip(grad_outs, a_outs)],
                                      allow_unused=True)
        materialize(a_grads, device)
    except Exception as e:  # noqa: BLE001
        raise DeviceError(f"backward: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}") from e
    compared_a, compared_e = list(a_grads), list(e_grads)
    if out.random_ops:  # no CPU gradient to compare with: the device's own, against its own forward draw
        from . import random_backward
        out.mismatch = random_backward.check(full_name(op), a_inputs, a_outs, grad_outs, list(a_grads), tol)
    if values:  # a choice among ties the contract leaves open: summed over tie groups (open_contract.OPEN_TIES)
        compared_a, compared_e = open_contract.comparable_gradients(full_name(op), cpu_sample, dev_sample, compared_a, compared_e)
    _compare(compared_a, compared_e, tol, values, out, "grad")
    if out.mismatch:
        out.kept = Kept(list(a_grads), list(e_grads), grad_outs)
    return out


def draw(op, sample, device, check: str, variant: str, grad_outputs=None):
    """One draw of a random op on `sample` (on `device`): its processed outputs, or for backward the
    gradients with `grad_outputs` (a list: filled by the first draw when empty, then reused, so every draw
    of both sides differentiates with the same ones; random_ops.compare_distributions)."""
    template = _call(op, on_cpu(op, sample)) if variant == "out" else None
    result = processed(sample, _call(op, sample, variant, template, device), op)
    if check == "forward":
        return result
    outs = [t for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    inputs = _grad_inputs(sample)
    if not outs or not inputs:
        return []
    if grad_outputs is not None and not grad_outputs:  # the first draw makes them (on the CPU) for every other
        grad_outputs.extend(_grad_output_like(t.detach().to("cpu")) for t in outs)
    grads = grad_outputs or [_grad_output_like(t) for t in outs]
    return [g for g in torch.autograd.grad(outs, inputs, [g.to(o.device) for g, o in zip(grads, outs)], allow_unused=True)
            if g is not None]
