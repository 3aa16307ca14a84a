// libcrossdev_test_clash (test-only): a user's extension that claims crossdev's own operator
// namespace. LibTorch refuses a second TORCH_LIBRARY for a namespace by throwing from this
// library's static initialiser, inside dlopen, which no caller can catch: loaded in-process it
// would abort the run (exit 134). `crossdev run --load-library` and the plugin's
// --crossdev-load-library load it in a child process first and report exit 2 instead
// (util/load_library.h; tests/python/conformance/test_cli_load_library.py).
#include <torch/library.h>

TORCH_LIBRARY(crossdev, m) {
  m.def("clash_namespace_test(Tensor x) -> Tensor");
}
