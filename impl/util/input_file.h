#pragma once
// Reading an input file the CLI was pointed at (a matrix, an embedded JSON document) without
// trusting what is there: only regular files are read (a FIFO, a device such as /dev/zero, a
// socket or a /proc or /sys pseudo-file is refused before a byte is read, and a FIFO's open
// does not block), and never more than a size cap, so no input can hang the run or exhaust memory.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace crossdev {

inline constexpr std::uintmax_t kDefaultMaxInputBytes = std::uintmax_t{64} << 20;  // 64 MiB

// what() is a sentence without the path ("not a regular file (a FIFO); expected a regular file").
class InputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole file. Throws InputFileError. `cap_hint` names how to raise the cap in the message
// ("--max-matrix-bytes").
std::string read_input_file(const std::string& path, std::uintmax_t max_bytes, const char* cap_hint);

// "a FIFO", "a character device", ... for a st_mode.
const char* file_type_name(unsigned mode) noexcept;

}  // namespace crossdev
