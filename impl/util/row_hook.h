#pragma once
// A function the conformance runner calls before each row, in the process that runs the row (the
// worker when rows are isolated, the pytest process under the plugin). Production code never
// installs one: the test-only library tests/test_hooks (libcrossdev_test_hooks, loaded with
// `crossdev run --load-library` or the pytest plugin's --crossdev-load-library) installs the
// crash/hang hooks the isolation tests need, so the production runner reads no test-only
// environment variable. It lives in libcrossdev_core (shared) so the CLI, the Python module and a
// loaded library see one hook per process.
#include <string>

namespace crossdev {

using RowHook = void (*)(const std::string& row_id);

// Replaces the hook (nullptr removes it). Call before the run starts; not synchronized.
void set_row_hook(RowHook hook) noexcept;
RowHook row_hook() noexcept;

}  // namespace crossdev
