#pragma once
// Loading user libraries that register ops or hooks (crossdev run --load-library, the pytest
// plugin's --crossdev-load-library, crossdev_bench --crossdev_load_library): each value is a
// ':'-separated list, loaded in order with RTLD_NOW | RTLD_GLOBAL so the ops they register can
// call each other.
//
// A library can also fail in a way no caller can catch: an exception thrown by its static
// initialisers (TORCH_LIBRARY(ns, m) for a namespace that is taken, e.g. crossdev's own, or a
// second copy of an extension already loaded) unwinds into the dynamic loader, which ends the
// process with std::terminate (exit 134 and a core). So the libraries are first loaded once in a
// child process (`crossdev load-check PATH...`, which calls load_check_main): the child reports
// any failure as one line and exits 2, and the caller (check_libraries_in_child, or the Python
// side, crossdev.libraries) turns that line into a LoadLibraryError before loading in-process.
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

// --- the check in a child process ---------------------------------------------------------
// The child's protocol, on its stderr: "crossdev load-check: loading: PATH" before each library,
// and on failure a last line "crossdev load-check: error: <LoadLibraryError::what()>" then exit 2.
inline constexpr const char* kLoadCheckLoadingPrefix = "crossdev load-check: loading: ";
inline constexpr const char* kLoadCheckErrorPrefix = "crossdev load-check: error: ";

// The child: loads `paths` in order in this process, reporting as above. An exception escaping a
// static initialiser (std::terminate) and a crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT)
// while a library loads are reported the same way, naming that library. Returns 0 when every
// library loaded, else 2 (or does not return: _exit(2)).
int load_check_main(const std::vector<std::string>& paths);

// The parent: runs `argv` (argv[0] an executable path; posix_spawn, never fork alone: LibTorch's
// OpenMP pool does not survive a fork) whose command calls load_check_main, waits for it (at most
// timeout_s seconds, then kills it), and throws LoadLibraryError with the child's message when
// it did not exit 0: its error line, or how it ended (a signal, an exit status, the timeout) with
// the library it was loading and the last lines it printed.
void check_libraries_in_child(const std::vector<std::string>& argv, double timeout_s = 300);

}  // namespace crossdev
