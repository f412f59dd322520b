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
    const auto& entry = claim["status"]["devices"][0];
    status = std::string(entry["conditions"][0]["type"].GetString()) + "=" + entry["conditions"][0]["status"].GetString() +
             "/" + entry["conditions"][0]["reason"].GetString();
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

// --resource-api-version pins the version: no discovery request at all.
TEST(PinnedVersionTest, TheFlagIsSpokenWithoutAsking) {
  FaultNode node({DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6", false,
                  {"--resource-api-version=v1beta1"}, "v1beta1"});
  std::string why;
  ASSERT_TRUE(node.StartDaemon("", &why)) << why;
  ASSERT_TRUE(node.Run(Step::kPrepare).ok) << node.daemon().Log();
  EXPECT_EQ(Discoveries(node), 0u);
  EXPECT_EQ(OtherVersionRequests(node, "v1beta1"), std::vector<std::string>{});
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
  const int port = node.daemon().MetricsPort();
  ASSERT_NE(port, 0);
  const auto ready = LoopbackGet(port, "/readyz");
  EXPECT_NE(ready.status, 200) << ready.body;
  EXPECT_TRUE(node.daemon_running());
  EXPECT_EQ(OtherVersionRequests(node, "none"), std::vector<std::string>{});
}

}  // namespace
}  // namespace dranet::faults
