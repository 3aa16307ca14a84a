"""scaled_masked_softmax's CPU kernel takes rows of 16 keys sixteen at a time on AVX512 (float32,
float16, bfloat16: one vector of 16 floats per row), reducing all sixteen rows' maxima and sums with
one transposed tree (sixteen_rows in impl/ops/scaled_masked_softmax/fused_cpu.cpp). That tree must
pair each row's lanes exactly as the one-row path's reduction does, and put each row's result back
on that row: every row of a batch must be the same bits as the same row computed alone (a call on
that one row, which takes the one-row path). Rows that are fully masked, rows whose largest logit
is far from the rest, and a batch that is not a whole number of sixteens (its last rows go one at
a time) are included; so are two threads, whose second task starts in the middle of a group.
On a host without AVX512 both sides take the one-row path and the test still checks the kernel
against torch's softmax."""
import pytest
import torch

import crossdev  # noqa: F401  (registers torch.ops.crossdev)

ROWS = 16 * 3 + 5


def inputs(dtype, generator):
    scores = (torch.randn(ROWS, 16, generator=generator) * 3).to(dtype)
    scores[7, 3] = 60.0  # one logit far above its row's others
    mask = torch.rand(ROWS, 16, generator=generator) < 0.3
    mask[2] = True  # fully masked rows: all zeros
    mask[16 * 2 + 9] = True
    mask[ROWS - 1] = True  # one among the rows that go one at a time
    return scores, mask


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_each_row_is_the_bits_of_the_row_computed_alone(dtype, threads):
    scores, mask = inputs(dtype, torch.Generator().manual_seed(3))
    saved = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        batch = torch.ops.crossdev.scaled_masked_softmax(scores, mask, 0.35)
        alone = torch.cat([torch.ops.crossdev.scaled_masked_softmax(scores[r:r + 1], mask[r:r + 1], 0.35)
                           for r in range(ROWS)])
    finally:
        torch.set_num_threads(saved)
    differing = [r for r in range(ROWS) if not torch.equal(batch[r], alone[r])]
    assert differing == [], f"rows whose bits differ from the row computed alone: {differing}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_the_batch_matches_torch_softmax(dtype):
    scores, mask = inputs(dtype, torch.Generator().manual_seed(4))
    got = torch.ops.crossdev.scaled_masked_softmax(scores, mask, 0.35).float()
    want = torch.softmax((scores.float() * 0.35).masked_fill(mask, float("-inf")), dim=-1)
    want = torch.where(mask.all(dim=-1, keepdim=True), torch.zeros_like(want), want)  # crossdev's all-zero rows
    tolerance = {torch.float32: (1e-5, 1e-6), torch.bfloat16: (1.6e-2, 1e-5)}[dtype]
    torch.testing.assert_close(got, want, rtol=tolerance[0], atol=tolerance[1])
