// The classifier's table: load-time errors name file:line, matching is first-match-wins, and
// the built-in table covers every category the issue defines.
#include <gtest/gtest.h>

#include "manager/error_classifier.h"
#include "manager/recovery.h"

namespace crossdev::manager {
namespace {

constexpr const char* kMinimal = R"(categories:
  - {name: device_mismatch, recovery: [move_to_common_device], source: s}
  - {name: dtype_mismatch, recovery: [cast_to_common_dtype], source: s}
  - {name: out_of_memory, recovery: [empty_cache, move_to_cpu], source: s}
  - {name: mps_placeholder_storage, recovery: ["empty_cache+move_to_next_device"], source: s}
  - {name: float64_unsupported, recovery: [cast_to_supported_dtype], source: s}
  - {name: unsupported_op, recovery: [move_to_cpu], source: s}
  - {name: inference_tensor_version_counter, recovery: [use_no_grad], source: s}
  - {name: cuda_runtime, recovery: [move_to_cpu], source: s}
  - {name: model_loading, recovery: [move_to_cpu], source: s}
  - {name: cuda_sticky_error, recovery: [restart_process], source: s}
patterns:
  - {category: mps_placeholder_storage, contains: "Placeholder storage", source: s}
  - {category: device_mismatch, contains: "same device", source: s}
  - {category: dtype_mismatch, regex: "expected \\w+ and \\w+ to have the same dtype", source: s}
  - {category: out_of_memory, exception: OutOfMemoryError, source: s}
  - {category: float64_unsupported, contains: "float64", source: s}
  - {category: unsupported_op, exception: NotImplementedError, source: s}
  - {category: inference_tensor_version_counter, contains: "version_counter", source: s}
  - {category: cuda_sticky_error, contains: "CUDA error: device-side assert triggered", source: s}
  - {category: cuda_runtime, contains: "CUDA error: ", source: s}
  - {category: model_loading, contains: "PytorchStreamReader", source: s}
)";

std::string category_of(const ErrorClassifier& c, const std::string& type, const std::string& text) {
  const auto cls = c.classify({type, text});
  return cls ? cls->category->name : "unclassified";
}

TEST(ErrorClassifier, BuiltinTableDefinesEveryCategoryWithRecovery) {
  const ErrorClassifier& c = ErrorClassifier::builtin();
  for (const auto& name : required_error_categories()) {
    const ErrorCategoryInfo* info = c.category(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_FALSE(info->recovery.empty()) << name;
    for (const auto& stage : info->recovery)
      for (const auto& action : stage) EXPECT_NE(find_recovery(action), nullptr) << name << ": " << action;
  }
}

TEST(ErrorClassifier, FirstMatchWins) {
  const ErrorClassifier c = ErrorClassifier::from_yaml(kMinimal, "t.yaml");
  // Both the placeholder and the same-device patterns match; the earlier one wins.
  EXPECT_EQ(category_of(c, "RuntimeError", "Placeholder storage ... same device"), "mps_placeholder_storage");
  EXPECT_EQ(category_of(c, "RuntimeError", "Expected all tensors to be on the same device"), "device_mismatch");
}

TEST(ErrorClassifier, ExceptionTypeAndRegexPatterns) {
  const ErrorClassifier c = ErrorClassifier::from_yaml(kMinimal, "t.yaml");
  EXPECT_EQ(category_of(c, "OutOfMemoryError", "anything at all"), "out_of_memory");
  EXPECT_EQ(category_of(c, "RuntimeError", "anything at all"), "unclassified");
  EXPECT_EQ(category_of(c, "RuntimeError", "expected mat1 and mat2 to have the same dtype"), "dtype_mismatch");
  EXPECT_EQ(category_of(c, "RuntimeError", "expected mat1 to have the same dtype"), "unclassified");
  EXPECT_EQ(category_of(c, "NotImplementedError", "no kernel"), "unsupported_op");
}

void expect_load_error(const std::string& yaml, const std::string& needle, const std::string& where) {
  try {
    (void)ErrorClassifier::from_yaml(yaml, "bad.yaml");
    FAIL() << "expected a YamlError containing '" << needle << "'";
  } catch (const YamlError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(where, 0), 0u) << e.what();
  }
}

TEST(ErrorClassifier, LoadErrorsNameFileAndLine) {
  std::string text = kMinimal;
  expect_load_error(std::string(text).replace(text.find("use_no_grad"), 11, "teleport"), "unknown recovery action 'teleport'",
                    "bad.yaml:8:");
  expect_load_error(std::string(text).replace(text.find("contains: \"CUDA error: \""), 8, "contain"), "unknown key 'contain'",
                    "bad.yaml:21:");
  expect_load_error(std::string(text).replace(text.find("regex: \"expected"), 17, "regex: \"(unclosed"), "invalid regex",
                    "bad.yaml:15:");
  expect_load_error(std::string(text).replace(text.find("exception: NotImplementedError"), 30, "exception: Oops"),
                    "unknown exception 'Oops'", "bad.yaml:18:");
  // Dropping the model_loading category leaves its pattern without a category.
  const std::string without = std::string(text).erase(text.find("  - {name: model_loading"),
                                                       std::string("  - {name: model_loading, recovery: [move_to_cpu], source: s}\n").size());
  expect_load_error(without, "category 'model_loading' is not defined", "bad.yaml:1:");
  expect_load_error("categories: [", "YAML syntax error", "bad.yaml:");
  // yaml-cpp keeps both pairs of a repeated key; crossdev_yaml refuses the file.
  expect_load_error(std::string(text).replace(text.find("contains: \"CUDA error: \""), 8, "source: t, contains"),
                    "duplicate key 'source'", "bad.yaml:21:");
}

// CUDA documents these errors as leaving the process unusable for CUDA until it restarts, so the
// built-in table must send them to restart_process, not to empty_cache/move_to_cpu like other CUDA errors.
TEST(ErrorClassifier, BuiltinTableSendsStickyCudaErrorsToANewProcess) {
  const ErrorClassifier& c = ErrorClassifier::builtin();
  for (const char* text : {"CUDA error: device-side assert triggered", "CUDA error: an illegal memory access was encountered",
                           "CUDA error: misaligned address", "CUDA error: unspecified launch failure",
                           "CUDA error: an illegal instruction was encountered"}) {
    EXPECT_EQ(category_of(c, "RuntimeError", text), "cuda_sticky_error") << text;
    EXPECT_EQ(category_of(c, "AcceleratorError", text), "cuda_sticky_error") << text;  // torch >= 2.8's type
  }
  ASSERT_EQ(c.category("cuda_sticky_error")->recovery, (std::vector<RecoveryStage>{{"restart_process"}}));
  EXPECT_TRUE(find_recovery("restart_process")->ends_recovery);
  // A launch the runtime refused leaves the context usable: an ordinary runtime error.
  EXPECT_EQ(category_of(c, "RuntimeError", "CUDA error: invalid configuration argument"), "cuda_runtime");
  EXPECT_EQ(category_of(c, "RuntimeError", "CUDA error: too many resources requested for launch"), "cuda_runtime");
  EXPECT_EQ(category_of(c, "RuntimeError", "CUDA error: out of memory"), "out_of_memory");
}

TEST(ErrorClassifier, ActionThatEndsRecoveryMustStandAlone) {
  const std::string text = kMinimal;
  const std::string stage = "recovery: [restart_process]";
  expect_load_error(std::string(text).replace(text.find(stage), stage.size(), "recovery: [restart_process, move_to_cpu]"),
                    "'restart_process' ends recovery", "bad.yaml:11:");
  expect_load_error(std::string(text).replace(text.find(stage), stage.size(), "recovery: [\"empty_cache+restart_process\"]"),
                    "'restart_process' ends recovery", "bad.yaml:11:");
}

TEST(ErrorClassifier, EveryCategoryNeedsAPattern) {
  std::string text = kMinimal;
  const std::string line = "  - {category: model_loading, contains: \"PytorchStreamReader\", source: s}\n";
  text.erase(text.find(line), line.size());
  expect_load_error(text, "category 'model_loading' has no pattern", "bad.yaml:10:");
}

}  // namespace
}  // namespace crossdev::manager
