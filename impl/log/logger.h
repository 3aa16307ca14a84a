#pragma once
// Process-wide logger. Level from CROSSDEV_LOG_LEVEL (TORCHDEVICE_LOG_LEVEL, seed 002, is
// accepted too): DEBUG, INFO, WARNING (default), ERROR, OFF. Text lines go to stderr (or a test
// sink); CROSSDEV_LOG_JSONL=path adds a JSON-lines sink. `enabled()` is one relaxed atomic
// load, so disabled logging costs nothing on hot paths such as resolve().
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crossdev {

enum class LogLevel : std::uint8_t { Debug = 10, Info = 20, Warning = 30, Error = 40, Off = 100 };
const char* log_level_name(LogLevel level) noexcept;
std::optional<LogLevel> parse_log_level(std::string_view text) noexcept;  // case-insensitive

using LogFields = std::vector<std::pair<std::string, std::string>>;

class Logger {
 public:
  static Logger& global();

  bool enabled(LogLevel level) const noexcept {
    return static_cast<std::uint8_t>(level) >= level_.load(std::memory_order_relaxed);
  }
  LogLevel level() const noexcept { return static_cast<LogLevel>(level_.load(std::memory_order_relaxed)); }
  void set_level(LogLevel level) noexcept { level_.store(static_cast<std::uint8_t>(level), std::memory_order_relaxed); }

  // Reads CROSSDEV_LOG_LEVEL / TORCHDEVICE_LOG_LEVEL / CROSSDEV_LOG_JSONL. An unknown level is
  // reported once on stderr and the default kept: a typo must not silence or crash a CI job.
  void configure_from_env();

  void set_jsonl_path(const std::string& path);  // "" closes the sink
  using TextSink = std::function<void(std::string_view line)>;
  void set_text_sink(TextSink sink);             // nullptr restores stderr

  // "[crossdev WARNING redirect] cuda:3 -> cuda:0: ..." plus a JSON line when that sink is open.
  void log(LogLevel level, std::string_view category, std::string_view message, const LogFields& fields = {});

 private:
  Logger();
  std::atomic<std::uint8_t> level_{static_cast<std::uint8_t>(LogLevel::Warning)};
  std::mutex mutex_;
  TextSink text_sink_;
  std::string jsonl_path_;
};

}  // namespace crossdev
