// The kubelet's device health stream (dra-health v1 and v1alpha1) served by
// KubeletPlugin: advertised at registration, read by a real gRPC client over
// the DRA unix socket, as the kubelet's plugin manager reads it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <mutex>
#include <sstream>
#include <thread>

#include "dra_health_v1.grpc.pb.h"
#include "dra_health_v1alpha1.grpc.pb.h"
#include "integration_support.h"
#include "kube/api_client.h"
#include "kubelet/kubelet_plugin.h"
#include "state/checkpoint_store.h"

namespace dranet::kubelet {
namespace {

using namespace testing;
using namespace std::chrono_literals;

// A reporter whose report the test sets.
class SetReporter : public health::HealthReporter {
 public:
  health::HealthReport Current() const override {
    std::lock_guard lock(mu_);
    return report_;
  }
  bool WaitNewer(uint64_t generation, std::chrono::steady_clock::time_point deadline) const override {
    std::unique_lock lock(mu_);
    changed_.wait_until(lock, deadline, [&] { return report_.generation > generation; });
    return report_.generation > generation;
  }
  void Set(std::vector<std::pair<std::string, health::Verdict>> devices) {
    {
      std::lock_guard lock(mu_);
      report_.devices.clear();
      for (auto& [name, verdict] : devices)
        report_.devices.push_back({name, verdict, std::chrono::system_clock::from_time_t(1800000000), {}});
      ++report_.generation;
    }
    changed_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  health::HealthReport report_;
};

class HealthStreamTest : public ::testing::Test {
 protected:
  HealthStreamTest()
      : log_(log_text_),
        client_(LoopbackCluster(api_.url()), log_),
        reader_(client_, log_),
        kubelet_(KubeletOptions(dir_.path() / "kubelet/plugins_registry")) {
    state::CheckpointOptions state_options;
    state_options.state_dir = dir_.path() / "state";
    store_ = std::make_unique<state::CheckpointStore>(state_options, log_);
  }
  ~HealthStreamTest() override {
    kubelet_.Stop();
    if (plugin_) plugin_->Stop();
  }

  void StartPlugin(bool with_health) {
    KubeletPluginOptions options;
    options.node_name = kGb300Node;
    options.kubelet_root_dir = dir_.path() / "kubelet";
    options.host_root = Gb300Root();
    auto devices = std::make_shared<const std::vector<inventory::Device>>();
    plugin_ = std::make_unique<KubeletPlugin>(
        options, [devices] { return devices; }, ClaimLookupFrom(reader_), *store_, nullptr, log_);
    if (with_health) plugin_->SetHealthReporter(&reporter_);
    plugin_->Start();
    kubelet_.Start();
    ASSERT_TRUE(kubelet_.WaitForPlugin("dra.net", 20s));
  }

  std::shared_ptr<grpc::Channel> Channel() {
    return grpc::CreateChannel("unix://" + plugin_->dra_socket().string(), grpc::InsecureChannelCredentials());
  }

  TempDir dir_;
  std::ostringstream log_text_;
  Logger log_;
  fakes::FakeApiServer api_;
  kube::ApiClient client_;
  kube::ResourceClaimReader reader_;
  std::unique_ptr<state::CheckpointStore> store_;
  fakes::FakeKubelet kubelet_;
  SetReporter reporter_;
  std::unique_ptr<KubeletPlugin> plugin_;
};

TEST_F(HealthStreamTest, AdvertisedAtRegistrationBesideTheDraVersions) {
  StartPlugin(true);
  EXPECT_EQ(kubelet_.Plugin("dra.net")->supported_versions,
            (std::vector<std::string>{"v1.DRAPlugin", "v1beta1.DRAPlugin", "v1.DRAResourceHealth",
                                      "v1alpha1.DRAResourceHealth"}));
  EXPECT_EQ(kubelet_.Plugin("dra.net")->chosen_version, "v1.DRAPlugin");
}

TEST_F(HealthStreamTest, TheFullListAtOnceAndAgainOnEveryChange) {
  reporter_.Set({{"pci-0000-01-00-0", {health::Health::kHealthy, "", ""}},
                 {"pci-0000-02-00-0", {health::Health::kHealthy, "", ""}}});
  StartPlugin(true);
  auto stub = ::v1::DRAResourceHealth::NewStub(Channel());
  grpc::ClientContext context;
  auto stream = stub->NodeWatchResources(&context, ::v1::NodeWatchResourcesRequest{});
  ::v1::NodeWatchResourcesResponse response;
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.devices_size(), 2);
  EXPECT_EQ(response.devices(0).device().pool_name(), kGb300Node);
  EXPECT_EQ(response.devices(0).device().device_name(), "pci-0000-01-00-0");
  EXPECT_EQ(response.devices(0).health(), ::v1::HEALTHY);
  EXPECT_EQ(response.devices(0).last_updated_time(), 1800000000);
  EXPECT_EQ(response.devices(0).health_check_timeout_seconds(), kHealthCheckTimeoutSeconds);
  EXPECT_EQ(response.devices(0).message(), "");

  reporter_.Set({{"pci-0000-01-00-0", {health::Health::kUnhealthy, "netdev eth1 on the host has no carrier", "NoCarrier"}},
                 {"pci-0000-02-00-0", {health::Health::kHealthy, "", ""}}});
  const auto asked = std::chrono::steady_clock::now();
  ASSERT_TRUE(stream->Read(&response));
  // Sent because it changed, not because the resend came due.
  EXPECT_LT(std::chrono::steady_clock::now() - asked, kHealthResendPeriod);
  ASSERT_EQ(response.devices_size(), 2);
  EXPECT_EQ(response.devices(0).health(), ::v1::UNHEALTHY);
  EXPECT_EQ(response.devices(0).message(), "netdev eth1 on the host has no carrier");

  // The plugin stopping ends the stream cleanly.
  plugin_->Stop();
  EXPECT_FALSE(stream->Read(&response));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(HealthStreamTest, Version1alpha1CarriesTheSameList) {
  reporter_.Set({{"pci-0000-01-00-0", {health::Health::kUnhealthy, "RDMA device mlx5_0 is gone", "RdmaDeviceGone"}}});
  StartPlugin(true);
  auto stub = ::v1alpha1::DRAResourceHealth::NewStub(Channel());
  grpc::ClientContext context;
  auto stream = stub->NodeWatchResources(&context, ::v1alpha1::NodeWatchResourcesRequest{});
  ::v1alpha1::NodeWatchResourcesResponse response;
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.devices_size(), 1);
  EXPECT_EQ(response.devices(0).health(), ::v1alpha1::UNHEALTHY);
  EXPECT_EQ(response.devices(0).message(), "RDMA device mlx5_0 is gone");
  context.TryCancel();
}

TEST_F(HealthStreamTest, WithoutAReporterNothingIsAdvertisedOrServed) {
  StartPlugin(false);
  EXPECT_EQ(kubelet_.Plugin("dra.net")->supported_versions,
            (std::vector<std::string>{"v1.DRAPlugin", "v1beta1.DRAPlugin"}));
  auto stub = ::v1::DRAResourceHealth::NewStub(Channel());
  grpc::ClientContext context;
  auto stream = stub->NodeWatchResources(&context, ::v1::NodeWatchResourcesRequest{});
  ::v1::NodeWatchResourcesResponse response;
  EXPECT_FALSE(stream->Read(&response));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

}  // namespace
}  // namespace dranet::kubelet
