#pragma once
// Reports are written atomically: to a temporary file beside the target, flushed, then
// renamed over it, so a reader never sees half a bundle and a crash leaves the old one intact.
#include <string>
#include <string_view>

namespace crossdev {

// Throws std::runtime_error naming the path and errno text on failure. Creates parent directories.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace crossdev
