#pragma once
// A dispatcher operator under test: an ops-matrix row's `candidate` (or `reference`), i.e. any op
// registered with TORCH_LIBRARY or torch.library.custom_op, called through the c10 dispatcher
// (boxed, autograd included) with the inputs of one of crossdev's ops. Arguments are matched by
// position against crossdev::<op>'s schema, so a drop-in replacement names its arguments as it
// likes:
//   crossdev::modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor
//   mylib::fused_modulate(Tensor input, Tensor shift, Tensor scale, float alpha=1.) -> Tensor   fits
// It fits when it takes as many arguments (more only when the extra ones have defaults), each of
// a type that accepts crossdev's argument there (Tensor? accepts a Tensor), writes to none of
// them (no Tensor(a!)), and returns exactly one Tensor.
#include <stdexcept>
#include <string>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "ops/op_spec.h"

namespace crossdev::parity {

// The op is not registered, its name is malformed, or its schema does not fit; what() names the
// op and the mismatch.
class DispatcherOpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Why `candidate` cannot be called with `inputs`' arguments; "" when it can. E.g.
// "argument 2 'scale' is float; crossdev::modulate passes a Tensor ('scale') there".
std::string schema_mismatch(const c10::FunctionSchema& candidate, const c10::FunctionSchema& inputs);

class DispatcherOp {
 public:
  // Finds `name` ("ns::op" or "ns::op.overload") in the dispatcher and checks that its schema
  // takes the inputs of crossdev::<op.name()>. Throws DispatcherOpError.
  DispatcherOp(const std::string& name, const ops::OpSpec& op);

  const std::string& name() const noexcept { return name_; }
  std::string schema() const;  // e.g. "mylib::fused_modulate(Tensor x, Tensor shift, Tensor scale) -> Tensor"
  // Calls the op with `call` marshalled by crossdev::<op>'s schema (extra arguments take their
  // defaults) and returns its one Tensor.
  at::Tensor operator()(const ops::OpCall& call) const;

 private:
  std::string name_;
  c10::OperatorHandle handle_;
  c10::OperatorHandle inputs_;  // crossdev::<op>: whose schema marshals the call
};

}  // namespace crossdev::parity
