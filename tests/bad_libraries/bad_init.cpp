// libcrossdev_test_bad_init (test-only): a library whose static initialiser fails the way
// CROSSDEV_TEST_BAD_INIT says, for the load check's other paths (util/load_library.h):
//   throw  throws std::runtime_error out of the initialiser (std::terminate in-process)
//   segv   raises SIGSEGV
//   exit   calls _exit(7)
//   (unset) loads cleanly
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace {

struct BadInit {
  BadInit() {
    const char* how = std::getenv("CROSSDEV_TEST_BAD_INIT");
    if (how == nullptr) return;
    if (std::strcmp(how, "throw") == 0) throw std::runtime_error("bad_init: refusing to initialise\nsecond line of the message");
    if (std::strcmp(how, "segv") == 0) std::raise(SIGSEGV);
    if (std::strcmp(how, "exit") == 0) ::_exit(7);
  }
};
const BadInit kBadInit;

}  // namespace
