#pragma once
#include <string>
#include <vector>

namespace crossdev::cli {

// Each returns the process exit code (0 pass, 1 conformance failure, 2 bad input).
int cmd_devices(const std::vector<std::string>& args);
int cmd_resolve(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_load_check(const std::vector<std::string>& args);  // internal (util/load_library.h)

}  // namespace crossdev::cli
