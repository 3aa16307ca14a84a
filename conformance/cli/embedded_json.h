#pragma once
// --bench-json / --device-log: the JSON documents `crossdev run` embeds in the bundle are read
// (regular files only, size-capped), parsed and checked against what the bundle schema
// (reports/schema.py) requires before the run starts, so a malformed file is exit 2 up front,
// not a bundle that later fails validate.py.
#include <cstdint>
#include <string>

namespace crossdev::cli {

enum class EmbeddedKind {
  Benchmarks,  // Google Benchmark JSON: an object with "benchmarks": [{"name": "...", ...}, ...]
  DeviceLog,   // an object
};

// The document as it is to be embedded. Strict RFC 8259 JSON with one allowance: Google
// Benchmark writes NaN / Infinity / -Infinity, and a number too large for a double (1e999) is
// an infinity too; each is embedded as null (the bundle's spelling of a non-finite number).
// Nesting deeper than 128 levels is refused. Throws UsageError naming the option, the path,
// the line:column and what was expected.
std::string load_embedded_json(const char* option, const std::string& path, EmbeddedKind kind, std::uintmax_t max_bytes);

// The same checks on text (for tests); `where` prefixes messages.
std::string check_embedded_json(const std::string& where, const std::string& text, EmbeddedKind kind);

}  // namespace crossdev::cli
