// crossdev load-check [--simulate S] PATH...   (internal; not listed in `crossdev --help`)
// Loads each library in order, in this process, the way `crossdev run --load-library` will, and
// reports the first that fails as a `fatal` event on stderr (runner/library_check.h: "cannot load
// 'PATH': ..."), exit 2: a file the loader refuses, a registration a library reported as refused,
// an exception thrown by its static initialisers (which would otherwise abort the process), or a
// crash while it loads. `crossdev run` runs this in a child process before loading anything
// itself (runner/library_check.h); so does the pytest plugin (crossdev.libraries.load_checked).
// With --simulate, the host is prepared first as the run prepares it (the sim backend
// registered), so a library that clashes with it fails here too.
#include <iostream>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/host_option.h"
#include "runner/library_check.h"
#include "runner/run_context.h"

namespace crossdev::cli {

int cmd_load_check(const std::vector<std::string>& argv) {
  static const std::vector<OptionSpec> kOptions = {
      {"--simulate", "S", "prepare the host as `crossdev run --simulate S` does before loading"},
      {"--help", nullptr, "show this help"}};
  const ParsedArgs args = parse_args(argv, kOptions);
  if (args.has("--help")) {
    std::cout << "usage: crossdev load-check [--simulate S] PATH...\n\n"
                 "Internal: loads the libraries in order, as `crossdev run --load-library` does, and reports the\n"
                 "first that fails (exit 2). crossdev runs it in a child process before loading libraries itself.\n\n"
              << format_options(kOptions);
    return kExitPass;
  }
  if (args.has("--simulate")) {
    try {
      (void)conformance::prepare_run(args.get("--simulate"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  return conformance::load_check_main(args.positional);
}

}  // namespace crossdev::cli
