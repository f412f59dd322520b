// resource.kubernetes.io/numaNode in list form (DiscoveryOptions::numa_node_list,
// dranetd --feature-gates=DRAListTypeAttributes=true) on hand-built NUMA
// topologies: the device's node first, then the same-socket nodes nearest to
// it, from sys/devices/system/node/node<N>/distance.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fake_host.h"
#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "test_support.h"

namespace dranet::inventory {
namespace {

namespace fs = std::filesystem;
using testing::Attribute;
using testing::CapturedLog;
using testing::FakeHost;
using testing::FindDevice;
using testing::HasAttribute;
using testing::NodeSnapshot;

constexpr const char* kNic = "pci-0000-01-00-0";

class NumaNodeList : public ::testing::Test {
 protected:
  // One NIC on NUMA node `nic_node`; node<id>/distance for each entry of
  // `distances` (an empty text makes the directory without the file).
  void Topology(int nic_node, const std::vector<std::pair<int, std::string>>& distances) {
    std::string pci = host_.Pci("0000:01:00.0", "0x020000", "mlx5_core");
    host_.File(pci + "/numa_node", std::to_string(nic_node) + "\n");
    for (const auto& [id, text] : distances) {
      std::string dir = "sys/devices/system/node/node" + std::to_string(id);
      host_.File(dir + "/cpulist", "0-3\n");
      if (!text.empty()) host_.File(dir + "/distance", text + "\n");
    }
    host_.WriteNetlinkJson();
  }

  Device DiscoverNic(bool numa_node_list = true, const fs::path& root = {}) {
    DiscoveryOptions options;
    options.host_root = root.empty() ? host_.root() : root;
    options.numa_node_list = numa_node_list;
    auto devices = Discover(options, log_.log);
    const Device* nic = FindDevice(devices, kNic);
    if (nic == nullptr) {
      ADD_FAILURE() << "no " << kNic;
      return {};
    }
    return *nic;
  }

  IntList StandardNumaNode(bool numa_node_list = true) {
    return Attribute<IntList>(DiscoverNic(numa_node_list), attr::kStandardNumaNode);
  }

  FakeHost host_;
  CapturedLog log_;
};

// DRANET's own example: node 1 at distance 12 from nodes 0 and 2.
TEST_F(NumaNodeList, OwnNodeFirstThenTheSameSocketNodes) {
  Topology(1, {{0, "10 12 12"}, {1, "12 10 12"}, {2, "12 12 10"}});
  Device nic = DiscoverNic();
  EXPECT_EQ(Attribute<IntList>(nic, attr::kStandardNumaNode), (IntList{1, 0, 2}));
  EXPECT_EQ(Attribute<int64_t>(nic, attr::kNumaNode), 1) << "the legacy attribute stays an int";
  EXPECT_EQ(nic.numa_node, 1);
}

TEST_F(NumaNodeList, OffByDefaultTheStandardAttributeIsAnInt) {
  Topology(1, {{0, "10 12 12"}, {1, "12 10 12"}, {2, "12 12 10"}});
  EXPECT_FALSE(DiscoveryOptions{}.numa_node_list);
  Device nic = DiscoverNic(false);
  EXPECT_EQ(Attribute<int64_t>(nic, attr::kStandardNumaNode), 1);
  EXPECT_EQ(Attribute<int64_t>(nic, attr::kNumaNode), 1);
}

TEST_F(NumaNodeList, RemoteNodesAreLeftOut) {
  Topology(0, {{0, "10 20"}, {1, "20 10"}});
  EXPECT_EQ(StandardNumaNode(), (IntList{0}));
}

TEST_F(NumaNodeList, OnlyTheNearestSameSocketDistanceCounts) {
  // Node 1 shares the socket at 11; node 2 at 12 is farther; node 3 is remote.
  Topology(0, {{0, "10 11 12 21"}, {1, "11 10 12 21"}, {2, "12 12 10 21"}, {3, "21 21 21 10"}});
  EXPECT_EQ(StandardNumaNode(), (IntList{0, 1}));
}

TEST_F(NumaNodeList, NodesAreAscendingAfterTheDevicesOwn) {
  Topology(3, {{0, "10 21 11 11"}, {1, "21 10 21 21"}, {2, "11 21 10 11"}, {3, "11 21 11 10"}});
  EXPECT_EQ(StandardNumaNode(), (IntList{3, 0, 2}));
}

TEST_F(NumaNodeList, DistancesFollowTheNodeDirectoriesNotTheIndex) {
  // Online nodes 0 and 2 only: node2/distance lists node 0 then node 2.
  Topology(2, {{0, "10 12"}, {2, "12 10"}});
  EXPECT_EQ(StandardNumaNode(), (IntList{2, 0}));
}

TEST_F(NumaNodeList, WithoutADistanceFileTheListIsTheNodeAlone) {
  Topology(1, {{0, "10 12"}, {1, ""}});
  EXPECT_EQ(StandardNumaNode(), (IntList{1}));
  EXPECT_EQ(log_.text().find("distance"), std::string::npos) << "a missing file is not an error: " << log_.text();
}

TEST_F(NumaNodeList, MalformedDistancesAreLoggedAndIgnored) {
  Topology(0, {{0, "10 banana"}, {1, "12 10"}});
  EXPECT_EQ(StandardNumaNode(), (IntList{0}));
  EXPECT_NE(log_.text().find("node0/distance"), std::string::npos) << log_.text();
}

TEST_F(NumaNodeList, DistancesThatDoNotFitTheNodesAreLoggedAndIgnored) {
  Topology(0, {{0, "10 12 12"}, {1, "12 10 12"}});  // three distances, two nodes
  EXPECT_EQ(StandardNumaNode(), (IntList{0}));
  EXPECT_NE(log_.text().find("node0/distance"), std::string::npos) << log_.text();
}

TEST_F(NumaNodeList, UnknownNumaNodePublishesNeither) {
  Topology(-1, {{0, "10 12"}, {1, "12 10"}});
  Device nic = DiscoverNic();
  EXPECT_FALSE(HasAttribute(nic, attr::kStandardNumaNode));
  EXPECT_FALSE(HasAttribute(nic, attr::kNumaNode));
}

TEST_F(NumaNodeList, ADistanceFileLinkedOutOfTheRootIsNotRead) {
  FakeHost outside;
  outside.File("distance", "10 12\n");
  Topology(0, {{0, ""}, {1, "12 10"}});
  host_.RawLink("sys/devices/system/node/node0/distance", outside.root() / "distance");
  EXPECT_EQ(StandardNumaNode(), (IntList{0}));
}

TEST_F(NumaNodeList, CapturedSnapshotsKeepTheDistances) {
  Topology(1, {{0, "10 12 12"}, {1, "12 10 12"}, {2, "12 12 10"}});
  std::string pattern = (fs::temp_directory_path() / "dranet-numa-capture-XXXXXX").string();
  fs::path dir = mkdtemp(pattern.data());
  CaptureOptions capture;
  capture.host_root = host_.root();
  CaptureSnapshot(dir / "snapshot", capture, NullLogger());
  EXPECT_EQ(Attribute<IntList>(DiscoverNic(true, dir / "snapshot"), attr::kStandardNumaNode), (IntList{1, 0, 2}));
  fs::remove_all(dir);
}

// The bundled snapshots have no distance files: each NIC's list is its node.
TEST(NumaNodeListOnSnapshots, Gb300NicsListTheirOwnNode) {
  DiscoveryOptions options;
  options.host_root = NodeSnapshot("nd-gb300-v6");
  options.numa_node_list = true;
  auto devices = Discover(options, NullLogger());
  const std::vector<std::pair<std::string, int64_t>> nics = {
      {"pci-0101-00-00-0", 0}, {"pci-0102-00-00-0", 0}, {"pci-0103-00-00-0", 1}, {"pci-0104-00-00-0", 1}};
  for (const auto& [name, node] : nics) {
    const Device* nic = FindDevice(devices, name);
    ASSERT_NE(nic, nullptr) << name;
    EXPECT_EQ(Attribute<IntList>(*nic, attr::kStandardNumaNode), (IntList{node})) << name;
    EXPECT_EQ(Attribute<int64_t>(*nic, attr::kNumaNode), node) << name;
  }
}

}  // namespace
}  // namespace dranet::inventory
