#pragma once
// User libraries (--load-library) are loaded once in a child process first (`crossdev load-check PATH...`),
// because a library can fail in a way no caller can catch: an exception thrown by its static initialisers
// (TORCH_LIBRARY(ns, m) for a namespace that is taken, e.g. crossdev's own, or a second copy of an extension
// already loaded) unwinds into the dynamic loader, which ends the process with std::terminate (exit 134 and
// a core). In the child that is one event; in the run it is one line of bad input (exit 2).
//
// The child reports as every worker does (runner/worker_events.h), one event per line on its stderr:
// `loading` (path) before each library, and on failure a last `fatal` (message), then exit 2. The
// parent here, and the pytest plugin's crossdev.libraries, read them. Loading itself is util/load_library.h.
#include <string>
#include <vector>

namespace crossdev::conformance {

// The child: dies with its parent (runner/child_process.h), loads `paths` in order in this process,
// reporting as above. An exception escaping a static initialiser (std::terminate) and a crash (SIGSEGV,
// SIGBUS, SIGILL, SIGFPE, SIGABRT) while a library loads are reported the same way, naming that library.
// Returns 0 when every library loaded, else 2 (or does not return: _exit(2)).
int load_check_main(const std::vector<std::string>& paths);

// The parent: starts `argv` (argv[0] an executable path) through spawn_child, whose command calls
// load_check_main, waits for it (at most timeout_s seconds, then kills it), and throws LoadLibraryError
// (util/load_library.h) with the child's message when it did not exit 0: its `fatal` event, or how it
// ended (a signal, an exit status, the timeout) with the library it was loading and the last lines it printed.
void check_libraries_in_child(const std::vector<std::string>& argv, double timeout_s = 300);

}  // namespace crossdev::conformance
