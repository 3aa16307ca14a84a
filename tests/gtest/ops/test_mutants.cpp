// Every mutant must make the fused kernel of its op disagree with the fallback on at least one
// (dtype, shape set); with no mutant active they agree (test_fused_vs_fallback.cpp). Mutants
// override the CPU kernel through the dispatcher (tests/mutants); deactivating restores it.
#include "mutants.h"
#include "ops_test_util.h"

namespace crossdev::ops::testing {
namespace {

using mutants::active_mutant;
using mutants::mutant_names;
using mutants::set_active_mutant;

class ActiveMutant {
 public:
  explicit ActiveMutant(const std::string& name) { set_active_mutant(name); }
  ~ActiveMutant() { set_active_mutant(""); }
};

std::string op_of(const std::string& mutant) { return mutant.substr(0, mutant.find('.')); }

bool is_backward_mutant(const std::string& mutant) {
  for (const mutants::MutantInfo& info : mutants::mutant_table()) {
    if (mutant == info.name) return info.backward;
  }
  return false;
}

// "" when the fused gradients (crossdev::<op>_backward through autograd) match the fallback's.
std::string gradient_mismatch(const OpSpec& op, const OpCall& call, at::ScalarType dtype) {
  auto forward = [&](Impl impl, std::map<std::string, at::Tensor>& leaves) {
    OpCall leaf_call = call;
    for (const std::string& name : op.grad_inputs()) {
      if (!call.has_tensor(name)) continue;
      leaves[name] = call.tensor(name).detach().clone().requires_grad_(true);
      leaf_call.tensors[name] = leaves[name];
    }
    return op.run(impl, leaf_call);
  };
  std::map<std::string, at::Tensor> fused_leaves, ref_leaves;
  const at::Tensor fused_out = forward(Impl::Fused, fused_leaves);
  const at::Tensor ref_out = forward(Impl::Fallback, ref_leaves);
  const at::Tensor weight = at::linspace(-1.0, 1.0, ref_out.numel(), at::kDouble).reshape(ref_out.sizes()).to(dtype);
  fused_out.backward(weight);
  ref_out.backward(weight);
  for (const auto& [name, leaf] : ref_leaves) {
    const std::string m = close_mismatch(fused_leaves.at(name).grad(), leaf.grad(), default_tolerance(dtype));
    if (!m.empty()) return "grad." + name + ": " + m;
  }
  return "";
}

TEST(Mutants, EveryOpHasAtLeastOne) {
  const std::vector<std::string> names = mutant_names();
  for (const OpSpec* op : all_ops()) {
    EXPECT_TRUE(std::any_of(names.begin(), names.end(), [&](const std::string& n) { return op_of(n) == op->name(); }))
        << op->name();
  }
  for (const std::string& name : names) EXPECT_NE(find_op(op_of(name)), nullptr) << name;
}

TEST(Mutants, UnknownNameListsTheValidOnes) {
  try {
    set_active_mutant("rms_norm.eps_x11");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown mutant 'rms_norm.eps_x11'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("rms_norm.eps_x10"), std::string::npos);
  }
  EXPECT_EQ(active_mutant(), "");
}

class MutantGoesRed : public ::testing::TestWithParam<std::string> {};

TEST_P(MutantGoesRed, FusedDisagreesWithFallbackSomewhere) {
  const std::string& name = GetParam();
  const OpSpec* op = find_op(op_of(name));
  ActiveMutant active(name);
  EXPECT_EQ(active_mutant(), name);
  std::vector<std::string> detected_by;
  for (const std::string& set : op->shape_sets()) {
    if (set == "large") continue;
    for (at::ScalarType dtype : all_dtypes()) {
      const OpCall call = op->make_inputs(set, dtype, c10::Device(c10::kCPU), 7);
      const std::string mismatch =
          is_backward_mutant(name)
              ? gradient_mismatch(*op, call, dtype)
              : close_mismatch(op->run(Impl::Fused, call), op->run(Impl::Fallback, call), default_tolerance(dtype));
      if (!mismatch.empty()) detected_by.push_back(set + "/" + dtype_name(dtype));
    }
  }
  EXPECT_FALSE(detected_by.empty()) << name << " survived every shape set and dtype";
  if (is_backward_mutant(name)) {  // the forward is the production kernel's
    const OpCall call = op->make_inputs("odd_tail", at::kFloat, c10::Device(c10::kCPU), 7);
    EXPECT_EQ(close_mismatch(op->run(Impl::Fused, call), op->run(Impl::Fallback, call), default_tolerance(at::kFloat)), "");
  }
  // Only the mutant's own op is affected.
  for (const OpSpec* other : all_ops()) {
    if (other == op) continue;
    const OpCall call = other->make_inputs("odd_tail", at::kFloat, c10::Device(c10::kCPU), 7);
    EXPECT_EQ(close_mismatch(other->run(Impl::Fused, call), other->run(Impl::Fallback, call), default_tolerance(at::kFloat)), "")
        << other->name();
  }
}

TEST(Mutants, AtLeastTwelveAndTheProductionKernelComesBack) {
  EXPECT_GE(mutant_names().size(), 12u);
  const OpSpec* op = find_op("swiglu");
  const OpCall call = op->make_inputs("odd_tail", at::kFloat, c10::Device(c10::kCPU), 7);
  {
    ActiveMutant active("swiglu.silu_on_up");
    EXPECT_NE(close_mismatch(op->run(Impl::Fused, call), op->run(Impl::Fallback, call), default_tolerance(at::kFloat)), "");
  }
  EXPECT_EQ(active_mutant(), "");
  EXPECT_EQ(close_mismatch(op->run(Impl::Fused, call), op->run(Impl::Fallback, call), default_tolerance(at::kFloat)), "");
}

INSTANTIATE_TEST_SUITE_P(All, MutantGoesRed, ::testing::ValuesIn(mutant_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '.', '_');
                           return n;
                         });

}  // namespace
}  // namespace crossdev::ops::testing
