#pragma once
// scaled_masked_softmax(scores[..., Tk], mask?, scale) = softmax(masked_fill(scores * scale, mask, -inf), -1)
// mask: bool, broadcastable to scores, true = masked out. A row with every key masked is all
// zeros (not NaN), and so is its gradient.
#include "ops/cpu/dispatch.h"
#include "ops/op_definition.h"

namespace crossdev::ops::scaled_masked_softmax {
CROSSDEV_DECLARE_OP_KERNELS(scaled_masked_softmax)
}  // namespace crossdev::ops::scaled_masked_softmax
