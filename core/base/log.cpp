#include "base/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <streambuf>

namespace dranet {
namespace {

void AppendQuoted(std::string& out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

std::string_view BaseName(const char* path) {
  std::string_view p(path);
  auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

}  // namespace

Logger::Logger(std::ostream& out, Format format, int verbosity)
    : out_(out), format_(format), verbosity_(verbosity) {}

Logger::Format Logger::ParseFormat(std::string_view name) {
  if (name == "text") return Format::kText;
  if (name == "json") return Format::kJson;
  throw std::invalid_argument("unknown log format \"" + std::string(name) +
                              "\" (want text or json)");
}

void Logger::Log(Severity severity, std::string_view message, const std::vector<LogField>& fields,
                 const std::source_location& where) {
  using Clock = std::chrono::system_clock;
  auto now = Clock::now();
  std::time_t secs = Clock::to_time_t(now);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
                1000000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::string line;
  line.reserve(128);
  if (format_ == Format::kText) {
    char head[96];
    char sev = severity == Severity::kInfo ? 'I' : severity == Severity::kWarning ? 'W' : 'E';
    std::snprintf(head, sizeof head, "%c%02d%02d %02d:%02d:%02d.%06lld %7d ", sev, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(micros),
                  static_cast<int>(getpid()));
    line += head;
    line += BaseName(where.file_name());
    line += ':';
    line += std::to_string(where.line());
    line += "] ";
    AppendQuoted(line, message);
    for (const auto& f : fields) {
      line.push_back(' ');
      line += f.key;
      line.push_back('=');
      AppendQuoted(line, f.value);
    }
  } else {
    char ts[80];
    std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long long>(micros));
    line += "{\"ts\":\"";
    line += ts;
    line += "\",\"level\":\"";
    line += severity == Severity::kInfo ? "info" : severity == Severity::kWarning ? "warning" : "error";
    line += "\",\"caller\":";
    AppendQuoted(line, std::string(BaseName(where.file_name())) + ":" + std::to_string(where.line()));
    line += ",\"msg\":";
    AppendQuoted(line, message);
    for (const auto& f : fields) {
      line.push_back(',');
      AppendQuoted(line, f.key);
      line.push_back(':');
      AppendQuoted(line, f.value);
    }
    line.push_back('}');
  }
  line.push_back('\n');
  std::lock_guard lock(mu_);
  out_ << line;
  out_.flush();
}

Logger& NullLogger() {
  struct NullBuf : std::streambuf {
    int overflow(int c) override { return c; }
  };
  static NullBuf buf;
  static std::ostream sink(&buf);
  static Logger logger(sink, Logger::Format::kText, -1);
  return logger;
}

}  // namespace dranet
