#pragma once
// core/base/metrics.h — a small Prometheus metrics registry.
//
// Counters, gauges and histograms with fixed label names, rendered in the
// Prometheus text exposition format (version 0.0.4). Every module records
// into the registry main() hands it; dranetd serves Render() on /metrics.
// Names follow Prometheus conventions: base units (_seconds, _bytes),
// `_total` only on counters. Thread-safe; recording is a map lookup under a
// per-family mutex (no allocation once a label set exists).
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dranet {

// Reports one finished operation (a prepare, an NRI hook) to whoever keeps
// metrics; services take one so they need not know the registry.
using OperationObserver = std::function<void(const std::string& operation, bool ok, double seconds)>;

using Labels = std::vector<std::string>;  // values, in the family's label-name order

class MetricFamily {
 public:
  enum class Type { kCounter, kGauge, kHistogram };
  MetricFamily(std::string name, std::string help, Type type, std::vector<std::string> label_names,
               std::vector<double> buckets = {});

  void Inc(const Labels& labels = {}, double by = 1.0);      // counter or gauge
  void Set(double value, const Labels& labels = {});         // gauge
  void Observe(double value, const Labels& labels = {});     // histogram
  double Value(const Labels& labels = {}) const;             // counter/gauge; 0 when unset
  uint64_t Count(const Labels& labels = {}) const;           // histogram observations

  void Render(std::string& out) const;
  const std::string& name() const { return name_; }

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

class MetricsRegistry {
 public:
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

 private:
  MetricFamily& Add(const std::string& name, const std::string& help, MetricFamily::Type type,
                    std::vector<std::string> label_names, std::vector<double> buckets);
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<MetricFamily>> families_;
  std::vector<std::function<void(MetricsRegistry&)>> collectors_;
};

}  // namespace dranet
