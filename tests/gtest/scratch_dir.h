// A throwaway folder under the system temp dir, removed with everything in it when the object goes.
//
// Removal uses nftw(3), never std::filesystem::remove_all: LibTorch's pip builds export their own
// copies of the std::filesystem functions (142 symbols in libtorch_cpu.so), the dynamic linker can bind
// a test's call to them, and torch 2.11+cu130's remove_all crashed that way on Ubuntu 24.04 (a call
// through a null pointer, seen on an H100 host). tests/python/source_rules/test_no_filesystem_remove_all.py
// keeps remove_all out of the sources.
#pragma once

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace crossdev::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    nftw(path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return std::remove(p); }, 16,
         FTW_DEPTH | FTW_PHYS);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& relative) const { return path_ / relative; }

 private:
  std::filesystem::path path_;
};

}  // namespace crossdev::testing
