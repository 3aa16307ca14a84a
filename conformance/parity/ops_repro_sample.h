#pragma once
// The record `crossdev repro` turns into a standalone script for a failing ops case
// (docs/repro.md, python/crossdev/repro_ops.py): the exact inputs the case ran on, as their
// bytes, and how the case called and compared them. Schema "crossdev.ops_repro_sample":
//
//   {schema, kind: mismatch | raised, op, impl, dtype, device_kind, checks: [forward, backward], comparisons: [golden, ...],
//    tolerance: {rtol, atol}, grad_tolerance, grad_inputs: [names], scalars: {name: value},
//    training, tensors: {name: TensorDoc}, grad_out: TensorDoc | null}
//   TensorDoc: {dtype, shape, data (base64 of the contiguous bytes of `shape`), permute?, expand?}
//
// A tensor's layout is kept, not only its values: the bytes are of the view permuted so that its
// strides descend (then `permute` puts the dims back) with its broadcast (stride-0) dims narrowed
// to one element (then `expand` restores them). A transposed or broadcast input is so rebuilt
// with the strides the case's kernel saw (a kernel that ignores strides fails on it).
#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "ops/op_spec.h"
#include "parity/op_parity.h"

namespace crossdev::parity {

struct OpsReproInputs {
  const char* op;
  std::string impl;                      // "fused", "fallback"
  at::ScalarType dtype;
  std::string device_kind;               // "cuda", "cpu", ...
  const ParityConfig* config;            // checks, tolerances
  const ops::OpCall* call;               // the case's inputs, on its device
  at::Tensor grad_out;                   // undefined when no backward ran
  std::vector<std::string> grad_inputs;  // the op's differentiable inputs
  std::vector<std::string> comparisons;  // reference kinds the case compared with ("golden", ...)
  bool raised = false;                   // the case errored: its script is the call alone
};

// A record is inline in the case (64 KiB: every shape set but "large"); a larger one is not recorded.
inline constexpr std::size_t kOpsReproInlineBytes = 65536;

struct OpsReproRecord {
  std::string json;  // the record, or empty with `why_not` set
  std::string why_not;
};
OpsReproRecord ops_repro_record(const OpsReproInputs& inputs);

std::string base64(const void* data, std::size_t size);

}  // namespace crossdev::parity
