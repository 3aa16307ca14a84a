"""Outputs whose order the contract leaves open (crossdev.opinfo.open_contract.OPEN_ORDER, docs/opinfo.md):
an unstable sort's ties and unique(sorted=False) are compared in canonical form, so a device that orders
them differently passes and one that returns wrong values or indices fails. A stand-in op and sample
(what samples.run_sample reads of op_db's) keep the test free of op_db's import; the "device" is the CPU."""
import types

import torch
from torch.utils._pytree import tree_map

from crossdev.opinfo import open_contract, samples
from crossdev.opinfo.tolerances import Tolerance


class Sample:
    def __init__(self, input, *args, **kwargs):
        self.input, self.args, self.kwargs = input, args, kwargs

    def transform(self, f):
        return Sample(f(self.input), *tree_map(f, self.args), **tree_map(f, self.kwargs))


class TwoSidedOp:
    """The CPU golden is `cpu`'s result, the device's (the second call) `device`'s."""

    def __init__(self, name, cpu, device):
        self.name, self.variant_test_name, self.calls, self.sides = name, "", 0, (cpu, device)

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.sides[min(self.calls, 2) - 1](*args, **kwargs)


TOL = Tolerance(1.3e-6, 1e-5, "test")
X = torch.tensor([3.0, 1.0, 3.0, 2.0, 1.0])  # ties: 1.0 at 1 and 4, 3.0 at 0 and 2


def run(op, sample):
    return samples.run_sample(op, sample, "cpu", "forward", TOL, values=True).mismatch


def test_an_unstable_sort_may_order_ties_either_way_but_its_indices_must_pick_the_values():
    swapped = lambda x, **kw: torch.return_types.sort((torch.sort(x).values, torch.tensor([4, 1, 3, 2, 0])))
    assert run(TwoSidedOp("sort", lambda x, **kw: torch.sort(x), swapped), Sample(X)) == ""
    wrong_pick = lambda x, **kw: torch.return_types.sort((torch.sort(x).values, torch.tensor([4, 4, 3, 2, 0])))
    assert "output[2]" in run(TwoSidedOp("sort", lambda x, **kw: torch.sort(x), wrong_pick), Sample(X))  # the right values, not a permutation
    wrong_index = lambda x, **kw: torch.return_types.sort((torch.sort(x).values, torch.tensor([4, 3, 1, 2, 0])))
    assert "output[1]" in run(TwoSidedOp("sort", lambda x, **kw: torch.sort(x), wrong_index), Sample(X))
    # a stable sort's order is not open: the same swap fails
    assert run(TwoSidedOp("sort", lambda x, **kw: torch.sort(x, stable=True), swapped), Sample(X, stable=True)) != ""


def test_unique_unsorted_is_compared_sorted_with_the_inverse_rebuilding_the_input():
    kw = dict(sorted=False, return_inverse=True, return_counts=True, dim=None)
    cpu = lambda x, **k: (torch.tensor([3.0, 1.0, 2.0]), torch.tensor([0, 1, 0, 2, 1]), torch.tensor([2, 2, 1]))
    other_order = lambda x, **k: (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2, 0, 2, 1, 0]), torch.tensor([2, 1, 2]))
    assert run(TwoSidedOp("unique", cpu, other_order), Sample(X, **kw)) == ""
    bad_inverse = lambda x, **k: (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2, 0, 2, 1, 1]), torch.tensor([2, 1, 2]))
    assert "output[1]" in run(TwoSidedOp("unique", cpu, bad_inverse), Sample(X, **kw))
    bad_counts = lambda x, **k: (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2, 0, 2, 1, 0]), torch.tensor([2, 2, 1]))
    assert "output[2]" in run(TwoSidedOp("unique", cpu, bad_counts), Sample(X, **kw))
    # sorted=True: the order is the contract
    assert run(TwoSidedOp("unique", cpu, other_order), Sample(X, **dict(kw, sorted=True))) != ""


def run_backward(op, sample):
    return samples.run_sample(op, sample, "cpu", "backward", TOL, values=True).mismatch


def sort_picking(indices, gradient_scale=1.0):
    """A "device" sort that puts ties in the order `indices` gives; its gradient reaches the input through
    the gather, so each output's gradient goes to the index it picked (scaled by `gradient_scale`)."""
    def sort(x, **kw):
        values = x.gather(0, indices)
        if gradient_scale != 1.0:
            values.register_hook(lambda g: g * gradient_scale)
        return torch.return_types.sort((values, indices))
    return sort


def test_the_backward_of_an_unstable_sort_sums_the_gradient_over_each_tie_group():
    x = X.clone().requires_grad_()
    cpu = lambda t, **kw: torch.sort(t, **kw)
    assert torch.equal(torch.sort(X).indices, torch.tensor([1, 4, 3, 0, 2]))  # the CPU's pick: the swap is another
    swapped = sort_picking(torch.tensor([4, 1, 3, 2, 0]))
    assert run_backward(TwoSidedOp("sort", cpu, swapped), Sample(x)) == ""
    # a wrong gradient still differs: 1 part in 256 more, or sent to an element that is not tied
    assert "grad[0]" in run_backward(TwoSidedOp("sort", cpu, sort_picking(torch.tensor([4, 1, 3, 2, 0]), 1 + 2**-8)), Sample(x))
    assert "grad[0]" in run_backward(TwoSidedOp("sort", cpu, sort_picking(torch.tensor([4, 1, 0, 3, 2]))), Sample(x))
    # a stable sort's order of ties is the contract: the same swap fails
    assert "grad[0]" in run_backward(TwoSidedOp("sort", cpu, swapped), Sample(x, stable=True))


def test_tie_groups_are_equal_values_of_one_line_along_dim_nan_included():
    nan = float("nan")
    x = torch.tensor([[1.0, 2.0, 1.0], [nan, 1.0, nan]])
    grad = torch.tensor([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]])
    assert torch.equal(open_contract.tie_group_sums(x, grad, 1), torch.tensor([[5.0, 2.0, 5.0], [40.0, 16.0, 40.0]]))
    assert torch.equal(open_contract.tie_group_sums(x, grad, 0), grad)  # no ties down the columns
    assert torch.equal(open_contract.tie_group_sums(x, grad, None),  # a full reduction: the whole input
                       torch.tensor([[21.0, 2.0, 21.0], [40.0, 21.0, 40.0]]))


def test_the_forward_of_an_op_that_picks_among_ties_accepts_any_index_of_the_chosen_value():
    # kthvalue(X, 2) is 1.0, at 1 or 4; mode(X) is 1.0 or 3.0 by count (both twice): the CPU's value wins
    cpu = lambda x, k, **kw: torch.kthvalue(x, k, **kw)
    assert torch.kthvalue(X, 2).indices.item() in (1, 4)
    other_tie = lambda x, k, **kw: torch.return_types.kthvalue((torch.tensor(1.0), torch.tensor(5 - torch.kthvalue(X, 2).indices.item())))
    assert run(TwoSidedOp("kthvalue", cpu, other_tie), Sample(X, 2)) == ""
    wrong_index = lambda x, k, **kw: torch.return_types.kthvalue((torch.tensor(1.0), torch.tensor(3)))  # X[3] is 2.0
    assert "output[1]" in run(TwoSidedOp("kthvalue", cpu, wrong_index), Sample(X, 2))
    # topk keeps the dim; median with keepdim=True too; the indices of each form are gathered along dim
    top = lambda x, k, **kw: torch.topk(x, k, **kw)
    assert torch.equal(torch.topk(X, 2).indices.sort().values, torch.tensor([0, 2]))
    top_swapped = lambda x, k, **kw: torch.return_types.topk((torch.tensor([3.0, 3.0]), torch.topk(X, 2).indices.flip(0)))
    assert run(TwoSidedOp("topk", top, top_swapped), Sample(X, 2)) == ""
    top_wrong = lambda x, k, **kw: torch.return_types.topk((torch.tensor([3.0, 3.0]), torch.tensor([0, 3])))
    assert "output[1]" in run(TwoSidedOp("topk", top, top_wrong), Sample(X, 2))
    rows = torch.stack([X, X.flip(0)])
    median = lambda x, dim, **kw: torch.median(x, dim, **kw)
    other_median = lambda x, dim, **kw: torch.return_types.median((torch.full((2, 1), 2.0), torch.tensor([[3], [1]])))
    assert run(TwoSidedOp("median", median, other_median), Sample(rows, 1, keepdim=True)) == ""
    wrong_median = lambda x, dim, **kw: torch.return_types.median((torch.full((2, 1), 2.0), torch.tensor([[3], [0]])))
    assert "output[1]" in run(TwoSidedOp("median", median, wrong_median), Sample(rows, 1, keepdim=True))
    # an op whose index is not open (argmax is not in the table) still compares its indices as they are
    assert open_contract.open_order_reason("argmax") is None and open_contract.open_order_reason("mode")
