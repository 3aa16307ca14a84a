#pragma once
// Loading user libraries that register ops or hooks (crossdev run --load-library, the pytest
// plugin's --crossdev-load-library, crossdev_bench --crossdev_load_library): each value is a
// ':'-separated list, loaded in order with RTLD_NOW | RTLD_GLOBAL so the ops they register can
// call each other.
#include <stdexcept>
#include <string>
#include <vector>

namespace crossdev {

// what(): "cannot load 'PATH': <the loader's reason>; expected a shared library (.so) built
// against this LibTorch".
class LoadLibraryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Returns the paths loaded, in order. Throws LoadLibraryError at the first that does not load, or
// whose static registrations reported an error (a preset with a taken name, ...).
std::vector<std::string> load_libraries(const std::vector<std::string>& lists);

// For registrars that run while a library loads: record why a registration was refused, instead
// of throwing out of a static initializer (which would terminate the process).
void report_registration_error(std::string message);

}  // namespace crossdev
