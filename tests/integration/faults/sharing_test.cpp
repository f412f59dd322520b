// The real dranetd with --shared-devices against the fakes: the GB300 node's
// HCAs published shareable, two claims each holding a share of one HCA
// (the scheduler's results with shareIDs) prepared and started side by side
// with the same char devices, each share's status under its shareID, and the
// flag refused by an API server before 1.36.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "fault_harness.h"
#include "shell_command.h"

namespace dranet::faults {
namespace {

namespace fs = std::filesystem;
const char* const kSharedArgs[] = {"--shared-devices=device.attributes[\"dra.net\"].rdma", "--device-shares=2"};

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  return doc;
}

FaultNode::Options SharedNode() {
  FaultNode::Options options{DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "nd-gb300-v6"};
  options.extra_args = {kSharedArgs[0], kSharedArgs[1]};
  options.shared_claims = true;
  return options;
}

// "device shareID reason" of each status.devices entry of claim `name`.
std::vector<std::string> ShareStatuses(FaultNode& node, const std::string& name) {
  std::vector<std::string> out;
  const auto claim = Parse(node.api().GetObject(ClaimsPath("v1"), name).value_or("{}"));
  if (!claim.IsObject() || !claim.HasMember("status") || !claim["status"].HasMember("devices")) return out;
  for (const auto& d : claim["status"]["devices"].GetArray()) {
    std::string line = std::string(d["device"].GetString()) + " " +
                       (d.HasMember("shareID") ? d["shareID"].GetString() : "-");
    for (const auto& c : d["conditions"].GetArray()) line += std::string(" ") + c["reason"].GetString();
    out.push_back(line);
  }
  return out;
}

TEST(SharingTest, TwoClaimsHoldSharesOfOneHcaSideBySide) {
  FaultNode node(SharedNode());
  std::string why;
  ASSERT_TRUE(node.StartDaemon("", &why)) << why;

  // Every HCA is published shareable, with 2 shares and its 800 Gbit/s.
  std::size_t shared = 0;
  for (const auto& json : node.api().ListObjects(SlicesPath("v1"))) {
    const auto slice = Parse(json);
    for (const auto& d : slice["spec"]["devices"].GetArray()) {
      SCOPED_TRACE(d["name"].GetString());
      ASSERT_TRUE(d.HasMember("allowMultipleAllocations"));
      EXPECT_TRUE(d["allowMultipleAllocations"].GetBool());
      EXPECT_STREQ(d["capacity"]["dra.net/shares"]["value"].GetString(), "2");
      EXPECT_STREQ(d["capacity"]["dra.net/bandwidth"]["value"].GetString(), "800");
      EXPECT_STREQ(d["capacity"]["dra.net/bandwidth"]["requestPolicy"]["default"].GetString(), "400");
      ++shared;
    }
  }
  EXPECT_EQ(shared, 4u);

  // Both claims prepared, both pods started: each container gets the HCA's char devices.
  std::vector<std::string> containers;
  for (Step step : {Step::kPrepare, Step::kRunPodA, Step::kCreateA, Step::kRunPodB, Step::kCreateB}) {
    const auto got = node.Run(step);
    ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text << node.daemon().Log();
    if (step == Step::kCreateA || step == Step::kCreateB) containers.push_back(got.text);
  }
  ASSERT_EQ(containers.size(), 2u);
  EXPECT_EQ(containers[0], containers[1]) << "the two shares gave different edits";
  EXPECT_NE(containers[0].find("/dev/infiniband/uverbs"), std::string::npos) << containers[0];
  EXPECT_NE(containers[0].find("NCCL_IB_HCA"), std::string::npos) << containers[0];

  // Each share's status entry under its own shareID.
  for (const auto& [claim, share] : {std::pair{"claim-a", "share-a"}, std::pair{"claim-b", "share-b"}}) {
    std::vector<std::string> got;
    EXPECT_TRUE(PollUntil([&] {
      got = ShareStatuses(node, claim);
      return got.size() == 1 && got[0].find(std::string(" ") + share + " RDMAShareReady") != std::string::npos;
    })) << claim << ": " << (got.empty() ? "no status" : got[0]) << "\n" << node.daemon().Log();
  }

  // The pods go in turn; each unprepare leaves the other share alone.
  for (Step step : {Step::kStopPodA, Step::kRemovePodA, Step::kStopPodB, Step::kRemovePodB, Step::kUnprepare}) {
    const auto got = node.Run(step);
    ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text << node.daemon().Log();
  }
  EXPECT_EQ(node.daemon().Log().find("is a netdev that claim"), std::string::npos);
}

// The first word of each link line of a network description (what a pod
// step answers with real netdevs): the link names.
std::vector<std::string> LinkLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != ' ' && line.back() != ':') out.push_back(line);
  return out;
}

// With real netdevs (root): the A4 node's RoCE netdevs published shareable,
// two claims each holding a share of one of them. Each pod gets an IPVLAN
// child of the netdev (its name and MAC), the node keeps the netdev with its
// addresses, stopping one pod leaves the other's child, and once both stop
// the node's network is as it was.
TEST(SharingTest, TwoSharesOfAnA4NetdevEachGetAChildAndTheNodeKeepsTheNetdev) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  FaultNode::Options options{DRANETD_BINARY, fs::path(DRANET_TEST_NODES_DIR) / "a4-highgpu-8g", /*real_netdevs=*/true};
  options.extra_args = {kSharedArgs[0], kSharedArgs[1]};
  options.shared_claims = true;
  // A share's child is IPVLAN unless the config says otherwise; a kernel
  // without the IPVLAN driver is given macvlan children (logged).
  const bool ipvlan = testing::KernelMakesChildren("ipvlan");
  if (!ipvlan) {
    std::cout << "this kernel has no IPVLAN driver: the claims ask for macvlan children\n";
    options.claim_config = R"({"interface":{"type":"macvlan"}})";
  }
  FaultNode node(options);
  std::string why;
  ASSERT_TRUE(node.StartDaemon("", &why)) << why;
  ASSERT_TRUE(node.Run(Step::kPrepare).ok) << node.daemon().Log();
  const auto run_a = node.Run(Step::kRunPodA);
  ASSERT_TRUE(run_a.ok) << run_a.text << node.daemon().Log();
  const auto run_b = node.Run(Step::kRunPodB);
  ASSERT_TRUE(run_b.ok) << run_b.text << node.daemon().Log();
  const auto in_a = LinkLines(run_a.text), in_b = LinkLines(run_b.text);
  ASSERT_EQ(in_a.size(), 1u) << run_a.text;
  ASSERT_EQ(in_b.size(), 1u) << run_b.text;
  const std::string netdev = in_a[0].substr(0, in_a[0].find(' '));
  EXPECT_EQ(in_b[0].substr(0, in_b[0].find(' ')), netdev) << "both children are named as the netdev";
  // The netdev is still on the node, up; IPVLAN children have its MAC,
  // macvlan children each one of their own.
  const auto node_links = LinkLines(node.NodeNetwork());
  const auto mac_of = [](const std::string& line) { return line.substr(line.rfind(' ') + 1); };
  const auto on_node = std::find_if(node_links.begin(), node_links.end(),
                                    [&](const std::string& line) { return line.starts_with(netdev + " up"); });
  ASSERT_NE(on_node, node_links.end()) << node.NodeNetwork();
  if (ipvlan) {
    EXPECT_EQ(mac_of(in_a[0]), mac_of(*on_node));
    EXPECT_EQ(mac_of(in_b[0]), mac_of(*on_node));
  } else {
    EXPECT_NE(mac_of(in_a[0]), mac_of(in_b[0]));
  }
  EXPECT_EQ(node.NodeNetwork(), node.node_network_at_start());
  // Each share's status is a network device's, under its shareID.
  for (const auto& [claim, share] : {std::pair{"claim-a", "share-a"}, std::pair{"claim-b", "share-b"}}) {
    std::vector<std::string> got;
    EXPECT_TRUE(PollUntil([&] {
      got = ShareStatuses(node, claim);
      return got.size() == 1 && got[0].find(std::string(" ") + share + " NetworkDeviceReady NetworkReady") != std::string::npos;
    })) << claim << ": " << (got.empty() ? "no status" : got[0]);
  }
  for (Step step : {Step::kCreateA, Step::kCreateB}) {
    const auto got = node.Run(step);
    ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text;
    EXPECT_NE(got.text.find("/dev/infiniband/uverbs"), std::string::npos) << got.text;
  }
  const auto stop_a = node.Run(Step::kStopPodA);
  ASSERT_TRUE(stop_a.ok) << stop_a.text << node.daemon().Log();
  EXPECT_EQ(LinkLines(node.PodNetwork("A")).size(), 0u) << node.PodNetwork("A");
  EXPECT_EQ(LinkLines(node.PodNetwork("B")), in_b) << "the other share's child is untouched";
  for (Step step : {Step::kRemovePodA, Step::kStopPodB, Step::kRemovePodB, Step::kUnprepare}) {
    const auto got = node.Run(step);
    ASSERT_TRUE(got.ok) << StepName(step) << ": " << got.text << node.daemon().Log();
  }
  EXPECT_EQ(node.NodeNetwork(), node.node_network_at_start());
}

// Before Kubernetes 1.36 the API server drops allowMultipleAllocations: a
// shared device would be given whole to one claim while dranetd thinks it
// shared. dranetd refuses to start and says why.
TEST(SharingTest, AnApiServerBefore136IsRefusedWithTheReason) {
  FaultNode node(SharedNode());
  node.api().SetServerVersion("v1.35.3");
  std::string why;
  EXPECT_FALSE(node.StartDaemon("", &why, /*wait_ready=*/false));
  EXPECT_TRUE(PollUntil([&] { return node.daemon().Exited(); })) << node.daemon().Log();
  EXPECT_NE(node.daemon().Log().find("--shared-devices needs Kubernetes 1.36 or later"), std::string::npos)
      << node.daemon().Log();
  EXPECT_EQ(node.api().ListObjects(SlicesPath("v1")).size(), 0u) << "nothing published";
}

// The flag and --rdma-exclusive contradict each other: refused at once.
TEST(SharingTest, TheExclusiveRdmaNetnsModeIsRefused) {
  auto options = SharedNode();
  options.extra_args.push_back("--rdma-exclusive=true");
  FaultNode node(options);
  std::string why;
  EXPECT_FALSE(node.StartDaemon("", &why, /*wait_ready=*/false));
  EXPECT_TRUE(PollUntil([&] { return node.daemon().Exited(); })) << node.daemon().Log();
  EXPECT_NE(node.daemon().Log().find("--shared-devices needs the shared RDMA netns mode"), std::string::npos)
      << node.daemon().Log();
}

}  // namespace
}  // namespace dranet::faults
