// build/bin/crossdev: the engine CLI. Subcommands come from one table.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "device/device_spec.h"
#include "log/logger.h"
#include "runner/matrix_types.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>&);
  const char* summary;  // nullptr: internal, not listed
};

constexpr Command kCommands[] = {
    {"devices", crossdev::cli::cmd_devices, "list this host's device kinds (real or simulated)"},
    {"resolve", crossdev::cli::cmd_resolve, "resolve device requests through the redirect policy"},
    {"run", crossdev::cli::cmd_run, "run conformance matrices and write the bundle / JUnit"},
    {"load-check", crossdev::cli::cmd_load_check, nullptr},  // --load-library's check in a child process
};

void usage(std::ostream& out) {
  out << "usage: crossdev <command> [options]   (crossdev <command> --help for details)\n\ncommands:\n";
  for (const auto& c : kCommands)
    if (c.summary != nullptr) out << "  " << c.name << std::string(10 - std::strlen(c.name), ' ') << c.summary << "\n";
  out << "\nexit codes: 0 pass, 1 conformance failure, 2 bad input (or a file that cannot be read or written),\n"
         "130/143 interrupted by SIGINT/SIGTERM\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace crossdev::cli;
  // Matrix rows are many short ATen calls; spinning OpenMP workers between them starve the
  // other core on small CI runners (measured: 5.9 s -> 1.1 s for one ops row). libgomp reads
  // this when it loads, so it takes effect in the isolated workers this process spawns (and
  // in --no-isolate runs only when set by the caller). A user's own setting wins.
  ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  if (argc < 2) {
    usage(std::cerr);
    return kExitBadInput;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(std::cout);
    return kExitPass;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& c : kCommands) {
    if (name != c.name) continue;
    try {
      return c.run(args);
    } catch (const UsageError& e) {
      std::cerr << "crossdev " << name << ": error: " << e.what() << "\n";
      return kExitBadInput;
    } catch (const crossdev::YamlError& e) {
      std::cerr << e.what() << "\n";
      return kExitBadInput;
    } catch (const crossdev::DeviceSpecError& e) {
      std::cerr << "crossdev " << name << ": error: " << e.what() << "\n";
      return kExitBadInput;
    } catch (const std::filesystem::filesystem_error& e) {
      std::cerr << "crossdev " << name << ": error: " << e.what() << "\n";
      return kExitBadInput;
    } catch (const std::exception& e) {
      // The exit-code contract is 0/1/2 (130/143 for signals): whatever else went wrong is
      // reported as a failure to read, write or parse, with its message.
      std::cerr << "crossdev " << name << ": error: " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  std::cerr << "crossdev: unknown command '" << name << "'\n";
  usage(std::cerr);
  return kExitBadInput;
}
