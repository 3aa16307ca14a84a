#include "util/data_dir.h"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>

namespace crossdev {
namespace {

std::string locate() {
  Dl_info info{};
  // This function's own address names the shared object it lives in: libcrossdev_core.so.
  if (dladdr(reinterpret_cast<const void*>(&locate), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    const std::filesystem::path lib = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) {
      const std::filesystem::path installed = lib.parent_path().parent_path() / "matrices";
      if (std::filesystem::is_directory(installed, ec)) return installed.string();
    }
  }
#ifdef CROSSDEV_SOURCE_MATRIX_DIR
  return CROSSDEV_SOURCE_MATRIX_DIR;  // a build tree: the sources it was configured from
#else
  return "matrices";
#endif
}

}  // namespace

std::string builtin_matrix_dir() {
  static const std::string dir = locate();
  return dir;
}

std::string data_file(const std::string& relative) { return builtin_matrix_dir() + "/" + relative; }

}  // namespace crossdev
