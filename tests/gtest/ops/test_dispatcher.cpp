// The ops as PyTorch operators: fused on the CPU, the fallback or a shape-only kernel elsewhere
// (meta stands in for a device without a native crossdev kernel), with the rejected
// implementation and the failing predicate recorded; clear NotEligible errors for malformed
// calls; silent unless the log level is debug; and the op table is the dispatcher's.
#include <filesystem>
#include <set>

#include <ATen/core/dispatch/Dispatcher.h>

#include "log/logger.h"
#include "ops_test_util.h"

namespace crossdev::ops::testing {
namespace {

const c10::Device kCpu(c10::kCPU);
const c10::Device kMeta(c10::kMeta);

TEST(Dispatcher, CpuRunsFusedWithNothingRejected) {
  for (const OpSpec* op : all_ops()) {
    DispatchRecord record;
    op->dispatch(op->make_inputs("basic", at::kFloat, kCpu, 1), &record);
    EXPECT_EQ(record.ran, Impl::Fused) << op->name();
    EXPECT_TRUE(record.rejected.empty()) << op->name();
  }
}

TEST(Dispatcher, DeviceWithoutFusedKernelFallsBackAndSaysWhy) {
  for (const OpSpec* op : all_ops()) {
    SCOPED_TRACE(op->name());
    DispatchRecord record;
    const at::Tensor out = op->dispatch(op->make_inputs("basic", at::kFloat, kMeta, 1), &record);
    EXPECT_EQ(record.ran, Impl::Fallback);
    ASSERT_EQ(record.rejected.size(), 1u);
    EXPECT_EQ(record.rejected[0].impl, Impl::Fused);
    EXPECT_NE(record.rejected[0].reason.find("device meta: crossdev::" + std::string(op->name()) + " has no kernel for dispatch key Meta"), std::string::npos) << record.rejected[0].reason;
    EXPECT_NE(record.rejected[0].reason.find("(predicate device_has_fused_kernel)"), std::string::npos);
    EXPECT_TRUE(out.is_meta());
    // Same shape as the CPU computes.
    EXPECT_EQ(out.sizes(), op->run(Impl::Fallback, op->make_inputs("basic", at::kFloat, kCpu, 1)).sizes());
  }
}

TEST(Dispatcher, RunOfAnIneligibleImplThrowsNotEligible) {
  const OpSpec* op = find_op("rms_norm");
  try {
    op->run(Impl::Fused, op->make_inputs("basic", at::kFloat, kMeta, 1));
    FAIL() << "expected NotEligible";
  } catch (const NotEligible& e) {
    EXPECT_EQ(e.impl(), Impl::Fused);
    EXPECT_EQ(e.op(), "rms_norm");
    ASSERT_EQ(e.failed().size(), 1u);
    EXPECT_EQ(e.failed()[0].predicate, "device_has_fused_kernel");
  }
}

TEST(Dispatcher, MalformedCallsNameTheProblem) {
  const OpSpec* op = find_op("modulate");
  struct Case {
    const char* what;
    std::function<void(OpCall&)> corrupt;
    const char* predicate;
    const char* text;
  };
  const std::vector<Case> cases = {
      {"missing shift", [](OpCall& c) { c.tensors.erase("shift"); }, "required_inputs_present", "'shift' is required"},
      {"unknown input", [](OpCall& c) { c.tensors["bogus"] = at::zeros({1}); }, "required_inputs_present", "unknown input 'bogus'"},
      {"wrong rows", [](OpCall& c) { c.tensors["shift"] = at::zeros({3, 64}); }, "modulate_shapes", "shift must be [B or 1, D] = [2 or 1, 64]"},
      {"integer x", [](OpCall& c) { c.tensors["x"] = at::zeros({2, 8, 64}, at::kLong); }, "input_dtypes_consistent", "must be floating point"},
      {"mixed dtypes", [](OpCall& c) { c.tensors["scale"] = c.tensors["scale"].to(at::kDouble); }, "input_dtypes_consistent", "'scale' is Double"},
      {"two devices", [](OpCall& c) { c.tensors["scale"] = c.tensors["scale"].to(kMeta); }, "inputs_on_one_device", "more than one device: scale on meta, shift on cpu"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    OpCall call = op->make_inputs("basic", at::kFloat, kCpu, 1);
    c.corrupt(call);
    try {
      op->dispatch(call);
      FAIL() << "expected NotEligible";
    } catch (const NotEligible& e) {
      EXPECT_EQ(e.impl(), Impl::Fallback);
      bool found = false;
      for (const PredicateResult& r : e.failed()) found = found || (r.predicate == c.predicate && r.explanation.find(c.text) != std::string::npos);
      EXPECT_TRUE(found) << e.what();
    }
  }
}

// The kernels are typed (register_op.h): a C++ caller reaches them through a typed handle, and an
// invalid call raises the failing predicate's ATen error type (c10::ValueError for a shape,
// c10::TypeError for a dtype, c10::Error for a device mix), naming the op. NotEligible, the
// harness's error, is a c10::ValueError too.
TEST(Dispatcher, TypedHandleCallsTheKernelAndInvalidCallsRaiseAtenErrorTypes) {
  using Signature = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&);
  const auto modulate = c10::Dispatcher::singleton().findSchemaOrThrow("crossdev::modulate", "").typed<Signature>();
  const OpSpec* op = find_op("modulate");
  const OpCall call = op->make_inputs("basic", at::kFloat, kCpu, 1);
  const at::Tensor x = call.tensor("x"), shift = call.tensor("shift"), scale = call.tensor("scale");
  EXPECT_TRUE(at::allclose(modulate.call(x, shift, scale), op->run(Impl::Fallback, call)));

  const auto message_of = [&](const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) -> std::string {
    try {
      modulate.call(a, b, c);
    } catch (const c10::Error& e) {
      return e.what_without_backtrace();
    }
    return "no error";
  };
  EXPECT_THROW(modulate.call(x, shift.narrow(1, 0, 3), scale), c10::ValueError);
  EXPECT_NE(message_of(x, shift.narrow(1, 0, 3), scale).find("crossdev::modulate: shift must be [B or 1, D]"), std::string::npos);
  EXPECT_THROW(modulate.call(x, shift.to(at::kDouble), scale), c10::TypeError);
  EXPECT_NE(message_of(x, shift.to(at::kDouble), scale).find("(predicate input_dtypes_consistent)"), std::string::npos);
  try {
    modulate.call(x, shift, scale.to(kMeta));
    FAIL() << "a device mix was accepted";
  } catch (const c10::ValueError&) {
    FAIL() << "a device mix is a RuntimeError (c10::Error), as ATen's";
  } catch (const c10::TypeError&) {
    FAIL() << "a device mix is a RuntimeError (c10::Error), as ATen's";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find("more than one device"), std::string::npos);
  }

  OpCall wrong = call;
  wrong.tensors["shift"] = shift.narrow(1, 0, 3);
  EXPECT_THROW(op->run(Impl::Fallback, wrong), c10::ValueError);  // NotEligible
}

// OpCall's storage (named_values.h) behaves as the std::map it replaced: name order, insertion,
// lookup, erase, and conversion both ways.
TEST(Dispatcher, OpCallTensorsBehaveAsAMapInNameOrder) {
  OpCall call;
  call.tensors["x"] = at::ones({1});
  call.tensors["bias"] = at::zeros({1});
  call.tensors["scale"] = at::ones({2});
  std::vector<std::string> names;
  for (const auto& [name, t] : call.tensors) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"bias", "scale", "x"}));
  EXPECT_TRUE(call.has_tensor("scale"));
  EXPECT_EQ(call.tensor("scale").numel(), 2);
  EXPECT_FALSE(call.tensor("residual").defined());
  EXPECT_EQ(call.tensors.erase("scale"), 1u);
  EXPECT_EQ(call.tensors.erase("scale"), 0u);
  EXPECT_FALSE(call.has_tensor("scale"));
  call.scalars = std::map<std::string, double>{{"p", 0.5}, {"eps", 1e-6}};
  EXPECT_EQ(call.scalar("p", 0.0), 0.5);
  EXPECT_EQ(call.scalar("scale_value", 2.0), 2.0);
  EXPECT_EQ(call.scalars.to_map(), (std::map<std::string, double>{{"eps", 1e-6}, {"p", 0.5}}));
  EXPECT_THROW(call.tensors.at("nope"), c10::IndexError);
}

TEST(Dispatcher, EligibilityListsEveryPredicate) {
  const OpSpec* op = find_op("rotary");
  const OpCall call = op->make_inputs("basic", at::kFloat, kCpu, 1);
  const std::vector<PredicateResult> fused = op->eligibility(Impl::Fused, call);
  const std::vector<PredicateResult> fallback = op->eligibility(Impl::Fallback, call);
  EXPECT_GT(fused.size(), fallback.size());  // fused adds device and dtype limits
  for (const PredicateResult& r : fused) EXPECT_TRUE(r.ok) << r.predicate << ": " << r.explanation;
  std::vector<std::string> names;
  for (const PredicateResult& r : fused) names.push_back(r.predicate);
  EXPECT_NE(std::find(names.begin(), names.end(), "rotary_shapes"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "device_has_fused_kernel"), names.end());
  OpCall odd = call;
  odd.tensors["x"] = at::zeros({2, 8, 4, 31});
  EXPECT_FALSE(op->failed_predicates(Impl::Fallback, odd).empty());
  EXPECT_NE(op->failed_predicates(Impl::Fallback, odd)[0].explanation.find("Dh must be even"), std::string::npos);
}

class CapturedLog {
 public:
  explicit CapturedLog(LogLevel level) : previous_(Logger::global().level()) {
    Logger::global().set_level(level);
    Logger::global().set_text_sink([this](std::string_view line) { lines.emplace_back(line); });
  }
  ~CapturedLog() {
    Logger::global().set_text_sink(nullptr);
    Logger::global().set_level(previous_);
  }
  std::vector<std::string> lines;

 private:
  LogLevel previous_;
};

TEST(Dispatcher, SilentByDefaultExplainsItselfAtDebug) {
  const OpSpec* op = find_op("gelu_tanh");
  const OpCall meta_call = op->make_inputs("basic", at::kFloat, kMeta, 1);
  {
    CapturedLog log(LogLevel::Warning);
    op->dispatch(meta_call);
    EXPECT_TRUE(log.lines.empty());
  }
  CapturedLog log(LogLevel::Debug);
  op->dispatch(meta_call);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_NE(log.lines[0].find("dispatch"), std::string::npos) << log.lines[0];
  EXPECT_NE(log.lines[0].find("gelu_tanh: ran fallback; fused rejected: device meta"), std::string::npos) << log.lines[0];
}

TEST(Registry, NamesRoundTrip) {
  for (Impl impl : all_impls()) EXPECT_EQ(impl_from_name(impl_name(impl)), impl);
  EXPECT_FALSE(impl_from_name("turbo").has_value());
  EXPECT_EQ(find_op("no_such_op"), nullptr);
  EXPECT_EQ(dtypes_for_device(c10::Device(c10::kCPU)).size(), 4u);
  EXPECT_EQ(dtypes_for_device(c10::Device(c10::DeviceType::MPS)).size(), 3u);
}

// "Add an op" is one folder: every impl/ops/<op>/op.cpp is an op of the table, a registered
// operator with its .out overload and its backward, and nothing else is.
TEST(Registry, EveryOpFolderIsARegisteredOperatorAndNothingElse) {
  std::set<std::string> folders;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(CROSSDEV_SOURCE_DIR) + "/impl/ops")) {
    if (std::filesystem::exists(entry.path() / "op.cpp")) folders.insert(entry.path().filename().string());
  }
  std::set<std::string> table;
  for (const OpSpec* op : all_ops()) table.insert(op->name());
  EXPECT_EQ(table, folders);
  std::set<std::string> registered;
  for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
    if (name.name.rfind("crossdev::", 0) != 0) continue;
    std::string op = name.name.substr(10);
    if (op.size() > 9 && op.compare(op.size() - 9, 9, "_backward") == 0) {
      EXPECT_TRUE(name.overload_name.empty()) << name.name;
      op.resize(op.size() - 9);
    } else {
      EXPECT_TRUE(name.overload_name.empty() || name.overload_name == "out") << name.name << "." << name.overload_name;
    }
    registered.insert(op);
  }
  EXPECT_EQ(registered, folders);
}

}  // namespace
}  // namespace crossdev::ops::testing
