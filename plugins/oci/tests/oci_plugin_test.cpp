// The oci plugin .so through the plugin host, on the OCI GB200 and H100 node
// snapshots, with OCI IMDS v2 faked on 127.0.0.1.
#include <fstream>
#include <gtest/gtest.h>

#include "fake_metadata_server.h"
#include "plugin_fixture.h"

namespace {

namespace fs = std::filesystem;
using dranet::fakes::FakeMetadataServer;
using dranet::fakes::MetadataFault;
using dranet::plugins::PluginOutcome;

const fs::path kNodes = fs::path(DRANET_TEST_NODES_DIR);
const char* const kAttrs[] = {"oke.dra.net/hpcIslandId", "oke.dra.net/networkBlockId", "oke.dra.net/localBlockId",
                              "oke.dra.net/rackId", "oke.dra.net/gpuMemoryFabricId"};

class OciPluginTest : public dranet::plugins::testing::PluginFixture {
 protected:
  static std::map<std::string, std::string> Config(const FakeMetadataServer& server) {
    return {{"imds-endpoint", server.url()}, {"imds-timeout-ms", "500"}};
  }
  fs::path Imds(const std::string& host_json) {
    fs::path m = dir_ / "imds";
    fs::create_directories(m / "opc/v2/host");
    std::ofstream(m / "opc/v2/host/index") << host_json;
    return m;
  }
  static std::vector<dranet::inventory::Device> Rdma(int n) {
    std::vector<dranet::inventory::Device> out;
    for (int i = 0; i < n; ++i) out.push_back(Nic("0000:0c:00." + std::to_string(i), "mlx5_" + std::to_string(i)));
    return out;
  }
};

// The GB200 snapshot's host document has rdmaTopologyData: every OCID
// shortened to its last segment, rackId as given, on every device.
TEST_F(OciPluginTest, PublishesTopologyOnTheGb200Snapshot) {
  FakeMetadataServer imds(kNodes / "oci-gb200/metadata/oci");
  auto host = Load("oci", Config(imds), kNodes / "oci-gb200");
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  EXPECT_EQ(imds.Hits(), 0u) << "init must not touch IMDS";
  auto devices = Rdma(8);
  host->Annotate(devices);
  host->Annotate(devices);
  EXPECT_EQ(imds.Hits(), 1u) << "GET /opc/v2/host/ once per process";
  for (const auto& d : devices)
    for (const char* attr : kAttrs) {
      const std::string value = Str(d, attr);
      EXPECT_NE(value, "<absent>") << d.name << " " << attr << "\n" << Log();
      EXPECT_EQ(value.find('.'), std::string::npos) << attr << " " << value << ": an OCID suffix has no dot";
      EXPECT_LE(value.size(), 64u) << attr;
    }
}

// BM.GPU.H100.8 without topology data: networkBlockId and rackId only.
TEST_F(OciPluginTest, H100WithoutTopologyDataHasNetworkBlockAndRackOnly) {
  FakeMetadataServer imds(kNodes / "oci-h100/metadata/oci");
  auto host = Load("oci", Config(imds), kNodes / "oci-h100");
  auto devices = Rdma(2);
  host->Annotate(devices);
  EXPECT_TRUE(Has(devices[0], "oke.dra.net/networkBlockId")) << Log();
  EXPECT_TRUE(Has(devices[0], "oke.dra.net/rackId")) << Log();
  EXPECT_FALSE(Has(devices[0], "oke.dra.net/hpcIslandId"));
  EXPECT_FALSE(Has(devices[0], "oke.dra.net/localBlockId"));
  EXPECT_FALSE(Has(devices[0], "oke.dra.net/gpuMemoryFabricId"));
  EXPECT_NE(Log().find("no rdmaTopologyData"), std::string::npos) << Log();
}

TEST_F(OciPluginTest, OcidSuffixesAsDranetCutsThem) {
  Dmi("chassis_asset_tag", "OracleCloud.com");
  const std::string long_tail(70, 'x');
  FakeMetadataServer imds(Imds(R"({"networkBlockId":"ocid1.networkblock.oc1.iad.top","rackId":"a1b2c3",
    "rdmaTopologyData":{"customerHPCIslandId":"ocid1.hpcisland.oc1.iad.anuwcljrisland",
      "customerNetworkBlock":"ocid1.networkblock.oc1.iad.anuwcljrblock",
      "customerLocalBlock":"ocid1.localblock.oc1.iad.)" + long_tail + R"(",
      "customerGpuMemoryFabric":"","customerHostId":"ocid1.computebaremetalhost.oc1.iad.h"}})"));
  auto host = Load("oci", Config(imds));
  auto devices = Rdma(1);
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "oke.dra.net/hpcIslandId"), "anuwcljrisland") << Log();
  EXPECT_EQ(Str(devices[0], "oke.dra.net/networkBlockId"), "anuwcljrblock") << "the topology's block, not the host's";
  EXPECT_EQ(Str(devices[0], "oke.dra.net/localBlockId"), std::string(60, 'x')) << "the last 60 characters";
  EXPECT_EQ(Str(devices[0], "oke.dra.net/rackId"), "a1b2c3");
  EXPECT_FALSE(Has(devices[0], "oke.dra.net/gpuMemoryFabricId")) << "empty: not a GB200/GB300 shape";
}

TEST_F(OciPluginTest, FaultsAreOneLineAndTheNodeStillPublishes) {
  Dmi("chassis_asset_tag", "OracleCloud.com");
  MetadataFault status;
  status.status = 500;
  MetadataFault garbage;
  garbage.action = MetadataFault::Action::kGarbage;
  MetadataFault slow;
  slow.action = MetadataFault::Action::kServe;
  slow.delay = std::chrono::milliseconds(1500);
  struct Case {
    const char* name;
    std::string body;
    std::optional<MetadataFault> fault;
    const char* log;
  };
  const std::string good = R"({"networkBlockId":"nb","rackId":"r"})";
  for (const Case& c : {Case{"500", good, status, "HTTP 500"}, Case{"garbage", good, garbage, "invalid JSON"},
                        Case{"timeout", good, slow, "timed out"},
                        Case{"not an OCID", R"({"rdmaTopologyData":{"customerHPCIslandId":"island-7"}})", std::nullopt,
                             "customerHPCIslandId \\\"island-7\\\" is not an OCID"},
                        Case{"array", "[]", std::nullopt, "expected a JSON object"}}) {
    log_.str("");
    FakeMetadataServer imds(Imds(c.body));
    if (c.fault) imds.InjectFault(*c.fault);
    auto host = Load("oci", Config(imds));
    auto devices = Rdma(1);
    host->Annotate(devices);
    EXPECT_EQ(host->loaded_count(), 1u) << c.name;
    for (const char* attr : kAttrs) EXPECT_FALSE(Has(devices[0], attr)) << c.name << " " << attr;
    EXPECT_NE(Log().find("OCI IMDS unavailable"), std::string::npos) << c.name << ": " << Log();
    EXPECT_NE(Log().find(c.log), std::string::npos) << c.name << ": " << Log();
  }
}

TEST_F(OciPluginTest, BearerHeaderIsSent) {
  FakeMetadataServer imds(Imds(R"({"networkBlockId":"nb","rackId":"r"})"));
  EXPECT_EQ(dranet::plugins::CurlHttpGet(imds.url() + "/opc/v2/host/", {}, 2000).status, 401);
  Dmi("chassis_asset_tag", "OracleCloud.com");
  auto host = Load("oci", Config(imds));
  auto devices = Rdma(1);
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "oke.dra.net/rackId"), "r") << Log();
}

TEST_F(OciPluginTest, NotApplicableElsewhereWithoutARequest) {
  FakeMetadataServer imds(kNodes / "oci-gb200/metadata/oci");
  for (const char* node : {"a4-highgpu-8g", "nd-gb300-v6", "aws-p4d", "alibaba-gn8is"}) {
    auto host = Load("oci", Config(imds), kNodes / node);
    ASSERT_NE(Report(*host, "oci"), nullptr) << node;
    EXPECT_EQ(Report(*host, "oci")->outcome, PluginOutcome::kNotApplicable) << node;
  }
  EXPECT_EQ(imds.Hits(), 0u);
}

}  // namespace
