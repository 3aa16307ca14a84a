#pragma once
// Seed 003's structured device-operation log: every move, cast, attempt, recovery, device chain
// step, cache flush, stream/event call and checkpoint transfer becomes one entry with a
// category, a duration and its reason. Entries are kept in memory (for the summary the
// runner embeds in the bundle's `device_log`) and, when CROSSDEV_DEVICE_LOG=path is set or
// set_jsonl_path() is called, appended to a JSON-lines file as they happen.
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "log/logger.h"

namespace crossdev::manager {

struct OpLogEntry {
  double ts_ms = 0;          // since the log was created
  std::string category;      // move, cast, attempt, recovery, chain_step, empty_cache, stream, event, checkpoint, detect
  std::string op;            // what ran ("matmul", "ensure_device", "record", ...)
  std::string device;        // device it concerned
  double duration_us = 0;
  std::string outcome;       // ok, error, recovered, rethrown, ...
  LogFields fields;          // reason, error category, from/to, ...
};

class OpLog {
 public:
  static OpLog& global();
  OpLog();

  void record(OpLogEntry entry);
  std::vector<OpLogEntry> entries() const;
  std::size_t size() const;
  void clear();

  void set_jsonl_path(const std::string& path);  // "" closes the sink
  static std::string entry_json(const OpLogEntry& entry);  // one line, no newline
  // {"entries": N, "categories": {cat: {"count", "total_us", "errors"}}, "outcomes": {...}, "last": [...]}
  std::string summary_json(std::size_t last_n = 20) const;

 private:
  mutable std::mutex mutex_;
  std::vector<OpLogEntry> entries_;
  std::string jsonl_path_;
  std::chrono::steady_clock::time_point start_;
};

// Times one operation and records it when it goes out of scope (outcome "error" when
// unwinding from an exception unless an outcome was set).
class ScopedOp {
 public:
  ScopedOp(std::string category, std::string op, std::string device, OpLog& log = OpLog::global());
  ~ScopedOp();
  ScopedOp(const ScopedOp&) = delete;
  ScopedOp& operator=(const ScopedOp&) = delete;
  void outcome(std::string value) { entry_.outcome = std::move(value); }
  void field(std::string key, std::string value) { entry_.fields.emplace_back(std::move(key), std::move(value)); }

 private:
  OpLog& log_;
  OpLogEntry entry_;
  std::chrono::steady_clock::time_point begin_;
  int uncaught_;
};

}  // namespace crossdev::manager
