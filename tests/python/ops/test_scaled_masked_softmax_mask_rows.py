"""scaled_masked_softmax's CPU kernel reads the mask's rows against the scores' rows from the mask's
own sizes and strides (MaskRows in impl/ops/scaled_masked_softmax/fused_cpu.cpp: no expanded view,
an odometer per task instead of a division per dimension per row). Every way a mask broadcasts,
forward and backward, against torch's own masked softmax: a broadcast dim between kept ones, fewer
dims than the scores, a broadcast last dim, a transposed mask, rows split across threads (a task's
first row not the first), and more dims than the odometer holds (the expanded-view path)."""
import pytest
import torch

import crossdev  # noqa: F401  (registers torch.ops.crossdev)


def reference(scores, mask, scale):
    return torch.softmax((scores * scale).masked_fill(mask, float("-inf")), dim=-1)


def some_mask(shape, generator):
    mask = torch.rand(shape, generator=generator) < 0.4
    mask[..., 0] = False  # no fully masked row: torch's reference would give nan there
    return mask


def with_alternating_broadcast(dims):
    """A mask shape that broadcasts every other dim of `dims` leading size-2 dims: nothing merges."""
    return tuple(1 if k % 2 else 2 for k in range(dims))


CASES = {
    "middle_dim_broadcast": ((2, 4, 8, 16), (2, 1, 8, 16)),
    "fewer_dims": ((3, 5, 7, 16), (7, 16)),
    "last_dim_broadcast": ((3, 5, 7, 16), (3, 5, 7, 1)),
    "odd_rows_and_keys": ((3, 5, 7, 19), (3, 1, 1, 19)),
    "rows_split_across_threads": ((4, 6, 96, 64), (4, 1, 96, 64)),
    "more_dims_than_the_odometer": ((2,) * 18 + (4,), with_alternating_broadcast(18) + (4,)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_masks_rows_follow_its_broadcast(case):
    scores_shape, mask_shape = CASES[case]
    generator = torch.Generator().manual_seed(0)
    scores = torch.randn(scores_shape, generator=generator, requires_grad=True)
    mask = some_mask(mask_shape, generator)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        got = torch.ops.crossdev.scaled_masked_softmax(scores, mask, 0.35)
        grad = torch.randn(got.shape, generator=generator)
        (got_grad,) = torch.autograd.grad(got, scores, grad)
    finally:
        torch.set_num_threads(threads)
    want = reference(scores, mask, 0.35)
    (want_grad,) = torch.autograd.grad(want, scores, grad)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got_grad, want_grad, rtol=1e-4, atol=1e-5)


def test_a_transposed_mask():
    generator = torch.Generator().manual_seed(1)
    scores = torch.randn(2, 3, 8, 16, generator=generator)
    mask = some_mask((2, 3, 8, 16), generator).transpose(-1, -2).contiguous().transpose(-1, -2)
    assert not mask.is_contiguous()
    torch.testing.assert_close(torch.ops.crossdev.scaled_masked_softmax(scores, mask, 0.35),
                               reference(scores, mask, 0.35), rtol=1e-5, atol=1e-6)
