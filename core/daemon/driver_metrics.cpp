#include "daemon/driver_metrics.h"

#include <algorithm>
#include <array>
#include <variant>

namespace dranet::daemon {
namespace {

constexpr std::array<const char*, 2> kKubeletCalls = {"PrepareResourceClaims", "UnprepareResourceClaims"};
constexpr std::array<const char*, 4> kNriHooks = {"RunPodSandbox", "StopPodSandbox", "RemovePodSandbox",
                                                  "CreateContainer"};

template <std::size_t N>
bool OneOf(const std::array<const char*, N>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

bool RdmaCapable(const inventory::Device& device) {
  auto it = device.attributes.find("dra.net/rdma");
  if (it == device.attributes.end()) return false;
  const bool* value = std::get_if<bool>(&it->second);
  return value && *value;
}

}  // namespace

DriverMetrics::DriverMetrics(MetricsRegistry& registry)
    : operations_(registry.Counter("dranet_operations_total",
                                   "Kubelet calls, claim prepares and unprepares, NRI requests, by result",
                                   {"operation", "result"})),
      operation_seconds_(registry.Histogram("dranet_operation_duration_seconds",
                                            "Latency of kubelet calls, claim prepares and NRI requests",
                                            {"operation"})),
      published_(registry.Gauge("dranet_published_devices", "Devices in the node's ResourceSlices")),
      last_published_(registry.Gauge("dranet_last_published_time_seconds",
                                     "When the node's slices were last confirmed on the API server")),
      dra_requests_(registry.Counter("dranet_driver_dra_plugin_requests_total", "Total number of DRA plugin requests.",
                                     {"method", "status"})),
      dra_seconds_(registry.Histogram("dranet_driver_dra_plugin_requests_latency_seconds",
                                      "DRA plugin request latency in seconds.", {"method"},
                                      MetricsRegistry::DefaultBuckets())),
      nri_requests_(registry.Counter("dranet_driver_nri_plugin_requests_total", "Total number of NRI plugin requests.",
                                     {"method", "status"})),
      nri_seconds_(registry.Histogram("dranet_driver_nri_plugin_requests_latency_seconds",
                                      "NRI plugin request latency in seconds.", {"method", "status"},
                                      MetricsRegistry::DefaultBuckets())),
      driver_published_(registry.Gauge("dranet_driver_published_devices_total", "Total number of published devices.",
                                       {"feature"})),
      driver_last_published_(registry.Gauge("dranet_driver_last_published_time_seconds",
                                            "The timestamp of the last successful resource publication.")) {}

void DriverMetrics::Operation(const std::string& operation, OperationStatus status, double seconds) {
  const std::string result = OperationStatusName(status);
  operations_.Inc({operation, result});
  operation_seconds_.Observe(seconds, {operation});
  if (OneOf(kKubeletCalls, operation)) {
    dra_requests_.Inc({operation, result});
    dra_seconds_.Observe(seconds, {operation});
  } else if (OneOf(kNriHooks, operation)) {
    nri_requests_.Inc({operation, result});
    nri_seconds_.Observe(seconds, {operation, result});
  }
}

OperationObserver DriverMetrics::Observer() {
  return [this](const std::string& operation, OperationStatus status, double seconds) {
    Operation(operation, status, seconds);
  };
}

void DriverMetrics::Published(const std::vector<inventory::Device>& devices) {
  const auto total = static_cast<double>(devices.size());
  published_.Set(total);
  driver_published_.Set(total, {"total"});
  driver_published_.Set(static_cast<double>(std::count_if(devices.begin(), devices.end(), RdmaCapable)), {"rdma"});
}

void DriverMetrics::PublishConfirmed(double unix_seconds) {
  last_published_.Set(unix_seconds);
  driver_last_published_.Set(unix_seconds);
}

}  // namespace dranet::daemon
