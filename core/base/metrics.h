#pragma once
// core/base/metrics.h — a small Prometheus metrics registry.
//
// Counters, gauges and histograms with fixed label names, rendered in the
// Prometheus text exposition format (version 0.0.4). Every module records
// into the registry main() hands it; dranetd serves Render() on /metrics.
// Names follow Prometheus conventions, enforced when a family is registered:
// base units (_seconds, _bytes), `_total` on every counter and on nothing
// else, no `_bucket`/`_count`/`_sum` suffix outside what histograms render.
// Thread-safe; recording is a map lookup under a per-family mutex (no
// allocation once a label set exists).
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace dranet {

// How one operation ended: kNoop when it concerned nothing of ours (an NRI
// hook for a pod without claims of this driver).
enum class OperationStatus { kSuccess, kFailed, kNoop };
const char* OperationStatusName(OperationStatus status);  // "success", "failed", "noop"

// Reports one finished operation (a kubelet call, a claim's prepare, an NRI
// hook) to whoever keeps metrics; services take one so they need not know
// the registry.
using OperationObserver = std::function<void(const std::string& operation, OperationStatus status, double seconds)>;

using Labels = std::vector<std::string>;  // values, in the family's label-name order

class MetricFamily {
 public:
  enum class Type { kCounter, kGauge, kHistogram };
  MetricFamily(std::string name, std::string help, Type type, std::vector<std::string> label_names,
               std::vector<double> buckets = {});

  void Inc(const Labels& labels = {}, double by = 1.0);      // counter or gauge
  // Gauge; or a counter whose running total is kept elsewhere (the kernel's
  // CPU time, a component's own tally), which only ever grows.
  void Set(double value, const Labels& labels = {});
  void Observe(double value, const Labels& labels = {});     // histogram
  double Value(const Labels& labels = {}) const;             // counter/gauge; 0 when unset
  uint64_t Count(const Labels& labels = {}) const;           // histogram observations

  void Render(std::string& out) const;
  const std::string& name() const { return name_; }
  bool Matches(Type type, const std::vector<std::string>& label_names) const;

 private:
  struct Series {
    double value = 0;                 // counter / gauge / histogram sum
    uint64_t count = 0;               // histogram
    std::vector<uint64_t> buckets;    // histogram, cumulative at render
  };
  Series& SeriesFor(const Labels& labels);
  std::string name_, help_;
  Type type_;
  std::vector<std::string> label_names_;
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::map<Labels, Series> series_;
};

// A family name or label the exposition format or the naming conventions
// refuse; thrown at registration, so a bad name fails every test that starts
// the component.
struct MetricNameError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

class MetricsRegistry {
 public:
  // Registering a name again returns the existing family when type and label
  // names agree, and throws MetricNameError when they do not.
  MetricFamily& Counter(const std::string& name, const std::string& help,
                        std::vector<std::string> label_names = {});
  MetricFamily& Gauge(const std::string& name, const std::string& help,
                      std::vector<std::string> label_names = {});
  // Default buckets suit latencies from 100 µs to 10 s.
  MetricFamily& Histogram(const std::string& name, const std::string& help,
                          std::vector<std::string> label_names = {}, std::vector<double> buckets = {});
  // Called at every Render() before output (e.g. process RSS, fds).
  void OnCollect(std::function<void(MetricsRegistry&)> collector);

  std::string Render();

  static std::vector<double> LatencyBuckets();
  // The buckets Prometheus' client libraries use by default (5 ms to 10 s).
  static std::vector<double> DefaultBuckets();

 private:
  MetricFamily& Add(const std::string& name, const std::string& help, MetricFamily::Type type,
                    std::vector<std::string> label_names, std::vector<double> buckets);
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<MetricFamily>> families_;
  std::vector<std::function<void(MetricsRegistry&)>> collectors_;
};

}  // namespace dranet
