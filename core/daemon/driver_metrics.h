#pragma once
// core/daemon/driver_metrics.h — the operation and publishing metrics of
// dranetd, in two sets of families recorded from the same events:
//
//   ours     dranet_operations_total{operation,result}, dranet_operation_
//            duration_seconds{operation}, dranet_published_devices,
//            dranet_last_published_time_seconds
//   DRANET's dranet_driver_dra_plugin_requests_total{method,status} and
//            _latency_seconds{method}, dranet_driver_nri_plugin_requests_
//            total{method,status} and _latency_seconds{method,status},
//            dranet_driver_published_devices_total{feature},
//            dranet_driver_last_published_time_seconds — same names, types,
//            labels and label values as DRANET, so its dashboards and alerts
//            keep working.
//
// Thread-safe (the registry is).
#include <string>
#include <vector>

#include "base/metrics.h"
#include "inventory/device.h"

namespace dranet::daemon {

class DriverMetrics {
 public:
  explicit DriverMetrics(MetricsRegistry& registry);

  // One finished operation (OperationObserver). Kubelet calls
  // (PrepareResourceClaims, UnprepareResourceClaims) and the NRI pod and
  // container hooks also count in DRANET's families; per-claim prepares
  // and other NRI requests (Configure, Synchronize) only in ours.
  void Operation(const std::string& operation, OperationStatus status, double seconds);
  OperationObserver Observer();

  // The devices of the last discovery, as they are published: all, and
  // those with dra.net/rdma true.
  void Published(const std::vector<inventory::Device>& devices);
  // The API server confirmed the node's slices at `unix_seconds`.
  void PublishConfirmed(double unix_seconds);

 private:
  MetricFamily& operations_;
  MetricFamily& operation_seconds_;
  MetricFamily& published_;
  MetricFamily& last_published_;
  MetricFamily& dra_requests_;
  MetricFamily& dra_seconds_;
  MetricFamily& nri_requests_;
  MetricFamily& nri_seconds_;
  MetricFamily& driver_published_;
  MetricFamily& driver_last_published_;
};

}  // namespace dranet::daemon
