// dranetd's operation and publishing metrics: ours, and DRANET's families
// with DRANET's names, types, labels and label values.
#include "daemon/driver_metrics.h"

#include <gtest/gtest.h>

namespace dranet::daemon {
namespace {

inventory::Device DeviceWithRdma(const std::string& name, std::optional<bool> rdma) {
  inventory::Device d;
  d.name = name;
  if (rdma) d.attributes["dra.net/rdma"] = *rdma;
  return d;
}

TEST(DriverMetrics, KubeletCallsCountInBothFamiliesClaimPreparesOnlyInOurs) {
  MetricsRegistry registry;
  DriverMetrics metrics(registry);
  auto observe = metrics.Observer();
  observe("PrepareResourceClaims", OperationStatus::kSuccess, 0.02);
  observe("PrepareResourceClaims", OperationStatus::kFailed, 0.03);
  observe("UnprepareResourceClaims", OperationStatus::kSuccess, 0.001);
  observe("prepare", OperationStatus::kSuccess, 0.02);
  const std::string out = registry.Render();
  EXPECT_NE(out.find("# TYPE dranet_driver_dra_plugin_requests_total counter\n"), std::string::npos) << out;
  EXPECT_NE(out.find("dranet_driver_dra_plugin_requests_total{method=\"PrepareResourceClaims\",status=\"success\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("dranet_driver_dra_plugin_requests_total{method=\"PrepareResourceClaims\",status=\"failed\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("dranet_driver_dra_plugin_requests_total{method=\"UnprepareResourceClaims\",status=\"success\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(out.find("dranet_driver_dra_plugin_requests_total{method=\"prepare\""), std::string::npos);
  // DRANET's latency histogram: method only, the client library's default buckets.
  EXPECT_NE(out.find("# TYPE dranet_driver_dra_plugin_requests_latency_seconds histogram\n"), std::string::npos);
  EXPECT_NE(out.find("dranet_driver_dra_plugin_requests_latency_seconds_bucket{method=\"PrepareResourceClaims\",le=\"0.025\"} 1\n"),
            std::string::npos) << out;
  EXPECT_NE(out.find("dranet_driver_dra_plugin_requests_latency_seconds_bucket{method=\"PrepareResourceClaims\",le=\"0.05\"} 2\n"),
            std::string::npos);
  EXPECT_NE(out.find("dranet_driver_dra_plugin_requests_latency_seconds_count{method=\"PrepareResourceClaims\"} 2\n"),
            std::string::npos);
  // Ours has every operation.
  EXPECT_NE(out.find("dranet_operations_total{operation=\"prepare\",result=\"success\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("dranet_operations_total{operation=\"PrepareResourceClaims\",result=\"failed\"} 1\n"),
            std::string::npos);
}

TEST(DriverMetrics, NriHooksCountWithNoopAndOtherRequestsOnlyInOurs) {
  MetricsRegistry registry;
  DriverMetrics metrics(registry);
  metrics.Operation("RunPodSandbox", OperationStatus::kNoop, 0.0001);
  metrics.Operation("RunPodSandbox", OperationStatus::kSuccess, 0.2);
  metrics.Operation("StopPodSandbox", OperationStatus::kFailed, 0.01);
  metrics.Operation("RemovePodSandbox", OperationStatus::kNoop, 0.0001);
  metrics.Operation("CreateContainer", OperationStatus::kSuccess, 0.0002);
  metrics.Operation("Synchronize", OperationStatus::kSuccess, 0.001);
  const std::string out = registry.Render();
  for (const char* series : {"{method=\"RunPodSandbox\",status=\"noop\"} 1\n", "{method=\"RunPodSandbox\",status=\"success\"} 1\n",
                             "{method=\"StopPodSandbox\",status=\"failed\"} 1\n", "{method=\"RemovePodSandbox\",status=\"noop\"} 1\n",
                             "{method=\"CreateContainer\",status=\"success\"} 1\n"})
    EXPECT_NE(out.find(std::string("dranet_driver_nri_plugin_requests_total") + series), std::string::npos) << series << out;
  EXPECT_EQ(out.find("dranet_driver_nri_plugin_requests_total{method=\"Synchronize\""), std::string::npos);
  EXPECT_NE(out.find("dranet_operations_total{operation=\"Synchronize\",result=\"success\"} 1\n"), std::string::npos);
  // DRANET labels its NRI latency by status too.
  EXPECT_NE(out.find("dranet_driver_nri_plugin_requests_latency_seconds_count{method=\"RunPodSandbox\",status=\"success\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("dranet_driver_nri_plugin_requests_latency_seconds_count{method=\"RunPodSandbox\",status=\"noop\"} 1\n"),
            std::string::npos);
}

TEST(DriverMetrics, PublishedDevicesByFeatureAndTheLastConfirmation) {
  MetricsRegistry registry;
  DriverMetrics metrics(registry);
  metrics.Published({DeviceWithRdma("a", true), DeviceWithRdma("b", false), DeviceWithRdma("c", std::nullopt),
                     DeviceWithRdma("d", true)});
  metrics.PublishConfirmed(1700000000);
  std::string out = registry.Render();
  EXPECT_NE(out.find("# TYPE dranet_driver_published_devices_total gauge\n"), std::string::npos) << out;
  EXPECT_NE(out.find("dranet_driver_published_devices_total{feature=\"total\"} 4\n"), std::string::npos);
  EXPECT_NE(out.find("dranet_driver_published_devices_total{feature=\"rdma\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("dranet_published_devices 4\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE dranet_driver_last_published_time_seconds gauge\ndranet_driver_last_published_time_seconds 1700000000\n"),
            std::string::npos);
  EXPECT_NE(out.find("dranet_last_published_time_seconds 1700000000\n"), std::string::npos);
  // A later discovery replaces the counts.
  metrics.Published({DeviceWithRdma("b", false)});
  out = registry.Render();
  EXPECT_NE(out.find("dranet_driver_published_devices_total{feature=\"rdma\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find("dranet_driver_published_devices_total{feature=\"total\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace dranet::daemon
