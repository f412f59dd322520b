#include "daemon/process_metrics.h"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace dranet::daemon {
namespace {
// The process's own /proc entries (not the node's): no host root applies.
constexpr const char* kSelfStatm = "/proc/self/statm";
constexpr const char* kSelfFds = "/proc/self/fd";
constexpr const char* kSelfTask = "/proc/self/task";
constexpr const char* kSelfStatus = "/proc/self/status";

double CountEntries(const char* dir) {
  std::error_code ec;
  double n = 0;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}
}  // namespace

uint64_t ResidentAnonymousBytes() {
  std::ifstream status(kSelfStatus);
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("RssAnon:", 0) == 0) return std::stoull(line.substr(8)) * 1024;  // "RssAnon:   1234 kB"
  }
  return 0;
}

HeapReturned ReturnFreeHeap() {
  HeapReturned r;
  r.before = ResidentAnonymousBytes();
  malloc_trim(0);
  r.after = ResidentAnonymousBytes();
  return r;
}

void RegisterProcessMetrics(MetricsRegistry& registry, const char* version) {
  registry.Gauge("dranet_build_info", "Build information; always 1", {"version", "driver"}).Set(1, {version, "dra.net"});
  double start = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  registry.Gauge("process_start_time_seconds", "Start time of the process since the Unix epoch").Set(start);
  registry.OnCollect([](MetricsRegistry& r) {
    std::ifstream statm(kSelfStatm);
    double size_pages = 0, resident_pages = 0;
    if (statm >> size_pages >> resident_pages) {
      double page = static_cast<double>(sysconf(_SC_PAGESIZE));
      r.Gauge("process_resident_memory_bytes", "Resident memory size in bytes").Set(resident_pages * page);
      r.Gauge("process_virtual_memory_bytes", "Virtual memory size in bytes").Set(size_pages * page);
    }
    r.Gauge("dranet_process_anonymous_memory_bytes",
            "Resident anonymous memory in bytes (heap, stacks, written data): the resident memory less the "
            "shared, reclaimable file pages of the code")
        .Set(static_cast<double>(ResidentAnonymousBytes()));
    r.Gauge("process_open_fds", "Number of open file descriptors").Set(CountEntries(kSelfFds) - 1);
    r.Gauge("dranet_process_threads", "Number of threads of the daemon").Set(CountEntries(kSelfTask));
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    r.Counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds").Set(cpu);
  });
}

}  // namespace dranet::daemon
