#include "log/logger.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "util/json.h"

namespace crossdev {

const char* log_level_name(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Debug: return "DEBUG";
    case LogLevel::Info: return "INFO";
    case LogLevel::Warning: return "WARNING";
    case LogLevel::Error: return "ERROR";
    case LogLevel::Off: return "OFF";
  }
  return "?";
}

std::optional<LogLevel> parse_log_level(std::string_view text) noexcept {
  std::string up;
  for (char c : text) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (up == "DEBUG") return LogLevel::Debug;
  if (up == "INFO") return LogLevel::Info;
  if (up == "WARNING" || up == "WARN") return LogLevel::Warning;
  if (up == "ERROR") return LogLevel::Error;
  if (up == "OFF" || up == "NONE") return LogLevel::Off;
  return std::nullopt;
}

Logger::Logger() { configure_from_env(); }

Logger& Logger::global() {
  static Logger logger;
  return logger;
}

void Logger::configure_from_env() {
  for (const char* var : {"CROSSDEV_LOG_LEVEL", "TORCHDEVICE_LOG_LEVEL"}) {
    const char* value = std::getenv(var);
    if (!value || !*value) continue;
    if (auto level = parse_log_level(value)) {
      set_level(*level);
    } else {
      std::fprintf(stderr, "[crossdev WARNING log] %s='%s' is not a log level; expected DEBUG, INFO, WARNING, ERROR or OFF\n",
                   var, value);
    }
    break;  // CROSSDEV_LOG_LEVEL wins when both are set
  }
  if (const char* path = std::getenv("CROSSDEV_LOG_JSONL"); path && *path) set_jsonl_path(path);
}

void Logger::set_jsonl_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  jsonl_path_ = path;
}

void Logger::set_text_sink(TextSink sink) {
  std::lock_guard<std::mutex> lock(mutex_);
  text_sink_ = std::move(sink);
}

void Logger::log(LogLevel level, std::string_view category, std::string_view message, const LogFields& fields) {
  if (!enabled(level)) return;
  std::string line = "[crossdev ";
  line.append(log_level_name(level)).append(" ").append(category).append("] ").append(message);
  std::lock_guard<std::mutex> lock(mutex_);
  if (text_sink_) {
    text_sink_(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  if (jsonl_path_.empty()) return;
  json::Writer w(0);
  const double ts = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  w.begin_object().field("ts", ts).field("level", log_level_name(level)).field("category", category).field("message", message);
  for (const auto& [k, v] : fields) w.field(k, v);
  w.end_object();
  std::ofstream out(jsonl_path_, std::ios::app);
  out << w.str() << '\n';
}

}  // namespace crossdev
