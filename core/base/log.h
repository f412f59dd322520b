#pragma once
// core/base/log.h — structured, klog-compatible logging for every core module.
//
// A Logger is created once by main() and passed by reference to whatever
// needs it (no global logger). Lines are either klog text
//   I1122 06:40:00.123456    4242 host.cpp:88] "plugin loaded" name="azure" abi="1.0"
// or one JSON object per line (--log-format=json). Thread-safe.
#include <cstdint>
#include <mutex>
#include <ostream>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

namespace dranet {

enum class Severity { kInfo, kWarning, kError };

struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const char* v) : key(k), value(v ? v : "") {}
  LogField(std::string_view k, const std::string& v) : key(k), value(v) {}
  template <typename Int>
    requires std::is_arithmetic_v<Int>
  LogField(std::string_view k, Int v) : key(k), value(Format(v)) {}
  std::string key;
  std::string value;

 private:
  template <typename Int>
  static std::string Format(Int v) {
    if constexpr (std::is_same_v<Int, bool>) return v ? "true" : "false";
    else return std::to_string(v);
  }
};

class Logger {
 public:
  enum class Format { kText, kJson };

  // `out` must outlive the logger. `verbosity` gates Verbose(level, ...).
  explicit Logger(std::ostream& out, Format format = Format::kText, int verbosity = 0);

  bool V(int level) const { return level <= verbosity_; }
  int verbosity() const { return verbosity_; }

  void Log(Severity severity, std::string_view message, const std::vector<LogField>& fields,
           const std::source_location& where = std::source_location::current());
  void Info(std::string_view message, const std::vector<LogField>& fields = {},
            const std::source_location& where = std::source_location::current()) {
    Log(Severity::kInfo, message, fields, where);
  }
  void Warning(std::string_view message, const std::vector<LogField>& fields = {},
               const std::source_location& where = std::source_location::current()) {
    Log(Severity::kWarning, message, fields, where);
  }
  void Error(std::string_view message, const std::vector<LogField>& fields = {},
             const std::source_location& where = std::source_location::current()) {
    Log(Severity::kError, message, fields, where);
  }
  // Logged at info severity only when verbosity >= level.
  void Verbose(int level, std::string_view message, const std::vector<LogField>& fields = {},
               const std::source_location& where = std::source_location::current()) {
    if (V(level)) Log(Severity::kInfo, message, fields, where);
  }

  // Parses "text" / "json"; throws std::invalid_argument otherwise.
  static Format ParseFormat(std::string_view name);

 private:
  std::ostream& out_;
  Format format_;
  int verbosity_;
  std::mutex mu_;
};

// A logger that discards everything (for tools that must stay quiet).
Logger& NullLogger();

}  // namespace dranet
