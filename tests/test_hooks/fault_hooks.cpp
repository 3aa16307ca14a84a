// libcrossdev_test_hooks (test-only): loaded by `crossdev run --load-library`, it makes the row
// named by CROSSDEV_TEST_CRASH_ROW die like a segfaulting kernel, or the row named by
// CROSSDEV_TEST_HANG_ROW hang like a deadlocked one (tests/python/conformance/test_isolation.py,
// test_cli_reliability.py). CROSSDEV_TEST_HANG_MARKER=path is created when the hang starts, so a
// test knows the rows before it are done. The production runner reads none of these variables.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "util/row_hook.h"

namespace {

void fault_hook(const std::string& row_id) {
  if (const char* id = std::getenv("CROSSDEV_TEST_CRASH_ROW"); id && row_id == id) std::raise(SIGSEGV);
  if (const char* id = std::getenv("CROSSDEV_TEST_HANG_ROW"); id && row_id == id) {
    if (const char* marker = std::getenv("CROSSDEV_TEST_HANG_MARKER"))
      if (std::FILE* f = std::fopen(marker, "w")) std::fclose(f);
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
}

const bool installed = (crossdev::set_row_hook(&fault_hook), true);

}  // namespace
