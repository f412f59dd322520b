// CaptureSnapshot: a snapshot captured from a host root discovers the same
// devices as the host root itself, with a self-contained symlink structure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <tuple>

#include "base/json.h"
#include "fake_host.h"
#include "inventory/inventory.h"
#include "inventory/netlink_facts.h"
#include "inventory/snapshot.h"
#include "inventory/sysfs_tree.h"
#include "test_support.h"

namespace dranet::inventory {
namespace {

namespace fs = std::filesystem;
using testing::CapturedLog;
using testing::NodeSnapshot;

class CaptureTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "dranet-capture-XXXXXX").string();
    out_ = fs::path(mkdtemp(pattern.data())) / "snapshot";
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(out_.parent_path(), error);
  }
  fs::path out_;
};

TEST_P(CaptureTest, RecapturedSnapshotDiscoversTheSameDevices) {
  DiscoveryOptions original;
  original.host_root = NodeSnapshot(GetParam());
  original.skip_ipoib = true;
  CaptureOptions capture;
  capture.host_root = original.host_root;
  capture.node_name = "recaptured-node";
  CaptureSnapshot(out_, capture, NullLogger());

  DiscoveryOptions recaptured = original;
  recaptured.host_root = out_;
  auto expected = Discover(original, NullLogger());
  auto actual = Discover(recaptured, NullLogger());
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(actual, expected);

  auto info = ReadSnapshotInfo(out_, NullLogger());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->node_name, "recaptured-node");
  EXPECT_EQ(info->source, "captured");

  // Every link is relative and resolves inside the snapshot.
  fs::path root = fs::canonical(out_);
  for (auto it = fs::recursive_directory_iterator(out_); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_symlink()) continue;
    fs::path target = fs::read_symlink(it->path());
    EXPECT_TRUE(target.is_relative()) << it->path();
    auto resolved = (it->path().parent_path() / target).lexically_normal();
    EXPECT_EQ(resolved.string().rfind(out_.lexically_normal().string(), 0), 0u) << it->path() << " -> " << target;
  }
  EXPECT_EQ(ReadSysfsValue(out_ / "sys/class/dmi/id/sys_vendor"),
            ReadSysfsValue(original.host_root / "sys/class/dmi/id/sys_vendor"));
}

INSTANTIATE_TEST_SUITE_P(Nodes, CaptureTest, ::testing::Values("nd-gb300-v6", "a4-highgpu-8g", "nd-mi300x-v5"));

// The link facts a snapshot's netlink.json records and the uevent files of
// its PCI functions are what discovery reads first; snapshots without them
// (captured by older builds) are read from the separate sysfs files. Both
// ways must give the same devices.
class SeparateFilesTest : public CaptureTest {};

TEST_P(SeparateFilesTest, DiscoverWhatUeventsAndRecordedLinksSay) {
  const fs::path original = NodeSnapshot(GetParam());
  fs::copy(original, out_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  int uevents = 0;
  for (auto it = fs::recursive_directory_iterator(out_); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_symlink() && it->path().filename() == "uevent") {
      fs::remove(it->path());
      ++uevents;
    }
  }
  EXPECT_GT(uevents, 0);
  // netlink.json keeps each link's name, kind, addresses and BPF names only.
  std::ifstream in(out_ / kSnapshotNetlinkFile);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document document;
  ASSERT_TRUE(ParseJson(document, text.str()).empty());
  int stripped = 0;
  for (auto& link : document["links"].GetArray()) {
    for (const char* key : {"ifindex", "flags", "mtu", "arpType", "parentIndex", "operstate", "mac", "alias",
                            "master"}) {
      stripped += link.RemoveMember(key) ? 1 : 0;
    }
  }
  EXPECT_GT(stripped, 0);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  document.Accept(writer);
  std::ofstream(out_ / kSnapshotNetlinkFile, std::ios::trunc) << buffer.GetString();

  CapturedLog recorded_log, separate_log;
  auto recorded = ReadSnapshotNetlinkFacts(original, recorded_log.log);
  auto separate = ReadSnapshotNetlinkFacts(out_, separate_log.log);
  ASSERT_EQ(recorded.links.size(), separate.links.size());
  for (std::size_t i = 0; i < recorded.links.size(); ++i) {
    const LinkFacts& a = recorded.links[i];
    const LinkFacts& b = separate.links[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(std::tie(a.name, a.ifindex, a.flags, a.mtu, a.arp_type, a.parent_index, a.operstate, a.mac, a.alias,
                       a.master_index, a.kind, a.addresses),
              std::tie(b.name, b.ifindex, b.flags, b.mtu, b.arp_type, b.parent_index, b.operstate, b.mac, b.alias,
                       b.master_index, b.kind, b.addresses));
  }
  DiscoveryOptions options;
  options.host_root = original;
  auto expected = Discover(options, NullLogger());
  options.host_root = out_;
  auto actual = Discover(options, NullLogger());
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(recorded_log.text().find("malformed"), std::string::npos) << recorded_log.text();
}

INSTANTIATE_TEST_SUITE_P(Nodes, SeparateFilesTest,
                         ::testing::Values("nd-gb300-v6", "a4-highgpu-8g", "nd-mi300x-v5", "aws-p4d", "oci-gb200",
                                           "alibaba-gn8is", "baremetal-2cx7"));

TEST(SnapshotLinks, MalformedRecordedFactsAreLoggedAndReadAsAbsent) {
  testing::FakeHost host;
  host.Netdev("", "eth0", 2);
  host.File(kSnapshotNetlinkFile, R"({"formatVersion": 2, "links": [
      {"name": "eth0", "kind": "", "addresses": [], "ifindex": 7, "mtu": -5, "flags": "up", "arpType": 70000,
       "operstate": "up", "mac": "02:00:00:00:00:07"}]})");
  CapturedLog log;
  auto facts = ReadSnapshotNetlinkFacts(host.root(), log.log);
  ASSERT_EQ(facts.links.size(), 1u);
  const LinkFacts& link = facts.links[0];
  EXPECT_EQ(link.ifindex, 7) << "the recorded facts win over the sysfs files";
  EXPECT_EQ(link.mtu, 0u);
  EXPECT_EQ(link.flags, 0u);
  EXPECT_EQ(link.arp_type, 0u);
  EXPECT_EQ(link.operstate, "up");
  EXPECT_EQ(link.mac, "02:00:00:00:00:07");
  for (const char* member : {"\"mtu\"", "\"flags\"", "\"arpType\""}) {
    EXPECT_NE(log.text().find(member), std::string::npos) << member << "\n" << log.text();
  }
}

TEST(PciUevent, ReadsTheKernelsKeys) {
  auto uevent = ParsePciUevent(
      "DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_ID=15B3:101E\nPCI_SUBSYS_ID=15B3:0016\n"
      "PCI_SLOT_NAME=0000:17:00.2\nMODALIAS=pci:v000015B3d0000101Esv000015B3sd00000016bc02sc00i00\n");
  EXPECT_EQ(uevent.driver, "mlx5_core");
  EXPECT_EQ(uevent.vendor_id, 0x15b3u);
  EXPECT_EQ(uevent.device_id, 0x101eu);
  EXPECT_EQ(uevent.subsystem_vendor_id, 0x15b3u);
  EXPECT_EQ(uevent.subsystem_device_id, 0x0016u);
  // Unbound: no DRIVER= line. Malformed ids are left empty, not guessed.
  auto unbound = ParsePciUevent("PCI_CLASS=20000\nPCI_ID=15B3\nPCI_SUBSYS_ID=15B3:1FFFF\nGARBAGE\n=\n");
  EXPECT_EQ(unbound.driver, "");
  EXPECT_FALSE(unbound.vendor_id);
  EXPECT_FALSE(unbound.device_id);
  EXPECT_FALSE(unbound.subsystem_device_id);
  EXPECT_FALSE(ParsePciUevent("").vendor_id);
}

TEST(CaptureSnapshot, RefusesANonEmptyDirectory) {
  std::string pattern = (fs::temp_directory_path() / "dranet-capture-XXXXXX").string();
  fs::path dir = mkdtemp(pattern.data());
  { std::ofstream(dir / "keep") << "x"; }
  CaptureOptions capture;
  capture.host_root = NodeSnapshot("nd-gb300-v6");
  EXPECT_THROW(CaptureSnapshot(dir, capture, NullLogger()), std::runtime_error);
  EXPECT_TRUE(fs::exists(dir / "keep"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dranet::inventory

namespace dranet::inventory {
namespace {

// Plugins declare the sysfs files they read beyond discovery's
// (dranet_plugin_t.snapshot_paths); capture copies what the globs name,
// following the kernel's links, and nothing else.
TEST(CaptureSnapshot, CopiesWhatTheDeclaredGlobsName) {
  std::string pattern = (fs::temp_directory_path() / "dranet-capture-XXXXXX").string();
  const fs::path dir = mkdtemp(pattern.data());
  const fs::path source = dir / "source", out = dir / "out";
  fs::copy(NodeSnapshot("a4-highgpu-8g"), source, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  // Counters of two RoCE netdevs, reached through class/net/<if> links.
  for (const char* netdev : {"gpu0rdma0", "gpu1rdma0"}) {
    const fs::path stats = fs::canonical(source / "sys/class/net" / netdev) / "statistics";
    fs::create_directories(stats);
    std::ofstream(stats / "rx_bytes") << "1234\n";
    std::ofstream(stats / "tx_bytes") << "5678\n";
  }
  CaptureOptions capture;
  capture.host_root = source;
  capture.extra_sysfs_globs = {"class/net/gpu*/statistics/rx_bytes", "../etc/passwd", "/sys/class/net/*/mtu"};
  std::ostringstream log;
  Logger logger(log);
  CaptureSnapshot(out, capture, logger);

  for (const char* netdev : {"gpu0rdma0", "gpu1rdma0"}) {
    EXPECT_EQ(ReadSysfsValue(out / "sys/class/net" / netdev / "statistics/rx_bytes"), "1234") << netdev;
    EXPECT_FALSE(fs::exists(out / "sys/class/net" / netdev / "statistics/tx_bytes")) << "not declared";
  }
  EXPECT_FALSE(fs::exists(out / "etc"));
  EXPECT_NE(log.str().find("snapshot path skipped"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("a \\\".\\\" or \\\"..\\\" component"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("absolute"), std::string::npos) << log.str();
  // What discovery reads is captured anyway, the speed and rate included.
  EXPECT_EQ(ReadSysfsValue(out / "sys/class/net/gpu0rdma0/speed"), "400000");
  EXPECT_EQ(ReadSysfsValue(out / "sys/class/infiniband/mlx5_0/ports/1/rate"), "400 Gb/sec (4X NDR)");
  fs::remove_all(dir);
}

TEST(CaptureSnapshot, GlobProblems) {
  EXPECT_EQ(SnapshotGlobProblem("class/net/*/speed"), "");
  EXPECT_EQ(SnapshotGlobProblem("class/infiniband/*/ports/[0-9]/rate"), "");
  EXPECT_NE(SnapshotGlobProblem(""), "");
  EXPECT_NE(SnapshotGlobProblem("/sys/class"), "");
  EXPECT_NE(SnapshotGlobProblem("class//net"), "");
  EXPECT_NE(SnapshotGlobProblem("class/net/"), "");
  EXPECT_NE(SnapshotGlobProblem("class/../.."), "");
  EXPECT_NE(SnapshotGlobProblem("./class"), "");
  EXPECT_NE(SnapshotGlobProblem(std::string(256, 'a')), "");
}

}  // namespace
}  // namespace dranet::inventory
