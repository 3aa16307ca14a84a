#pragma once
// The table of built-in suites. Adding a suite: declare its factory here and add one row to
// builtin_suites() in suite_table.cpp.
#include <memory>
#include <vector>

#include "runner/suite.h"

namespace crossdev::conformance {

std::unique_ptr<Suite> make_redirect_suite();
std::unique_ptr<Suite> make_context_suite();
std::unique_ptr<Suite> make_ops_suite();
std::unique_ptr<Suite> make_manager_suite();
std::unique_ptr<Suite> make_errors_suite();
std::unique_ptr<Suite> make_opinfo_suite();
std::unique_ptr<Suite> make_models_suite();
std::unique_ptr<Suite> make_claims_suite();

std::vector<std::unique_ptr<Suite>> builtin_suites();

}  // namespace crossdev::conformance
