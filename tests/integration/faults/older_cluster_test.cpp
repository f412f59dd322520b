// The real dranetd against control planes that serve resource.k8s.io in one
// version only: v1 (1.34 and later), v1beta2 (1.33) or v1beta1 (1.32, and
// 1.33 as GKE's DRA guide runs it). It must find the version, publish the
// GB300 node in that version's shape, prepare what a kubelet of that age
// asks for (v1beta1 DRA gRPC below v1), write claim status and Events in it,
// and never ask for a version the server does not serve. The fake API server
// refuses another version's body or device shape, as the real one does. A
// cluster without DRA keeps dranetd up but not ready, saying why.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <regex>

#include "fault_harness.h"

namespace dranet::faults {
namespace {

namespace fs = std::filesystem;
const char* const kEvents = "/api/v1/namespaces/ml/events";
const char* const kResourceGroup = "/apis/resource.k8s.io";

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  return doc;
}

// GETs of the APIGroup discovery document.
std::size_t Discoveries(FaultNode& node) {
  std::size_t count = 0;
  for (const auto& request : node.api().Requests())
    if (request.method == "GET" && request.target == kResourceGroup) ++count;
  return count;
}

// Requests for resource.k8s.io paths outside `version`.
std::vector<std::string> OtherVersionRequests(FaultNode& node, const std::string& version) {
  std::vector<std::string> out;
  for (const auto& request : node.api().Requests())
    if (request.target.starts_with(std::string(kResourceGroup) + "/") &&
        !request.target.starts_with(std::string(kResourceGroup) + "/" + version + "/"))
      out.push_back(request.method + " " + request.target);
  return out;
}

class ServedVersionTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ServedVersionTest, NodePublishesPreparesAndReportsInTheOnlyServedVersion) {
  const std::string version = GetParam();
  FaultNode node({DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6", false, {}, version});
  std::string why;
  ASSERT_TRUE(node.StartDaemon("", &why)) << why;  // ready: the node is published

  // The slices, in the version's shape.
  std::size_t devices = 0;
  for (const auto& json : node.api().ListObjects(SlicesPath(version))) {
    const auto slice = Parse(json);
    for (const auto& device : slice["spec"]["devices"].GetArray()) {
      ++devices;
      EXPECT_EQ(device.HasMember("basic"), version == "v1beta1") << json;
      const auto* attributes = DeviceAttributes(device);
      ASSERT_NE(attributes, nullptr) << json;
      EXPECT_TRUE(attributes->HasMember("dra.net/rdma")) << json;
    }
  }
  EXPECT_GT(devices, 0u);

  // A pod's claims: prepared through the kubelet's API of that age, status written.
  for (Step step : {Step::kPrepare, Step::kRunPodA, Step::kCreateA}) {
    const auto got = node.Run(step);
    ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text << node.daemon().Log();
  }
  std::string status;
  EXPECT_TRUE(PollUntil([&] {
    const auto claim = Parse(node.api().GetObject(ClaimsPath(version), "claim-a").value_or("{}"));
    if (!claim.IsObject() || !claim.HasMember("status") || !claim["status"].HasMember("devices")) return false;
    const auto& entries = claim["status"]["devices"];
    if (!entries.IsArray() || entries.Empty() || !entries[0].HasMember("conditions") ||
        !entries[0]["conditions"].IsArray() || entries[0]["conditions"].Empty())
      return false;
    const auto& condition = entries[0]["conditions"][0];
    status = std::string(condition["type"].GetString()) + "=" + condition["status"].GetString() + "/" +
             condition["reason"].GetString();
    return true;
  })) << node.daemon().Log();
  EXPECT_EQ(status, "Ready=True/RDMAOnlyDeviceReady");

  // A claim that cannot be prepared: the Event names the claim in the version spoken.
  auto stored = Parse(node.api().PutObject(
      ClaimsPath(version), AllocatedClaim("claim-gone", kNode, {"pci-ffff-00-00-0"}, "pod-c", version)));
  const fakes::KubeletClaim gone{"ml", "claim-gone", stored["metadata"]["uid"].GetString()};
  const auto answers = node.kubelet().Prepare(kDriver, node.dra_api(), {gone});
  ASSERT_EQ(answers.count(gone.uid), 1u);
  EXPECT_FALSE(answers.at(gone.uid).error.empty());
  std::string regarding;
  EXPECT_TRUE(PollUntil([&] {
    for (const auto& json : node.api().ListObjects(kEvents)) {
      const auto event = Parse(json);
      if (std::string(event["involvedObject"]["name"].GetString()) == "claim-gone") {
        regarding = std::string(event["involvedObject"]["apiVersion"].GetString()) + " " +
                    event["involvedObject"]["kind"].GetString() + " " + event["reason"].GetString();
        return true;
      }
    }
    return false;
  })) << node.daemon().Log();
  EXPECT_EQ(regarding, "resource.k8s.io/" + version + " ResourceClaim ClaimPrepareFailed");

  // What it says it speaks, and what it asked.
  const int port = node.daemon().MetricsPort();
  ASSERT_NE(port, 0);
  EXPECT_NE(LoopbackGet(port, "/metrics").body.find("dranet_resource_api_info{version=\"" + version + "\"} 1"),
            std::string::npos);
  EXPECT_EQ(Discoveries(node), 1u);
  EXPECT_EQ(OtherVersionRequests(node, version), std::vector<std::string>{});
  EXPECT_NE(node.daemon().Log().find("speaking resource.k8s.io/" + version), std::string::npos);
}

std::string VersionName(const ::testing::TestParamInfo<const char*>& param) { return param.param; }
INSTANTIATE_TEST_SUITE_P(ControlPlanes, ServedVersionTest, ::testing::Values("v1", "v1beta2", "v1beta1"),
                         VersionName);

// --resource-api-version pins the version: no discovery request at all, and
// the newer version the server also serves is left alone.
TEST(PinnedVersionTest, TheFlagIsSpokenWithoutAsking) {
  FaultNode node({DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6", false,
                  {"--resource-api-version=v1beta1"}, "v1beta1", {"v1"}});
  std::string why;
  ASSERT_TRUE(node.StartDaemon("", &why)) << why;
  ASSERT_TRUE(node.Run(Step::kPrepare).ok) << node.daemon().Log();
  EXPECT_EQ(Discoveries(node), 0u);
  EXPECT_EQ(OtherVersionRequests(node, "v1beta1"), std::vector<std::string>{});
}

// The control plane stops serving the version in use while dranetd runs (an
// upgrade that switches v1beta2 off, leaving v1beta1). The fake keeps each
// version's objects apart, so a test puts what a real API server would show
// in v1beta1 there itself.
class VersionDropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(node_.StartDaemon("", &why)) << why;
    ASSERT_TRUE(node_.Run(Step::kPrepare).ok) << node_.daemon().Log();
    for (const auto& json : node_.api().ListObjects(SlicesPath("v1beta2"))) {
      const auto slice = Parse(json);  // kept alive while its devices are read
      for (const auto& device : slice["spec"]["devices"].GetArray()) devices_.emplace_back(device["name"].GetString());
    }
    ASSERT_GE(devices_.size(), 4u);
    ASSERT_TRUE(node_.api().ListObjects(SlicesPath("v1beta1")).empty());
  }
  std::string Metrics() { return LoopbackGet(node_.daemon().MetricsPort(), "/metrics").body; }

  FaultNode node_{{DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6", false, {}, "v1beta2", {"v1beta1"}}};
  std::vector<std::string> devices_;
};

// The upgrade restarts the API server (open watches end): the slice watch
// meets the 404, and the slices are published in v1beta1 at once, not at the
// periodic resync ten minutes later.
TEST_F(VersionDropTest, TheSlicesFollowWithoutWaitingForTheResync) {
  node_.api().SetDown(true);
  node_.api().ServeResourceVersions({"v1beta1"});
  node_.api().SetDown(false);
  EXPECT_TRUE(PollUntil([&] { return !node_.api().ListObjects(SlicesPath("v1beta1")).empty(); }))
      << node_.daemon().Log();
  std::size_t republished = 0;
  for (const auto& json : node_.api().ListObjects(SlicesPath("v1beta1"))) {
    const auto slice = Parse(json);
    for (const auto& device : slice["spec"]["devices"].GetArray()) {
      EXPECT_TRUE(device.HasMember("basic"));
      ++republished;
    }
  }
  EXPECT_EQ(republished, devices_.size());
  const std::string metrics = Metrics();
  EXPECT_NE(metrics.find("dranet_resource_api_info{version=\"v1beta1\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("dranet_resource_api_info{version=\"v1beta2\"} 0"), std::string::npos) << metrics;
  EXPECT_NE(node_.daemon().Log().find("switching"), std::string::npos) << node_.daemon().Log();
}

// Before anything else notices (the slice watch still open), a claim of the
// new version is prepared: the read that gets 404 asks which version is
// served and reads the claim there, instead of calling it deleted.
TEST_F(VersionDropTest, AClaimIsReadWhereItIsServedNow) {
  node_.api().ServeResourceVersions({"v1beta1"});
  auto stored = Parse(node_.api().PutObject(ClaimsPath("v1beta1"),
                                            AllocatedClaim("claim-c", kNode, {devices_.back()}, "pod-c", "v1beta1")));
  const fakes::KubeletClaim claim{"ml", "claim-c", stored["metadata"]["uid"].GetString()};
  const auto answers = node_.kubelet().Prepare(kDriver, fakes::DraApi::kV1beta1, {claim});
  ASSERT_EQ(answers.count(claim.uid), 1u);
  EXPECT_EQ(answers.at(claim.uid).error, "") << node_.daemon().Log();
  EXPECT_NE(Metrics().find("dranet_resource_api_info{version=\"v1beta1\"} 1"), std::string::npos);
}

// A control plane without DRA (before 1.32, or the group switched off):
// dranetd keeps running, is not ready, and its log says why.
TEST(NoDraTest, DranetdStaysUpNotReadyAndSaysWhy) {
  FaultNode node({DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6", false, {}, "none"});
  std::string why;
  ASSERT_TRUE(node.StartDaemon("", &why, /*wait_ready=*/false)) << why;
  EXPECT_TRUE(PollUntil([&] {
    return node.daemon().Log().find("Dynamic Resource Allocation is not enabled") != std::string::npos;
  })) << node.daemon().Log();
  // It keeps trying (with backoff), and keeps running.
  EXPECT_TRUE(PollUntil([&] {
    const std::string log = node.daemon().Log();
    std::size_t tries = 0;
    for (auto at = log.find("publishing ResourceSlices failed"); at != std::string::npos;
         at = log.find("publishing ResourceSlices failed", at + 1))
      ++tries;
    return tries >= 3;
  })) << node.daemon().Log();
  const int port = node.daemon().MetricsPort();
  ASSERT_NE(port, 0);
  const auto ready = LoopbackGet(port, "/readyz");
  EXPECT_NE(ready.status, 200) << ready.body;
  EXPECT_TRUE(node.daemon_running());
  EXPECT_EQ(OtherVersionRequests(node, "none"), std::vector<std::string>{});
}

}  // namespace
}  // namespace dranet::faults
