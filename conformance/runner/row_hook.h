#pragma once
// A function the runner calls before each row, in the process that runs the row (the worker, when
// rows are isolated). Production code never installs one: the test-only library
// conformance/test_hooks (libcrossdev_test_hooks, loaded with `crossdev run --load-library`)
// installs the crash/hang hooks the isolation tests need, so the production runner reads no
// test-only environment variable. The CLI exports its symbols (ENABLE_EXPORTS) so a loaded
// library can reach set_row_hook.
#include <string>

namespace crossdev::conformance {

using RowHook = void (*)(const std::string& row_id);

// Replaces the hook (nullptr removes it). Call before the run starts; not synchronized.
void set_row_hook(RowHook hook) noexcept;
RowHook row_hook() noexcept;

}  // namespace crossdev::conformance
