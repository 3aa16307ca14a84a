#pragma once
// The table of built-in suites. Adding a C++ suite: declare its factory here and add one row to
// builtin_suites() in suite_table.cpp. A suite defined in Python is a record of
// python/crossdev/python_suites.json instead (suites/python_suite.cpp makes one Suite of each).
#include <memory>
#include <vector>

#include "runner/suite.h"

namespace crossdev::conformance {

std::unique_ptr<Suite> make_redirect_suite();
std::unique_ptr<Suite> make_context_suite();
std::unique_ptr<Suite> make_ops_suite();
std::unique_ptr<Suite> make_manager_suite();
std::unique_ptr<Suite> make_errors_suite();
std::vector<std::unique_ptr<Suite>> make_python_suites();  // python_suites.json's records, in its order

std::vector<std::unique_ptr<Suite>> builtin_suites();

}  // namespace crossdev::conformance
