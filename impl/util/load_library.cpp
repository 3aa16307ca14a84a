#include "util/load_library.h"

#include <dlfcn.h>

#include <algorithm>

namespace crossdev {

std::vector<std::string> load_libraries(const std::vector<std::string>& lists) {
  std::vector<std::string> paths;
  for (const std::string& list : lists) {
    std::size_t start = 0;
    while (start < list.size()) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      if (end > start) paths.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  std::vector<std::string> loaded;
  for (const std::string& path : paths) {
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* why = dlerror();
      throw LoadLibraryError("cannot load '" + path + "': " + (why != nullptr ? why : "unknown error") +
                             "; expected a shared library (.so) built against this LibTorch");
    }
    loaded.push_back(path);
  }
  return loaded;
}

}  // namespace crossdev
