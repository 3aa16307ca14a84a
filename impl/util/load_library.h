#pragma once
// Loading user libraries that register ops or hooks (crossdev run --load-library, the pytest
// plugin's --crossdev-load-library, crossdev_bench --crossdev_load_library): each value is a
// ':'-separated list, loaded in order with RTLD_NOW | RTLD_GLOBAL so the ops they register can
// call each other.
//
// A library whose static initialisers throw would end the process that loads it (std::terminate), so
// crossdev first loads the libraries in a child process (conformance/runner/library_check.h, `crossdev
// load-check`), and loads them here only when that child succeeded.
#include <stdexcept>
#include <string>
#include <vector>

namespace crossdev {

// what(): "cannot load 'PATH': <the loader's reason>; expected a shared library (.so) built
// against this LibTorch", or "cannot load 'PATH': its static initialisation threw <type>: <message>".
class LoadLibraryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every path of the ':'-separated lists, in order (empty items dropped).
std::vector<std::string> split_library_lists(const std::vector<std::string>& lists);

// Returns the paths loaded, in order. Throws LoadLibraryError at the first that does not load, or
// whose static registrations reported an error (a preset with a taken name, ...).
std::vector<std::string> load_libraries(const std::vector<std::string>& lists);
// The same for paths that are not lists (a ':' is part of the name).
std::vector<std::string> load_library_paths(const std::vector<std::string>& paths);

// For registrars that run while a library loads: record why a registration was refused, instead
// of throwing out of a static initializer (which would terminate the process).
void report_registration_error(std::string message);

}  // namespace crossdev
