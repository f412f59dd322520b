// The azure plugin .so through the plugin host, on the ND GB300-v6 and
// ND MI300X-v5 node snapshots, with IMDS served by the fake metadata
// service on 127.0.0.1 (never the real link-local address).
#include <gtest/gtest.h>

#include "fake_metadata_server.h"
#include "plugin_fixture.h"
#include "plugins/host_services.h"

namespace {

namespace fs = std::filesystem;
using dranet::fakes::FakeMetadataServer;
using dranet::fakes::MetadataFault;
using dranet::plugins::PluginOutcome;

const fs::path kGb300 = fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6";
const fs::path kMi300x = fs::path(DRANET_TEST_NODES_DIR) / "nd-mi300x-v5";

class AzurePluginTest : public dranet::plugins::testing::PluginFixture {
 protected:
  std::map<std::string, std::string> Config(const FakeMetadataServer& server) {
    return {{"imds-endpoint", server.url()}, {"imds-timeout-ms", "1000"}};
  }
  std::vector<dranet::inventory::Device> Gb300Nics() {
    return {Nic("0101:00:00.0", "mlx5_0"), Nic("0102:00:00.0", "mlx5_1"), Nic("0103:00:00.0", "mlx5_2"),
            Nic("0104:00:00.0", "mlx5_3"), Nic("", "", "eth0", "00:0d:3a:6f:5a:3c")};
  }
};

TEST_F(AzurePluginTest, PublishesImdsFactsOnEveryDeviceFromOneRequest) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  auto host = Load("azure", Config(imds), kGb300);
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  EXPECT_EQ(imds.Hits(), 0u) << "init must not touch IMDS";

  auto devices = Gb300Nics();
  host->Annotate(devices);
  for (const auto& d : devices) {
    EXPECT_EQ(Str(d, "azure.dra.net/vmSize"), "Standard_ND128isr_GB300_v6") << d.name;
    EXPECT_EQ(Str(d, "azure.dra.net/placementGroupId"), "c6c749e8-a38b-470e-8c94-2a7d00001bf0") << d.name;
    EXPECT_EQ(Str(d, "azure.dra.net/interconnectGroupId"), "2deed8b4-d1e9-42be-a40a-9882201aa9f5") << d.name;
    EXPECT_EQ(Str(d, "azure.dra.net/interconnectSubgroupId"), "0f0ba375-aaf1-4ac8-a579-a3b180d47de5") << d.name;
  }
  EXPECT_FALSE(Has(devices[0], "azure.dra.net/subnet")) << "IB VFs are not in the IMDS network list";
  EXPECT_EQ(Str(devices[4], "azure.dra.net/subnet"), "10.224.0.0/16") << "front-end NIC matched by MAC";

  // Cached for the process lifetime: later passes do not ask again.
  host->Annotate(devices);
  auto more = Gb300Nics();
  host->Annotate(more);
  EXPECT_EQ(Str(more[2], "azure.dra.net/vmSize"), "Standard_ND128isr_GB300_v6");
  ASSERT_EQ(imds.Hits(), 1u);
  EXPECT_EQ(imds.Requests()[0].target, "/metadata/instance?api-version=2025-11-11&format=json");
  EXPECT_EQ(imds.Requests()[0].status, 200) << "the plugin sends Metadata: true";
  EXPECT_NE(Log().find("Azure IMDS: vmSize=Standard_ND128isr_GB300_v6"), std::string::npos) << Log();
}

TEST_F(AzurePluginTest, OmitsInterconnectIdsWhenImdsDoesNotReportThem) {
  FakeMetadataServer imds(kMi300x / "metadata/azure");
  auto host = Load("azure", Config(imds), kMi300x);
  std::vector<dranet::inventory::Device> devices{Nic("0101:00:00.0", "mlx5_0"), Nic("0108:00:00.0", "mlx5_7")};
  host->Annotate(devices);
  for (const auto& d : devices) {
    EXPECT_EQ(Str(d, "azure.dra.net/vmSize"), "Standard_ND96isr_MI300X_v5");
    EXPECT_EQ(Str(d, "azure.dra.net/placementGroupId"), "c0104dd3-6665-45bf-afde-b2f35e590b93");
    EXPECT_FALSE(Has(d, "azure.dra.net/interconnectGroupId"));
    EXPECT_FALSE(Has(d, "azure.dra.net/interconnectSubgroupId"));
  }
}

TEST_F(AzurePluginTest, FakeRejectsRequestsWithoutTheMetadataHeader) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  auto r = dranet::plugins::CurlHttpGet(imds.url() + "/metadata/instance?api-version=2025-11-11&format=json", {}, 2000);
  EXPECT_EQ(r.status, 400);
  auto host = Load("azure", Config(imds), kGb300);
  auto devices = Gb300Nics();
  host->Annotate(devices);
  EXPECT_TRUE(Has(devices[0], "azure.dra.net/vmSize")) << "the plugin's request carries the header";
}

struct FaultCase {
  const char* name;
  MetadataFault fault;
  const char* log_says;
};

class AzureImdsFaultTest : public AzurePluginTest, public ::testing::WithParamInterface<FaultCase> {};

TEST_P(AzureImdsFaultTest, DevicesArePublishedWithoutAzureAttributesAndImdsIsAskedOnce) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  imds.InjectFault(GetParam().fault);
  auto config = Config(imds);
  config["imds-timeout-ms"] = "200";
  auto host = Load("azure", config, kGb300);
  auto devices = Gb300Nics();
  host->Annotate(devices);
  for (const auto& d : devices) {
    EXPECT_EQ(d.attributes.size(), d.name == "eth0" ? 2u : 1u) << d.name << " keeps only its own attributes";
    EXPECT_FALSE(Has(d, "azure.dra.net/vmSize"));
  }
  EXPECT_EQ(imds.Hits(), 1u) << "one failed read per backoff period, not one per device";
  EXPECT_NE(Log().find("Azure IMDS unavailable"), std::string::npos) << Log();
  EXPECT_NE(Log().find(GetParam().log_says), std::string::npos) << Log();
  EXPECT_EQ(Report(*host, "azure")->outcome, PluginOutcome::kLoaded) << "a metadata failure is not a plugin failure";
}

MetadataFault Fault(MetadataFault::Action action, int status = 500, int delay_ms = 0) {
  MetadataFault f;
  f.action = action;
  f.status = status;
  f.delay = std::chrono::milliseconds(delay_ms);
  return f;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, AzureImdsFaultTest,
    ::testing::Values(FaultCase{"http500", Fault(MetadataFault::Action::kStatus, 500), "HTTP 500"},
                      FaultCase{"http404", Fault(MetadataFault::Action::kStatus, 404), "HTTP 404"},
                      FaultCase{"down", Fault(MetadataFault::Action::kDrop), "/metadata/instance"},
                      FaultCase{"slow", Fault(MetadataFault::Action::kServe, 200, 3000), "timed out"},
                      FaultCase{"garbage", Fault(MetadataFault::Action::kGarbage), "invalid JSON"},
                      FaultCase{"huge", Fault(MetadataFault::Action::kHuge), "larger than"}),
    [](const ::testing::TestParamInfo<FaultCase>& param_info) { return std::string(param_info.param.name); });

TEST_F(AzurePluginTest, RetriesAFailedReadAfterTheBackoff) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  MetadataFault once = Fault(MetadataFault::Action::kStatus, 500);
  once.times = 1;
  imds.InjectFault(once);
  auto config = Config(imds);
  config["retry-backoff-ms"] = "0";
  auto host = Load("azure", config, kGb300);
  std::vector<dranet::inventory::Device> first{Nic("0101:00:00.0", "mlx5_0")};
  host->Annotate(first);
  EXPECT_FALSE(Has(first[0], "azure.dra.net/vmSize"));
  std::vector<dranet::inventory::Device> second{Nic("0101:00:00.0", "mlx5_0")};
  host->Annotate(second);
  EXPECT_EQ(Str(second[0], "azure.dra.net/vmSize"), "Standard_ND128isr_GB300_v6");
  EXPECT_EQ(imds.Hits(), 2u);
}

TEST_F(AzurePluginTest, NotApplicableOffAzureWithoutAnyRequest) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  Dmi("sys_vendor", "Google");
  Dmi("product_name", "Google Compute Engine");
  auto host = Load("azure", Config(imds));
  EXPECT_EQ(host->loaded_count(), 0u);
  ASSERT_NE(Report(*host, "azure"), nullptr);
  EXPECT_EQ(Report(*host, "azure")->outcome, PluginOutcome::kNotApplicable);
  EXPECT_NE(Report(*host, "azure")->reason.find("not an Azure VM"), std::string::npos);
  EXPECT_EQ(imds.Hits(), 0u);
}

TEST_F(AzurePluginTest, RejectsMalformedConfiguration) {
  FakeMetadataServer imds(kGb300 / "metadata/azure");
  auto config = Config(imds);
  config["imds-timeout-ms"] = "soon";
  auto host = Load("azure", config, kGb300);
  EXPECT_EQ(host->loaded_count(), 0u);
  EXPECT_NE(Report(*host, "azure")->reason.find("imds-timeout-ms=\"soon\""), std::string::npos)
      << Report(*host, "azure")->reason;
}

}  // namespace
