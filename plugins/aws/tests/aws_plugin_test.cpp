// The aws plugin .so through the plugin host, on the p4d.24xlarge node
// snapshot and hand-built Trainium nodes, with IMDSv2 faked on 127.0.0.1
// (token PUT first, every GET carrying it).
#include <fstream>
#include <gtest/gtest.h>

#include "fake_metadata_server.h"
#include "plugin_fixture.h"

namespace {

namespace fs = std::filesystem;
using dranet::fakes::FakeMetadataServer;
using dranet::fakes::MetadataFault;
using dranet::plugins::PluginOutcome;

const fs::path kP4d = fs::path(DRANET_TEST_NODES_DIR) / "aws-p4d";

class AwsPluginTest : public dranet::plugins::testing::PluginFixture {
 protected:
  static std::map<std::string, std::string> Config(const FakeMetadataServer& server) {
    return {{"imds-endpoint", server.url()}, {"imds-timeout-ms", "500"}};
  }
  static dranet::inventory::Device Efa(const std::string& pci, const std::string& rdma) {
    auto d = Nic(pci, rdma);
    d.driver = "efa";
    return d;
  }
  // The p4d's EFA and ENA functions as discovery reports them.
  static std::vector<dranet::inventory::Device> P4dDevices() {
    std::vector<dranet::inventory::Device> out{Efa("0000:10:1b.0", "rdmap16s27"), Efa("0000:20:1b.0", "rdmap32s27"),
                                               Efa("0000:90:1b.0", "rdmap144s27"), Efa("0000:a0:1b.0", "rdmap160s27")};
    auto ena = Nic("0000:20:01.0", "", "ens65", "0e:96:fe:e8:a3:f5");
    ena.driver = "ena";
    out.push_back(ena);
    return out;
  }
  // A metadata tree of our own: identity document and placement files.
  fs::path Imds(const std::string& document, const std::string& group = "") {
    fs::path m = dir_ / "imds";
    fs::create_directories(m / "latest/dynamic/instance-identity");
    fs::create_directories(m / "latest/meta-data/placement");
    std::ofstream(m / "latest/dynamic/instance-identity/document") << document;
    std::ofstream(m / "latest/meta-data/placement/availability-zone-id") << "use2-az1\n";
    if (!group.empty()) std::ofstream(m / "latest/meta-data/placement/group-name") << group;
    return m;
  }
  void Trainium(const std::string& type) {
    Dmi("sys_vendor", "Amazon EC2");
    Dmi("product_name", type);
  }
};

TEST_F(AwsPluginTest, PublishesImdsFactsOnTheP4dSnapshot) {
  FakeMetadataServer imds(kP4d / "metadata/aws");
  auto host = Load("aws", Config(imds), kP4d);
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  EXPECT_EQ(imds.Hits(), 0u) << "init must not touch IMDS";

  auto devices = P4dDevices();
  host->Annotate(devices);
  for (const auto& d : devices) {
    EXPECT_EQ(Str(d, "aws.dra.net/instanceType"), "p4d.24xlarge") << d.name << "\n" << Log();
    EXPECT_EQ(Str(d, "aws.dra.net/region"), "us-east-1") << d.name;
    EXPECT_EQ(Str(d, "aws.dra.net/availabilityZone").rfind("us-east-1", 0), 0u) << d.name;
    EXPECT_TRUE(Has(d, "aws.dra.net/availabilityZoneId")) << d.name;
    EXPECT_TRUE(Has(d, "aws.dra.net/placementGroup")) << d.name;
    EXPECT_FALSE(Has(d, "aws.dra.net/partitionNumber")) << "not a partition placement group";
    EXPECT_FALSE(Has(d, "resource.aws.com/devicegroup1_id")) << "p4d is not a Trainium instance";
  }
  EXPECT_EQ(imds.Hits("/latest/api/token"), 1u);
  const auto first_pass = imds.Hits();
  host->Annotate(devices);
  EXPECT_EQ(imds.Hits(), first_pass) << "read once per process";
  for (const auto& r : imds.Requests())
    EXPECT_TRUE(r.status == 200 || r.status == 404) << r.target << ": " << r.status << " (token sent?)";
}

// The values the Neuron EFA lookup publishes for trn2's first EFA (its own
// test vector: devicegroup4/8/16 of 0000:c9:00.0), from sysfs and the DMI
// instance type only: IMDS down changes nothing.
TEST_F(AwsPluginTest, TrainiumEfaDeviceGroupsNeedNoImds) {
  Trainium("trn2.48xlarge");
  auto host = Load("aws", {{"imds-endpoint", "http://127.0.0.1:9"}, {"imds-timeout-ms", "200"}});
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  auto ena = Nic("0000:c9:00.1", "", "ens32");
  ena.driver = "ena";
  std::vector<dranet::inventory::Device> devices{Efa("0000:c9:00.0", "rdmap201s0"), Efa("0000:f6:00.0", "rdmap246s0"),
                                                 ena, Efa("0000:01:00.0", "rdmap1s0")};
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "resource.aws.com/devicegroup1_id"), "0000:c9:00.0") << Log();
  EXPECT_EQ(Str(devices[0], "resource.aws.com/devicegroup4_id"), "13713e551cd37c19");
  EXPECT_EQ(Str(devices[0], "resource.aws.com/devicegroup8_id"), "3593812b8066a078");
  EXPECT_EQ(Str(devices[0], "resource.aws.com/devicegroup16_id"), "821d14afaf11327d");
  EXPECT_EQ(Str(devices[1], "resource.aws.com/devicegroup1_id"), "0000:f6:00.0");
  EXPECT_EQ(Str(devices[1], "resource.aws.com/devicegroup16_id"), "821d14afaf11327d") << "one group of 16";
  EXPECT_NE(Str(devices[1], "resource.aws.com/devicegroup4_id"), Str(devices[0], "resource.aws.com/devicegroup4_id"));
  EXPECT_FALSE(Has(devices[2], "resource.aws.com/devicegroup1_id")) << "ENA is not EFA";
  EXPECT_FALSE(Has(devices[3], "resource.aws.com/devicegroup1_id")) << "an EFA the map does not know";
  EXPECT_NE(Log().find("0000:01:00.0 is not in the trn2.48xlarge Neuron map"), std::string::npos) << Log();
  EXPECT_FALSE(Has(devices[0], "aws.dra.net/instanceType")) << "IMDS is down";
  EXPECT_NE(Log().find("AWS IMDS unavailable"), std::string::npos) << Log();
}

// trn1 pairs two Neuron devices on one EFA: the group of 4 is the two EFAs
// of Neuron devices 0-3, whichever of the pair names the EFA.
TEST_F(AwsPluginTest, Trn1SharedEfaGroups) {
  Trainium("trn1.32xlarge");
  auto host = Load("aws", {{"imds-endpoint", "http://127.0.0.1:9"}, {"imds-timeout-ms", "200"}});
  std::vector<dranet::inventory::Device> devices{Efa("0000:10:1a.0", "a"), Efa("0000:a0:1a.0", "b"),
                                                 Efa("0000:20:19.0", "c")};
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "resource.aws.com/devicegroup4_id"), Str(devices[1], "resource.aws.com/devicegroup4_id"));
  EXPECT_NE(Str(devices[0], "resource.aws.com/devicegroup4_id"), Str(devices[2], "resource.aws.com/devicegroup4_id"));
  EXPECT_EQ(Str(devices[0], "resource.aws.com/devicegroup8_id"), Str(devices[2], "resource.aws.com/devicegroup8_id"));
}

TEST_F(AwsPluginTest, TokenRefusedIsOneClearLineAndABackoff) {
  Trainium("p5.48xlarge");
  FakeMetadataServer imds(Imds(R"({"instanceType":"p5.48xlarge","region":"us-east-2","availabilityZone":"us-east-2a"})"));
  MetadataFault refuse;
  refuse.path_contains = "/latest/api/token";
  refuse.status = 403;
  imds.InjectFault(refuse);
  auto host = Load("aws", Config(imds));
  std::vector<dranet::inventory::Device> devices{Efa("0000:10:1b.0", "rdmap16s27"), Efa("0000:20:1b.0", "rdmap32s27")};
  host->Annotate(devices);
  host->Annotate(devices);
  EXPECT_EQ(imds.Hits(), 1u) << "one failed token request, then the backoff";
  EXPECT_FALSE(Has(devices[0], "aws.dra.net/instanceType"));
  EXPECT_NE(Log().find("HTTP 403 (IMDS disabled, or the hop limit is too low for a pod)"), std::string::npos) << Log();
}

TEST_F(AwsPluginTest, ImdsFaultsLeaveTheNodePublishing) {
  Trainium("p5.48xlarge");
  const std::string good = R"({"instanceType":"p5.48xlarge","region":"us-east-2","availabilityZone":"us-east-2a"})";
  struct Case {
    const char* name;
    std::string document;
    MetadataFault fault;
    const char* log;
  };
  MetadataFault none;
  none.path_contains = "never-matches";
  MetadataFault slow;
  slow.path_contains = "instance-identity";
  slow.action = MetadataFault::Action::kServe;
  slow.delay = std::chrono::milliseconds(1500);
  MetadataFault missing;
  missing.path_contains = "instance-identity";
  missing.status = 404;
  MetadataFault garbage;
  garbage.path_contains = "instance-identity";
  garbage.action = MetadataFault::Action::kGarbage;
  for (const Case& c : {Case{"timeout", good, slow, "timed out"}, Case{"404", good, missing, "HTTP 404"},
                        Case{"garbage", good, garbage, "not a JSON object"},
                        Case{"fields", R"({"instanceType":"p5.48xlarge"})", none, "availabilityZone missing"}}) {
    log_.str("");
    FakeMetadataServer imds(Imds(c.document));
    imds.InjectFault(c.fault);
    auto host = Load("aws", Config(imds));
    std::vector<dranet::inventory::Device> devices{Efa("0000:10:1b.0", "rdmap16s27")};
    host->Annotate(devices);
    EXPECT_EQ(host->loaded_count(), 1u) << c.name;
    EXPECT_FALSE(Has(devices[0], "aws.dra.net/instanceType")) << c.name;
    EXPECT_NE(Log().find("AWS IMDS unavailable"), std::string::npos) << c.name << ": " << Log();
    EXPECT_NE(Log().find(c.log), std::string::npos) << c.name << ": " << Log();
  }
}

TEST_F(AwsPluginTest, PartitionPlacementGroup) {
  Trainium("p5.48xlarge");
  fs::path m = Imds(R"({"instanceType":"p5.48xlarge","region":"us-east-2","availabilityZone":"us-east-2a"})",
                    "training-partitions");
  std::ofstream(m / "latest/meta-data/placement/partition-number") << "3";
  FakeMetadataServer imds(m);
  auto host = Load("aws", Config(imds));
  std::vector<dranet::inventory::Device> devices{Efa("0000:10:1b.0", "rdmap16s27")};
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "aws.dra.net/placementGroup"), "training-partitions") << Log();
  EXPECT_EQ(Str(devices[0], "aws.dra.net/partitionNumber"), "3");
  EXPECT_EQ(Str(devices[0], "aws.dra.net/availabilityZoneId"), "use2-az1");
}

TEST_F(AwsPluginTest, NotApplicableElsewhereWithoutARequest) {
  FakeMetadataServer imds(kP4d / "metadata/aws");
  for (const char* node : {"a4-highgpu-8g", "nd-gb300-v6", "sriov-8pf-64vf"}) {
    auto host = Load("aws", Config(imds), fs::path(DRANET_TEST_NODES_DIR) / node);
    ASSERT_NE(Report(*host, "aws"), nullptr) << node;
    EXPECT_EQ(Report(*host, "aws")->outcome, PluginOutcome::kNotApplicable) << node;
  }
  EXPECT_EQ(imds.Hits(), 0u);
}

// No DMI at all: the first IMDS read is the probe. Unanswered, the plugin
// is off for good (no retry, no warning per pass); answered, it runs.
TEST_F(AwsPluginTest, WithoutDmiOneProbeDecides) {
  {
    FakeMetadataServer imds(Imds("{}"));
    MetadataFault drop;
    drop.action = MetadataFault::Action::kDrop;
    imds.InjectFault(drop);
    auto host = Load("aws", {{"imds-endpoint", imds.url()}, {"retry-backoff-ms", "0"}});
    ASSERT_EQ(host->loaded_count(), 1u) << Log();
    std::vector<dranet::inventory::Device> devices{Efa("0000:10:1b.0", "rdmap16s27")};
    host->Annotate(devices);
    host->Annotate(devices);
    EXPECT_EQ(imds.Hits(), 1u) << "one probe, never retried";
    EXPECT_NE(Log().find("not AWS: no DMI and the metadata probe failed"), std::string::npos) << Log();
    EXPECT_EQ(Log().find("AWS IMDS unavailable"), std::string::npos) << Log();
  }
  log_.str("");
  FakeMetadataServer imds(Imds(R"({"instanceType":"c7gn.16xlarge","region":"eu-west-1","availabilityZone":"eu-west-1b"})"));
  auto host = Load("aws", {{"imds-endpoint", imds.url()}});
  std::vector<dranet::inventory::Device> devices{Efa("0000:10:1b.0", "rdmap16s27")};
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "aws.dra.net/instanceType"), "c7gn.16xlarge") << Log();
  EXPECT_NE(Log().find("the AWS metadata service answered"), std::string::npos) << Log();
}

// No DMI, and the service answers, but after the probe's deadline (300 ms
// by default) and well within the normal one: the probe has given up by
// then, so a node that is not on the cloud never waits the normal deadline.
TEST_F(AwsPluginTest, WithoutDmiTheProbeGivesUpAtItsShortDeadline) {
  FakeMetadataServer imds(Imds(R"({"instanceType":"p5.48xlarge","region":"us-east-2","availabilityZone":"us-east-2a"})"));
  MetadataFault late;
  late.action = MetadataFault::Action::kServe;
  late.delay = std::chrono::milliseconds(900);
  imds.InjectFault(late);
  auto host = Load("aws", {{"imds-endpoint", imds.url()}, {"imds-timeout-ms", "10000"}, {"retry-backoff-ms", "0"}});
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  std::vector<dranet::inventory::Device> devices{Efa("0000:10:1b.0", "rdmap16s27")};
  host->Annotate(devices);
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "aws.dra.net/instanceType"), "<absent>") << "the late answer was taken\n" << Log();
  EXPECT_NE(Log().find("not AWS: no DMI and the metadata probe failed"), std::string::npos) << Log();
  EXPECT_EQ(imds.Hits(), 1u) << "one probe, never retried";
}

// --cloud-provider-hint=AWS (detect=skip): DMI is not read as a verdict.
TEST_F(AwsPluginTest, DetectSkipRunsWhateverDmiSays) {
  Dmi("sys_vendor", "Supermicro");
  FakeMetadataServer imds(Imds(R"({"instanceType":"p5.48xlarge","region":"us-east-2","availabilityZone":"us-east-2a"})"));
  auto config = Config(imds);
  config["detect"] = "skip";
  auto host = Load("aws", config);
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  std::vector<dranet::inventory::Device> devices{Efa("0000:10:1b.0", "rdmap16s27")};
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[0], "aws.dra.net/instanceType"), "p5.48xlarge") << Log();
  config["detect"] = "maybe";
  auto bad = Load("aws", config);
  EXPECT_EQ(bad->loaded_count(), 0u);
  EXPECT_NE(Log().find("expected dmi or skip"), std::string::npos) << Log();
}

}  // namespace
