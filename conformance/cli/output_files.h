#pragma once
// The files `crossdev run` writes (--out bundle, --junit): checked before the run, written as
// one set after it, and never lost: if writing fails at the end (a full disk), the results go
// to $TMPDIR (else /tmp) and the message says where.
#include <cstdint>
#include <string>
#include <vector>

namespace crossdev::cli {

struct OutputFile {
  std::string option;  // "--out"
  std::string path;
  std::string contents;
};

// Before the run: the folder exists or can be created, is writable (a probe file is created
// and removed), the path is not a folder, and the file system has at least `needed_bytes` free
// where statvfs can tell. Stale "<name>.tmp.*" files of dead writers beside it are removed.
// Throws UsageError naming the option, the path and what was expected.
void check_output_path(const std::string& option, const std::string& path, std::uintmax_t needed_bytes);

// Writes all files as one set (all temporaries, then all renames). On failure, writes the set
// to $TMPDIR (else /tmp) as "crossdev-<run_id>-<name>" and returns a message
// naming the failure and where the results are; "" on success.
std::string write_outputs(const std::vector<OutputFile>& files, const std::string& run_id);

}  // namespace crossdev::cli
