#include "cli/args.h"

namespace crossdev::cli {

ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs) {
  ParsedArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      out.positional.push_back(arg);
      continue;
    }
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const OptionSpec* spec = nullptr;
    for (const auto& s : specs)
      if (name == s.name) spec = &s;
    if (!spec) {
      std::string valid;
      for (const auto& s : specs) valid += (valid.empty() ? "" : ", ") + std::string(s.name);
      throw UsageError("unknown option '" + name + "'; valid options: " + valid);
    }
    if (!spec->value) {
      if (eq != std::string::npos) throw UsageError("option '" + name + "' takes no value");
      out.values[name] = "";
    } else if (eq != std::string::npos) {
      out.values[name] = arg.substr(eq + 1);
    } else {
      if (i + 1 >= args.size()) throw UsageError("option '" + name + "' needs a value " + spec->value);
      out.values[name] = args[++i];
    }
    out.occurrences[name].push_back(out.values[name]);
  }
  return out;
}

std::string format_options(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const auto& s : specs) {
    std::string left = std::string("  ") + s.name + (s.value ? std::string(" ") + s.value : "");
    if (left.size() < 24) left.append(24 - left.size(), ' ');
    out += left + " " + s.help + "\n";
  }
  return out;
}

}  // namespace crossdev::cli
