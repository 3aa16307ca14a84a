#include "util/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

#include <cerrno>
#include <cstring>

namespace crossdev {
namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string too_big(std::uintmax_t size, std::uintmax_t max_bytes, const char* cap_hint, bool at_least) {
  return std::string("the file is ") + (at_least ? "more than " : "") + std::to_string(size) +
         " bytes, above the limit of " + std::to_string(max_bytes) + " bytes" +
         (cap_hint && *cap_hint ? std::string(" (raise it with ") + cap_hint + ")" : std::string());
}

}  // namespace

const char* file_type_name(unsigned mode) noexcept {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a folder";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "a special file";
  }
}

std::string read_input_file(const std::string& path, std::uintmax_t max_bytes, const char* cap_hint) {
  // O_NONBLOCK: opening a FIFO without a writer must not block; the type check below refuses it.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) throw InputFileError(std::string("cannot open: ") + std::strerror(errno));
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) throw InputFileError(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw InputFileError(std::string("not a regular file (") + file_type_name(st.st_mode) + "); expected a regular file");
#ifdef __linux__
  struct statfs fs{};
  constexpr long kProcMagic = 0x9fa0, kSysfsMagic = 0x62656572;
  if (::fstatfs(f.fd, &fs) == 0 && (fs.f_type == kProcMagic || fs.f_type == kSysfsMagic))
    throw InputFileError("a /proc or /sys pseudo-file; expected a regular file");
#endif
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  if (size > max_bytes) throw InputFileError(too_big(size, max_bytes, cap_hint, false));
  std::string text;
  text.reserve(static_cast<std::size_t>(size));
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw InputFileError(std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) throw InputFileError(too_big(max_bytes, max_bytes, cap_hint, true));
  }
  return text;
}

}  // namespace crossdev
