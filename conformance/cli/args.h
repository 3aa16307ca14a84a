#pragma once
// A small table-driven option parser for the crossdev subcommands: each command declares its
// options; anything else is a usage error (exit code 2) naming the offending argument.
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace crossdev::cli {

inline constexpr int kExitPass = 0;
inline constexpr int kExitConformanceFailure = 1;
inline constexpr int kExitBadInput = 2;

struct OptionSpec {
  const char* name;    // "--simulate"
  const char* value;   // "S" for options taking a value, nullptr for flags
  const char* help;
  bool to_workers = false;  // `crossdev run`: its isolation workers get the same option and value
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ParsedArgs {
  std::map<std::string, std::string> values;  // option -> value ("" for flags); the last one given
  std::map<std::string, std::vector<std::string>> occurrences;  // option -> every value, in order
  std::vector<std::string> positional;
  bool has(const std::string& opt) const { return values.count(opt) != 0; }
  std::string get(const std::string& opt, const std::string& default_value = "") const {
    auto it = values.find(opt);
    return it == values.end() ? default_value : it->second;
  }
  // Every value of a repeatable option, in the order given (empty when absent).
  std::vector<std::string> get_all(const std::string& opt) const {
    auto it = occurrences.find(opt);
    return it == occurrences.end() ? std::vector<std::string>{} : it->second;
  }
};

// Accepts "--opt value" and "--opt=value". Throws UsageError.
ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs);
std::string format_options(const std::vector<OptionSpec>& specs);

}  // namespace crossdev::cli
