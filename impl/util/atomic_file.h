#pragma once
// Reports are written atomically: to a uniquely named temporary file beside the target
// ("<name>.tmp.<pid>.XXXXXX", mkstemp), flushed, then renamed over it, so a reader never sees
// half a bundle and a crash leaves the old one intact. Temporaries are removed on every error
// path; one left by a killed process is removed by the next run (remove_stale_temporaries).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crossdev {

// Throws std::runtime_error naming the path and errno text on failure. Creates parent directories.
void write_file_atomically(const std::string& path, std::string_view contents);

// Several files replaced as one set: every temporary is written and flushed first, and only
// when all succeeded are they renamed into place, so a failure (a full disk) changes nothing.
// Throws std::runtime_error naming the path that failed; no temporary is left behind.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

// Removes "<name>.tmp.*" files beside `path` whose writer process is gone. Returns how many.
int remove_stale_temporaries(const std::string& path) noexcept;

}  // namespace crossdev
