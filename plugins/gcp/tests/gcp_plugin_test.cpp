// The gcp plugin .so through the plugin host, on the A4 (a4-highgpu-8g)
// node snapshot, with the metadata server faked on 127.0.0.1.
#include <fstream>
#include <gtest/gtest.h>

#include "fake_metadata_server.h"
#include "plugin_fixture.h"
#include "plugins/host_services.h"

namespace {

namespace fs = std::filesystem;
using dranet::fakes::FakeMetadataServer;
using dranet::fakes::MetadataFault;
using dranet::plugins::PluginOutcome;

const fs::path kA4 = fs::path(DRANET_TEST_NODES_DIR) / "a4-highgpu-8g";
const char* kInstance = "computeMetadata/v1/instance/";

class GcpPluginTest : public dranet::plugins::testing::PluginFixture {
 protected:
  std::map<std::string, std::string> Config(const FakeMetadataServer& server) {
    return {{"metadata-endpoint", server.url()}};
  }
  // The A4 RDMA NICs as the inventory reports them (MACs from the snapshot).
  static std::vector<dranet::inventory::Device> A4Nics() {
    const char* pci[] = {"0000:09:00.0", "0000:0d:00.0", "0000:14:00.0", "0000:18:00.0",
                         "0000:b9:00.0", "0000:bd:00.0", "0000:c4:00.0", "0000:c8:00.0"};
    std::vector<dranet::inventory::Device> out;
    for (int n = 0; n < 8; ++n)
      out.push_back(Nic(pci[n], "mlx5_" + std::to_string(n), "gpu" + std::to_string(n) + "rdma0",
                        "9a:41:2e:4f:8" + std::to_string(n) + ":16"));
    out.push_back(Nic("0000:00:05.0", "", "eth1", "42:01:0a:80:00:47"));
    return out;
  }
  // A metadata tree of our own under the temp dir.
  fs::path Metadata(const std::string& interfaces_json, const std::string& physical_host) {
    fs::path m = dir_ / "metadata";
    fs::create_directories(m / kInstance / "network-interfaces");
    fs::create_directories(m / kInstance / "attributes");
    std::ofstream(m / kInstance / "machine-type") << "projects/42/machineTypes/a3-ultragpu-8g";
    std::ofstream(m / kInstance / "network-interfaces/index") << interfaces_json;
    if (!physical_host.empty()) std::ofstream(m / kInstance / "attributes/physical_host") << physical_host;
    return m;
  }
};

TEST_F(GcpPluginTest, PublishesMetadataAndGpuIndexOnTheA4Snapshot) {
  FakeMetadataServer metadata(kA4 / "metadata/gce");
  auto host = Load("gcp", Config(metadata), kA4);
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  EXPECT_EQ(metadata.Hits(), 0u) << "init must not touch the metadata server";

  auto devices = A4Nics();
  host->Annotate(devices);
  for (int n = 0; n < 8; ++n) {
    const auto& d = devices[static_cast<std::size_t>(n)];
    EXPECT_EQ(Str(d, "gce.dra.net/gpuIndex"), std::to_string(n)) << d.name;
    EXPECT_EQ(Str(d, "gce.dra.net/machineType"), "a4-highgpu-8g") << d.name;
    EXPECT_EQ(Str(d, "gce.dra.net/networkName"), "a4-rdma-roce") << d.name;
    EXPECT_EQ(Str(d, "gce.dra.net/networkProjectNumber"), "123456789012") << d.name;
    EXPECT_EQ(Str(d, "gce.dra.net/block"), "c2a4d6e8f0b1") << d.name;
    EXPECT_EQ(Str(d, "gce.dra.net/subBlock"), "1f3e5d7c") << d.name;
    EXPECT_EQ(Str(d, "gce.dra.net/host"), "0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d") << d.name;
    EXPECT_FALSE(Has(d, "gce.dra.net/ipAliases")) << "no aliases in the snapshot";
  }
  const auto& eth1 = devices[8];
  EXPECT_FALSE(Has(eth1, "gce.dra.net/gpuIndex"));
  EXPECT_EQ(Str(eth1, "gce.dra.net/networkName"), "gvnic-net-1");

  host->Annotate(devices);
  EXPECT_EQ(metadata.Hits(), 3u) << "machine-type, network-interfaces, physical_host, once per process";
  EXPECT_EQ(metadata.Hits("network-interfaces/?recursive=true&alt=json"), 1u);
  for (const auto& r : metadata.Requests()) EXPECT_EQ(r.status, 200) << r.target << ": Metadata-Flavor sent";
}

TEST_F(GcpPluginTest, IpAliasesMissingPhysicalHostAndOddNetworks) {
  FakeMetadataServer metadata(Metadata(R"([
    {"mac":"42:01:0a:80:00:46","network":"projects/628944397724/networks/default",
     "ipAliases":["10.24.3.0/24","10.24.4.0/24"]},
    {"mac":"42:01:0a:80:00:47","network":"global/networks/odd","ipAliases":[]}])",
                                       ""));
  Dmi("product_name", "Google Compute Engine");
  auto host = Load("gcp", Config(metadata));
  std::vector<dranet::inventory::Device> devices{Nic("0000:00:04.0", "", "eth0", "42:01:0a:80:00:46"),
                                                 Nic("0000:00:05.0", "", "eth1", "42:01:0a:80:00:47"),
                                                 Nic("0000:00:06.0", "mlx5_0")};
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "gce.dra.net/ipAliases"), "10.24.3.0/24,10.24.4.0/24");
  EXPECT_EQ(Str(devices[0], "gce.dra.net/networkName"), "default");
  EXPECT_EQ(Str(devices[0], "gce.dra.net/networkProjectNumber"), "628944397724");
  EXPECT_FALSE(Has(devices[0], "gce.dra.net/block")) << "physical_host is optional";
  EXPECT_EQ(Str(devices[1], "gce.dra.net/machineType"), "a3-ultragpu-8g");
  EXPECT_FALSE(Has(devices[1], "gce.dra.net/networkName"));
  EXPECT_NE(Log().find("global/networks/odd"), std::string::npos) << Log();
  EXPECT_EQ(Str(devices[2], "gce.dra.net/machineType"), "a3-ultragpu-8g") << "devices without MAC get node facts";
  EXPECT_FALSE(Has(devices[2], "gce.dra.net/networkName"));
}

TEST_F(GcpPluginTest, MetadataDownKeepsGpuIndexAndAsksOnce) {
  FakeMetadataServer metadata(kA4 / "metadata/gce");
  MetadataFault drop;
  drop.action = MetadataFault::Action::kDrop;
  metadata.InjectFault(drop);
  auto host = Load("gcp", Config(metadata), kA4);
  auto devices = A4Nics();
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[3], "gce.dra.net/gpuIndex"), "3") << "the naming contract needs no metadata";
  for (const auto& d : devices) EXPECT_FALSE(Has(d, "gce.dra.net/machineType")) << d.name;
  EXPECT_EQ(metadata.Hits(), 1u);
  EXPECT_NE(Log().find("GCE metadata unavailable"), std::string::npos) << Log();
}

TEST_F(GcpPluginTest, MalformedInterfacesJsonIsAClearFailure) {
  FakeMetadataServer metadata(Metadata("[{\"mac\": ", "/a/b/c"));
  Dmi("product_name", "Google Compute Engine");
  auto host = Load("gcp", Config(metadata));
  std::vector<dranet::inventory::Device> devices{Nic("0000:00:04.0", "", "eth0", "42:01:0a:80:00:46")};
  host->Annotate(devices);
  EXPECT_FALSE(Has(devices[0], "gce.dra.net/machineType"));
  EXPECT_NE(Log().find("invalid JSON"), std::string::npos) << Log();
}

TEST_F(GcpPluginTest, FakeRejectsRequestsWithoutMetadataFlavor) {
  FakeMetadataServer metadata(kA4 / "metadata/gce");
  auto r = dranet::plugins::CurlHttpGet(metadata.url() + "/computeMetadata/v1/instance/machine-type", {}, 2000);
  EXPECT_EQ(r.status, 403);
}

TEST_F(GcpPluginTest, NotApplicableOffGce) {
  FakeMetadataServer metadata(kA4 / "metadata/gce");
  auto host = Load("gcp", Config(metadata), fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6");
  EXPECT_EQ(host->loaded_count(), 0u);
  ASSERT_NE(Report(*host, "gcp"), nullptr);
  EXPECT_EQ(Report(*host, "gcp")->outcome, PluginOutcome::kNotApplicable);
  EXPECT_EQ(metadata.Hits(), 0u);
}

}  // namespace
