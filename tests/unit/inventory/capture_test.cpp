// CaptureSnapshot: a snapshot captured from a host root discovers the same
// devices as the host root itself, with a self-contained symlink structure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
