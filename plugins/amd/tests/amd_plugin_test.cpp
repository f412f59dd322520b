// The amd plugin .so through the plugin host: MI300X NIC/GPU pairing from
// the node snapshot's sysfs, ROCm SMI absent or seeing no GPU, and the
// NCCL_IB_HCA injection RCCL reads.
#include <gtest/gtest.h>

#include "plugin_fixture.h"

namespace {

namespace fs = std::filesystem;
using dranet::plugins::PluginOutcome;

const fs::path kNodes(DRANET_TEST_NODES_DIR);
const fs::path kMi300x = kNodes / "nd-mi300x-v5";

class AmdPluginTest : public dranet::plugins::testing::PluginFixture {
 protected:
  static std::vector<dranet::inventory::Device> Mi300xNics() {
    std::vector<dranet::inventory::Device> out;
    for (int i = 0; i < 8; ++i) out.push_back(Nic("010" + std::to_string(i + 1) + ":00:00.0", "mlx5_" + std::to_string(i)));
    return out;
  }
};

TEST_F(AmdPluginTest, Mi300xNicsPairWithTheGpusOfTheirNumaNode) {
  auto host = Load("amd", {{"rocm-smi", "off"}}, kMi300x);
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  auto devices = Mi300xNics();
  host->Annotate(devices);
  for (int i = 0; i < 8; ++i) {
    const auto& d = devices[static_cast<std::size_t>(i)];
    EXPECT_EQ(Str(d, "amd.dra.net/nearestGpu"), "000" + std::to_string(i + 2) + ":00:00.0") << d.name;
    EXPECT_EQ(Str(d, "amd.dra.net/nearestGpuIndex"), std::to_string(i)) << d.name;
    EXPECT_EQ(Str(d, "amd.dra.net/gpuLink"), "NODE") << d.name;
  }
  EXPECT_NE(Log().find("AMD GPUs (from sysfs): 0002:00:00.0,"), std::string::npos) << Log();
}

TEST_F(AmdPluginTest, RocmSmiAbsentFallsBackToSysfs) {
  auto host = Load("amd", {{"rocm-smi", "on"}, {"rocm-smi-library", "/nonexistent/librocm_smi64.so.1"}}, kMi300x);
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  EXPECT_NE(Log().find("ROCm SMI not used (cannot load /nonexistent/librocm_smi64.so.1"), std::string::npos) << Log();
  auto devices = Mi300xNics();
  host->Annotate(devices);
  EXPECT_EQ(Str(devices[4], "amd.dra.net/nearestGpu"), "0006:00:00.0");
}

// The real ROCm SMI library where it is installed: this machine has no AMD
// GPU, so rsmi_init must report none and the plugin must carry on.
TEST_F(AmdPluginTest, RocmSmiWithoutAmdGpusMeansNoGpus) {
  if (!fs::exists("/usr/lib/librocm_smi64.so.1")) GTEST_SKIP() << "librocm-smi64-1 not installed";
  if (fs::exists("/sys/module/amdgpu")) GTEST_SKIP() << "this machine has the amdgpu driver loaded";
  auto host = Load("amd", {{"rocm-smi", "on"}}, kMi300x);
  ASSERT_EQ(host->loaded_count(), 1u) << Log();
  EXPECT_NE(Log().find("ROCm SMI not used ("), std::string::npos) << Log();
  EXPECT_NE(Log().find("AMD GPUs (from sysfs)"), std::string::npos) << Log();

  // And on a node without AMD GPUs in sysfs either, the plugin opts out.
  auto none = Load("amd", {{"rocm-smi", "on"}}, kNodes / "nd-gb300-v6");
  EXPECT_EQ(none->loaded_count(), 0u);
}

TEST_F(AmdPluginTest, InjectsExactHcaListForRccl) {
  auto host = Load("amd", {{"rocm-smi", "off"}}, kMi300x);
  auto edits = host->Inject({"ns", "claim", "uid-1"}, {Nic("0104:00:00.0", "mlx5_3"), Nic("0101:00:00.0", "mlx5_0")});
  EXPECT_TRUE(edits.errors.empty());
  EXPECT_EQ(edits.env.at("NCCL_IB_HCA"), "=mlx5_0,mlx5_3");
}

TEST_F(AmdPluginTest, NotApplicableWithoutAmdGpus) {
  auto host = Load("amd", {{"rocm-smi", "off"}}, kNodes / "a4-highgpu-8g");
  EXPECT_EQ(host->loaded_count(), 0u);
  ASSERT_NE(Report(*host, "amd"), nullptr);
  EXPECT_EQ(Report(*host, "amd")->outcome, PluginOutcome::kNotApplicable);
}

}  // namespace
