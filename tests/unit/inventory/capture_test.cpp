// CaptureSnapshot: a snapshot captured from a host root discovers the same
// devices as the host root itself, with a self-contained symlink structure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "inventory/inventory.h"
#include "inventory/snapshot.h"
#include "test_support.h"

namespace dranet::inventory {
namespace {

namespace fs = std::filesystem;
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
