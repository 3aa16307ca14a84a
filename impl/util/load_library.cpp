#include "util/load_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include <c10/util/StringUtil.h>

namespace crossdev {
namespace {

struct RegistrationErrors {
  std::mutex mutex;
  std::vector<std::string> messages;
};
RegistrationErrors& registration_errors() {
  static RegistrationErrors e;
  return e;
}

std::vector<std::string> take_registration_errors() {
  RegistrationErrors& e = registration_errors();
  std::lock_guard<std::mutex> lock(e.mutex);
  return std::exchange(e.messages, {});
}

}  // namespace

void report_registration_error(std::string message) {
  RegistrationErrors& e = registration_errors();
  std::lock_guard<std::mutex> lock(e.mutex);
  e.messages.push_back(std::move(message));
}

std::vector<std::string> split_library_lists(const std::vector<std::string>& lists) {
  std::vector<std::string> paths;
  for (const std::string& list : lists) {
    std::size_t start = 0;
    while (start < list.size()) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      if (end > start) paths.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  return paths;
}

std::vector<std::string> load_library_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> loaded;
  for (const std::string& path : paths) {
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* why = dlerror();
      throw LoadLibraryError("cannot load '" + path + "': " + (why != nullptr ? why : "unknown error") +
                             "; expected a shared library (.so) built against this LibTorch");
    }
    const std::vector<std::string> refused = take_registration_errors();
    if (!refused.empty()) throw LoadLibraryError("'" + path + "' loaded, but " + c10::Join("; ", refused));
    loaded.push_back(path);
  }
  return loaded;
}

std::vector<std::string> load_libraries(const std::vector<std::string>& lists) {
  return load_library_paths(split_library_lists(lists));
}

}  // namespace crossdev
