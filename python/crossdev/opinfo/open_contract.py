"""Outputs whose values the contract leaves open, and random ops. One table, each entry with its reason
(docs/opinfo.md, "Values left open"):

- OPEN_VALUES: uninitialized memory; with op_db's has_nondeterministic_output, compared on shape, dtype and
  layout only (metadata_only_reason). Random ops are found at run time (random_ops.py);
- OPEN_OUTPUTS: outputs PyTorch's own code leaves to the backend (batch_norm's save stats in eval, layer_norm's
  mean/rstd dtype): not compared, or compared in the golden's dtype (open_outputs);
- OPEN_ORDER: outputs whose *order* is open: each side's result is put in a canonical form before the
  comparator sees it (comparable), so the values are still compared, and every index the op returns is
  checked to be a valid one that produces those values:
    sort / argsort, unstable (stable not True): the order of ties. Values are compared as they are; the
      indices are replaced by (input.gather(dim, indices), indices sorted along dim): the values they pick
      must be the sorted values, and sorted they must be 0..n-1 on every line (a permutation);
    unique(sorted=False) (dim None): the order of the unique values. Compared sorted; the inverse is
      replaced by unique[inverse] (it must rebuild the input) and the counts follow the sort.
    topk, kthvalue, median, nanmedian, mode (PICKING_OPS): the index picked among ties. Values compared
      as they are; the indices replaced by input.gather(dim, indices): they must pick the CPU's values.
- OPEN_TIES: ops that pick one element among equal ones (an unstable sort, topk, kthvalue, median, mode):
  their backward scatters each output's gradient to the index the forward picked, which the contract
  leaves open among ties. The input's gradient is compared summed over each tie group (tie_group_sums:
  the elements of one line along dim, or of the whole input for a full reduction, that are equal, NaN
  equal to NaN): the sum is the same whichever tied element each side picked; a gradient that goes to
  a wrong value, or a wrong amount, still differs. Without ties every group is one element: unchanged."""
from __future__ import annotations

import fnmatch

# (glob over the OpInfo's full name, why its values cannot be compared)
OPEN_VALUES = (
    ("empty", "uninitialized memory: the contract leaves the values open"),
    ("empty_*", "uninitialized memory: the contract leaves the values open"),
    ("new_empty*", "uninitialized memory: the contract leaves the values open"),
)


def metadata_only_reason(op, name: str) -> str | None:
    """Why this op's values are not compared, or None when they are."""
    for glob, reason in OPEN_VALUES:
        if fnmatch.fnmatchcase(name, glob):
            return reason
    if getattr(op, "has_nondeterministic_output", False):
        return "op_db marks its output nondeterministic (has_nondeterministic_output)"
    return None


# --- order left open: canonical forms -------------------------------------------------------------
def _argument(sample, position: int, name: str, default):
    if name in sample.kwargs:
        return sample.kwargs[name]
    return sample.args[position] if len(sample.args) > position else default


def _sort_applies(sample) -> bool:
    return _argument(sample, 2, "stable", False) is not True


def _indices_form(sample, indices):
    """(the values the indices pick, the indices sorted along dim): both must match the CPU's."""
    dim = _argument(sample, 0, "dim", -1)
    if indices.dim() == 0:
        return sample.input.detach().reshape(()), indices
    return sample.input.detach().gather(dim, indices), indices.sort(dim).values


def _sort_form(name, sample, result):
    values, indices = result
    return (values, *_indices_form(sample, indices))


def _argsort_form(name, sample, result):
    return _indices_form(sample, result)


def _unique_applies(sample) -> bool:
    return sample.kwargs.get("sorted", True) is False and sample.kwargs.get("dim") is None


def _unique_form(name, sample, result):
    parts = list(result) if isinstance(result, (tuple, list)) else [result]
    unique = parts.pop(0)
    inverse = parts.pop(0) if sample.kwargs.get("return_inverse") else None
    counts = parts.pop(0) if sample.kwargs.get("return_counts") else None
    ordered, perm = unique.sort()
    form = [ordered]
    if inverse is not None:
        form.append(unique[inverse])  # rebuilds the input, whatever order the unique values came in
    if counts is not None:
        form.append(counts[perm])
    return tuple(form)


# The ops of OPEN_TIES (below) whose forward returns (values, indices): their index among ties is open.
PICKING_OPS = ("topk", "kthvalue", "median", "nanmedian", "mode")


def _picked_form(name, sample, result):
    """(values, the input gathered at the indices): any index whose value is the chosen one passes, a
    wrong one differs from the CPU's values (the CPU's own gather gives its values). The dim is
    OPEN_TIES's; a full reduction (median(input): one value, no indices) and a 0-d input unchanged."""
    if not isinstance(result, (tuple, list)) or len(result) != 2 or sample.input.dim() == 0:
        return result
    values, indices = result
    dim = next(dim_of(sample) for glob, _, dim_of, _ in OPEN_TIES if fnmatch.fnmatchcase(name, glob))
    x, picked_at = sample.input.detach().to("cpu"), indices.to("cpu")
    squeezed = picked_at.dim() < x.dim()  # keepdim=False: the reduced dim is gone
    try:
        picked = x.gather(dim, picked_at.unsqueeze(dim) if squeezed else picked_at)
    except (RuntimeError, IndexError):  # an index out of range: compared as it is, so it differs
        return result
    return values, picked.squeeze(dim) if squeezed else picked


# (glob over the OpInfo's full name (or a tuple of them), does this sample's call leave the order open,
# canonical form (name, sample, result), reason)
OPEN_ORDER = (
    ("sort", _sort_applies, _sort_form,
     "an unstable sort may order equal values either way: values compared; indices checked to pick those "
     "values and to be a permutation"),
    ("argsort", _sort_applies, _argsort_form,
     "an unstable sort may order equal values either way: indices checked to pick the sorted values and "
     "to be a permutation"),
    ("unique", _unique_applies, _unique_form,
     "unique(sorted=False) leaves the order of the unique values open: compared sorted; the inverse checked "
     "to rebuild the input, counts in the same order"),
    (PICKING_OPS, lambda sample: True, _picked_form,
     "the index picked among tied values is open: values compared; the indices replaced by the input's "
     "values at them (input.gather(dim, indices)), which must be the CPU's values"),
)


def _matches(name: str, globs) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in ((globs,) if isinstance(globs, str) else globs))


def open_order_reason(name: str) -> str | None:
    """Why some samples of this op are compared in a canonical order, or None."""
    return next((reason for globs, _, _, reason in OPEN_ORDER if _matches(name, globs)), None)


def comparable(name: str, cpu_sample, device_sample, actual, expected):
    """(actual, expected) in the canonical form of OPEN_ORDER where this sample leaves the order open,
    each side's form computed from its own input; unchanged otherwise."""
    for globs, applies, form, _ in OPEN_ORDER:
        if _matches(name, globs) and applies(cpu_sample):
            return form(name, device_sample, actual), form(name, cpu_sample, expected)
    return actual, expected


# --- choice among ties left open: the backward ------------------------------------------------------
def tie_group_sums(x, grad, dim):
    """`grad` with every element replaced by the sum of `grad` over its tie group: the elements of its
    line along `dim` (the whole tensor when `dim` is None) whose value in `x` equals its own (NaN equal
    to NaN). O(n log n) per line (a sort, not an n x n mask: op_db's sort sample has 8000 elements)."""
    import torch

    x, grad = x.detach().to("cpu"), grad.detach().to("cpu")
    if x.dim() == 0 or x.numel() == 0:
        return grad
    lines_x = x.reshape(1, -1) if dim is None else x.movedim(dim, -1)
    lines_g = grad.reshape(1, -1) if dim is None else grad.movedim(dim, -1)
    ordered, order = lines_x.sort(dim=-1, stable=True)  # NaNs sort last, together
    starts = torch.ones_like(ordered, dtype=torch.bool)
    starts[..., 1:] = (ordered[..., 1:] != ordered[..., :-1]) & ~(ordered[..., 1:].isnan() & ordered[..., :-1].isnan())
    group = starts.long().cumsum(-1) - 1
    sums = torch.zeros_like(lines_g).scatter_add(-1, group, lines_g.gather(-1, order))
    canonical = torch.empty_like(lines_g).scatter(-1, order, sums.gather(-1, group))
    return canonical.reshape(grad.shape) if dim is None else canonical.movedim(-1, dim)


def _dim_at(position: int, default):
    """The reduction's dim: argument `position` (or kwarg dim), `default` when the sample gives none."""
    return lambda sample: _argument(sample, position, "dim", default)


def _median_dim(sample):
    """median(input) reduces the whole input (dim None); median(input, dim, ...) one line along dim."""
    return _argument(sample, 0, "dim", None)


# (glob over the OpInfo's full name, does this sample's call leave the choice open, its dim, reason)
OPEN_TIES = (
    ("sort", _sort_applies, _dim_at(0, -1),
     "an unstable sort may put tied values either way, so each output's gradient may go to either tied "
     "index: the input's gradient compared summed over each tie group"),
    ("msort", lambda sample: True, lambda sample: 0,
     "msort (an unstable sort along dim 0) may put tied values either way: the input's gradient compared "
     "summed over each tie group"),
    ("topk", lambda sample: True, _dim_at(1, -1),
     "topk may pick and order tied values either way: the input's gradient compared summed over each tie group"),
    ("kthvalue", lambda sample: True, _dim_at(1, -1),
     "kthvalue's index among tied values is open: the input's gradient compared summed over each tie group"),
    ("median", lambda sample: True, _median_dim,
     "median's index among tied values is open: the input's gradient compared summed over each tie group"),
    ("nanmedian", lambda sample: True, _median_dim,
     "nanmedian's index among tied values is open: the input's gradient compared summed over each tie group"),
    ("mode", lambda sample: True, _dim_at(0, -1),
     "mode's index among the tied occurrences of the mode is open: the input's gradient compared summed "
     "over each tie group"),
)


def open_ties_reason(name: str) -> str | None:
    """Why this op's backward is compared summed over tie groups, or None."""
    return next((reason for glob, _, _, reason in OPEN_TIES if fnmatch.fnmatchcase(name, glob)), None)


def comparable_gradients(name: str, cpu_sample, device_sample, actual_grads, expected_grads):
    """(device gradients, CPU gradients) with the input's summed over its tie groups (OPEN_TIES) where
    this sample leaves the choice among ties open, each side's groups from its own input; unchanged
    otherwise. The gradients are those of samples._grad_inputs, in its order (the input first)."""
    for glob, applies, dim_of, _ in OPEN_TIES:
        if not (fnmatch.fnmatchcase(name, glob) and applies(cpu_sample)):
            continue
        if not (getattr(cpu_sample.input, "requires_grad", False) and actual_grads and expected_grads):
            break
        a, e = list(actual_grads), list(expected_grads)
        dim = dim_of(cpu_sample)
        if a[0] is not None and e[0] is not None:
            a[0] = tie_group_sums(device_sample.input, a[0], dim)
            e[0] = tie_group_sums(cpu_sample.input, e[0], dim)
        return a, e
    return actual_grads, expected_grads


# --- outputs a backend defines: not compared, or compared in the golden's dtype -----------------------
def _batch_norm_eval(sample) -> bool:
    """native_batch_norm / _native_batch_norm_legit (input, weight, bias, running_mean, running_var,
    training, momentum, eps) called with training False."""
    return _argument(sample, 4, "training", True) is False


# (glob over the OpInfo's full name, does this sample's call leave them open, output positions, how they
# are compared ("not compared" | "values in the golden's dtype"), reason with the PyTorch source that says so)
OPEN_OUTPUTS = (
    (("native_batch_norm", "_native_batch_norm_legit"), _batch_norm_eval, (1, 2), "not compared",
     "save_mean and save_invstd in eval mode are backend-defined: the CPU returns empty (0,) tensors, CUDA "
     "(C,) ones; op_db xfails test_compare_cpu for it (pytorch/pytorch#85960) and the backward reads "
     "running_mean/running_var in eval, not these"),
    ("native_layer_norm", lambda sample: True, (1, 2), "values in the golden's dtype",
     "mean and rstd are kept in the backend's accumulation type (aten/src/ATen/native/cuda/layer_norm_kernel.cu "
     "uses acc_type for them; the CPU kernel, aten/src/ATen/native/cpu/layer_norm_kernel.cpp, its own choice "
     "per dtype): their dtype is open, their values are compared"),
)


def open_outputs(name: str, sample) -> dict:
    """{output position: (how, reason)} for this sample's outputs the contract leaves to the backend."""
    for globs, applies, positions, how, reason in OPEN_OUTPUTS:
        if _matches(name, globs) and applies(sample):
            return {position: (how, reason) for position in positions}
    return {}


def open_outputs_reason(name: str) -> str | None:
    return next((reason for globs, _, _, _, reason in OPEN_OUTPUTS if _matches(name, globs)), None)


# --- signs a factorization leaves open: a canonical form, differentiable, on both sides ----------------------
def _qr_canonical(result):
    """(Q D, D^H R) with D the phases of R's diagonal (signs for real dtypes; 1 where the diagonal is 0): the
    factorization with a non-negative real diagonal of R, whichever signs each backend's Householder steps gave."""
    import torch

    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return result
    q, r = result
    if r.dim() < 2 or r.numel() == 0:
        return result
    diag = r.diagonal(dim1=-2, dim2=-1)
    magnitude = diag.abs()
    phase = torch.where(magnitude == 0, torch.ones_like(diag), diag / torch.where(magnitude == 0, torch.ones_like(magnitude), magnitude))
    phase = phase.detach()  # piecewise constant: no gradient of its own
    r = r * phase.conj().unsqueeze(-1)
    if q.dim() >= 2 and q.shape[-1] == phase.shape[-1]:
        q = q * phase.unsqueeze(-2)
    return type(result)((q, r)) if isinstance(result, tuple) and not hasattr(result, "_fields") else (q, r)


# (glob over the OpInfo's full name, canonical form, reason)
OPEN_SIGNS = (
    (("linalg.qr", "qr"), _qr_canonical,
     "QR is unique only up to the signs (phases) of R's diagonal: each side's factors are compared, and "
     "differentiated, in the form whose R has a non-negative real diagonal"),
)


def sign_canonical(name: str, result):
    for globs, form, _ in OPEN_SIGNS:
        if _matches(name, globs):
            return form(result)
    return result


def open_signs_reason(name: str) -> str | None:
    return next((reason for globs, _, reason in OPEN_SIGNS if _matches(name, globs)), None)
