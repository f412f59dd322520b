// The alibaba plugin .so through the plugin host, on the ecs.gn8is node
// snapshot, with Alibaba's metadata service faked on 127.0.0.1 (token PUT
// first, every GET carrying it).
#include <fstream>
#include <gtest/gtest.h>

#include "fake_metadata_server.h"
#include "plugin_fixture.h"

namespace {

namespace fs = std::filesystem;
using dranet::fakes::FakeMetadataServer;
using dranet::fakes::MetadataFault;
using dranet::plugins::PluginOutcome;

const fs::path kGn8is = fs::path(DRANET_TEST_NODES_DIR) / "alibaba-gn8is";

class AlibabaPluginTest : public dranet::plugins::testing::PluginFixture {
 protected:
  static std::map<std::string, std::string> Config(const FakeMetadataServer& server) {
    return {{"metadata-endpoint", server.url()}, {"metadata-timeout-ms", "500"}};
  }
  fs::path Metadata(const std::string& type) {
    fs::path m = dir_ / "metadata";
    fs::create_directories(m / "latest/meta-data/instance");
    std::ofstream(m / "latest/meta-data/instance/instance-type") << type;
    return m;
  }
  // An eRDMA function with its class/infiniband link, as the erdma driver makes it.
  void Erdma(const std::string& bdf, const std::string& ibdev) {
    Pci(bdf, "pci0000:00", {}, 0x1ded, 0x107f, 0x020000, 0);
    fs::create_directories(root() / "sys/devices/pci0000:00" / bdf / "infiniband" / ibdev);
    fs::create_directories(root() / "sys/class/infiniband");
    fs::create_directory_symlink(fs::path("../../..") / bdf,
                                 root() / "sys/devices/pci0000:00" / bdf / "infiniband" / ibdev / "device");
    fs::create_directory_symlink(fs::path("../../devices/pci0000:00") / bdf / "infiniband" / ibdev,
                                 root() / "sys/class/infiniband" / ibdev);
  }
};

TEST_F(AlibabaPluginTest, PublishesInstanceTypeAndErdmaOnTheGn8isSnapshot) {
  FakeMetadataServer metadata(kGn8is / "metadata/alibaba");
  auto host = Load("alibaba", Config(metadata), kGn8is);
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  EXPECT_EQ(metadata.Hits(), 0u) << "init must not touch the metadata service";
  std::vector<dranet::inventory::Device> devices{Nic("0000:00:0b.0", "erdma_0"), Nic("0000:00:05.0", "", "eth0")};
  host->Annotate(devices);
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "alibaba.dra.net/instanceType"), "ecs.gn8is-2x.8xlarge") << Log();
  EXPECT_TRUE(Has(devices[0], "alibaba.dra.net/erdma"));
  EXPECT_EQ(Str(devices[1], "alibaba.dra.net/instanceType"), "ecs.gn8is-2x.8xlarge");
  EXPECT_FALSE(Has(devices[1], "alibaba.dra.net/erdma")) << "not an eRDMA function";
  EXPECT_EQ(metadata.Hits(), 2u) << "token PUT and instance-type GET, once per process";
  EXPECT_EQ(metadata.Hits("/latest/api/token"), 1u);
}

TEST_F(AlibabaPluginTest, MetadataFaultsKeepErdma) {
  Dmi("product_name", "Alibaba Cloud ECS");
  Erdma("0000:00:0b.0", "erdma_0");
  MetadataFault token;
  token.path_contains = "/latest/api/token";
  token.status = 403;
  MetadataFault slow;
  slow.path_contains = "instance-type";
  slow.action = MetadataFault::Action::kServe;
  slow.delay = std::chrono::milliseconds(1500);
  MetadataFault missing;
  missing.path_contains = "instance-type";
  missing.status = 404;
  struct Case {
    const char* name;
    std::string type;
    std::optional<MetadataFault> fault;
    const char* log;
  };
  for (const Case& c : {Case{"token", "ecs.gn8is-2x.8xlarge", token, "HTTP 403"},
                        Case{"timeout", "ecs.gn8is-2x.8xlarge", slow, "timed out"},
                        Case{"404", "ecs.gn8is-2x.8xlarge", missing, "HTTP 404"},
                        Case{"garbage", "ecs.gn8is\n<html>", std::nullopt, "not an instance type"}}) {
    log_.str("");
    FakeMetadataServer metadata(Metadata(c.type));
    if (c.fault) metadata.InjectFault(*c.fault);
    auto host = Load("alibaba", Config(metadata));
    std::vector<dranet::inventory::Device> devices{Nic("0000:00:0b.0", "erdma_0")};
    host->Annotate(devices);
    EXPECT_FALSE(Has(devices[0], "alibaba.dra.net/instanceType")) << c.name;
    EXPECT_TRUE(Has(devices[0], "alibaba.dra.net/erdma")) << c.name << ": sysfs needs no metadata";
    EXPECT_NE(Log().find("Alibaba Cloud metadata unavailable"), std::string::npos) << c.name << ": " << Log();
    EXPECT_NE(Log().find(c.log), std::string::npos) << c.name << ": " << Log();
  }
}

TEST_F(AlibabaPluginTest, NotApplicableElsewhereWithoutARequest) {
  FakeMetadataServer metadata(kGn8is / "metadata/alibaba");
  for (const char* node : {"a4-highgpu-8g", "nd-mi300x-v5", "aws-p4d", "oci-h100"}) {
    auto host = Load("alibaba", Config(metadata), fs::path(DRANET_TEST_NODES_DIR) / node);
    ASSERT_NE(Report(*host, "alibaba"), nullptr) << node;
    EXPECT_EQ(Report(*host, "alibaba")->outcome, PluginOutcome::kNotApplicable) << node;
  }
  EXPECT_EQ(metadata.Hits(), 0u);
}

// No DMI: the probe fails once, and then nothing is published, erdma
// included (the plugin is off: this is not known to be Alibaba Cloud).
TEST_F(AlibabaPluginTest, WithoutDmiAFailedProbeTurnsThePluginOff) {
  Erdma("0000:00:0b.0", "erdma_0");
  auto host = Load("alibaba", {{"metadata-endpoint", "http://127.0.0.1:9"}, {"retry-backoff-ms", "0"}});
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  std::vector<dranet::inventory::Device> devices{Nic("0000:00:0b.0", "erdma_0")};
  host->Annotate(devices);
  host->Annotate(devices);
  EXPECT_FALSE(Has(devices[0], "alibaba.dra.net/erdma"));
  EXPECT_NE(Log().find("not Alibaba Cloud: no DMI and the metadata probe failed"), std::string::npos) << Log();
}

}  // namespace
