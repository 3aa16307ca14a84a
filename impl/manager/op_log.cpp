#include "manager/op_log.h"

#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>

#include "util/json.h"

namespace crossdev::manager {

OpLog& OpLog::global() {
  static OpLog* log = [] {
    auto* l = new OpLog();  // never destroyed: ScopedOps may run during static destruction
    if (const char* path = std::getenv("CROSSDEV_DEVICE_LOG")) l->set_jsonl_path(path);
    return l;
  }();
  return *log;
}

OpLog::OpLog() : start_(std::chrono::steady_clock::now()) {}

void OpLog::record(OpLogEntry entry) {
  entry.ts_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  auto& logger = Logger::global();
  if (logger.enabled(LogLevel::Info)) {
    std::string message = entry.op + " on " + entry.device + ": " + entry.outcome;
    for (const auto& [k, v] : entry.fields)
      if (k == "reason") message += " (" + v + ")";
    logger.log(LogLevel::Info, "manager." + entry.category, message, entry.fields);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!jsonl_path_.empty()) {
    std::ofstream out(jsonl_path_, std::ios::app);
    out << entry_json(entry) << '\n';
  }
  entries_.push_back(std::move(entry));
}

std::vector<OpLogEntry> OpLog::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_;
}

std::size_t OpLog::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void OpLog::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

void OpLog::set_jsonl_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  jsonl_path_ = path;
}

std::string OpLog::entry_json(const OpLogEntry& e) {
  json::Writer w(0);
  w.begin_object();
  w.field("ts_ms", e.ts_ms).field("category", e.category).field("op", e.op).field("device", e.device);
  w.field("duration_us", e.duration_us).field("outcome", e.outcome);
  w.key("fields").begin_object();
  for (const auto& [k, v] : e.fields) w.field(k, v);
  w.end_object();
  w.end_object();
  return w.str();
}

std::string OpLog::summary_json(std::size_t last_n) const {
  struct Totals {
    long long count = 0, errors = 0;
    double total_us = 0;
  };
  std::map<std::string, Totals> by_category;
  std::map<std::string, long long> by_outcome;
  std::vector<OpLogEntry> copy = entries();
  for (const auto& e : copy) {
    auto& t = by_category[e.category];
    ++t.count;
    t.total_us += e.duration_us;
    if (e.outcome == "error" || e.outcome == "rethrown") ++t.errors;
    ++by_outcome[e.outcome];
  }
  json::Writer w;
  w.begin_object();
  w.field("format", "crossdev-device-log/1");
  w.field("entries", static_cast<long long>(copy.size()));
  w.key("categories").begin_object();
  for (const auto& [name, t] : by_category) {
    w.key(name).begin_object();
    w.field("count", t.count).field("total_us", t.total_us).field("errors", t.errors);
    w.end_object();
  }
  w.end_object();
  w.key("outcomes").begin_object();
  for (const auto& [name, n] : by_outcome) w.field(name, n);
  w.end_object();
  w.key("last").begin_array();
  const std::size_t first = copy.size() > last_n ? copy.size() - last_n : 0;
  for (std::size_t i = first; i < copy.size(); ++i) w.raw(entry_json(copy[i]));
  w.end_array();
  w.end_object();
  return w.str();
}

ScopedOp::ScopedOp(std::string category, std::string op, std::string device, OpLog& log)
    : log_(log), begin_(std::chrono::steady_clock::now()), uncaught_(std::uncaught_exceptions()) {
  entry_.category = std::move(category);
  entry_.op = std::move(op);
  entry_.device = std::move(device);
}

ScopedOp::~ScopedOp() {
  entry_.duration_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin_).count();
  if (entry_.outcome.empty()) entry_.outcome = std::uncaught_exceptions() > uncaught_ ? "error" : "ok";
  try {
    log_.record(std::move(entry_));
  } catch (...) {
    // Logging must never turn a result into a crash.
  }
}

}  // namespace crossdev::manager
