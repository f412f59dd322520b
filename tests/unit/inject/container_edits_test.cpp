#include "inject/container_edits.h"

#include <gtest/gtest.h>

namespace dranet::inject {
namespace {

ClaimPlan Plan(std::string uid, std::vector<DeviceNode> nodes, std::map<std::string, std::string> env) {
  ClaimPlan p;
  p.claim_uid = std::move(uid);
  p.device_nodes = std::move(nodes);
  p.env = std::move(env);
  return p;
}

TEST(ContainerEdits, DeduplicatesDeviceNodesAcrossClaims) {
  const DeviceNode cm{"/dev/infiniband/rdma_cm", "/dev/infiniband/rdma_cm", 10, 58};
  const DeviceNode uv0{"/dev/infiniband/uverbs0", "/dev/infiniband/uverbs0", 231, 192};
  const DeviceNode uv1{"/dev/infiniband/uverbs1", "/dev/infiniband/uverbs1", 231, 193};
  const auto edits = BuildContainerEdits({Plan("b", {uv1, cm}, {}), Plan("a", {uv0, cm}, {})}, {});
  ASSERT_EQ(edits.device_nodes.size(), 3u);
  EXPECT_EQ(edits.device_nodes[0], uv0);  // claim "a" first
  EXPECT_EQ(edits.device_nodes[1], cm);
  EXPECT_EQ(edits.device_nodes[2], uv1);
}

TEST(ContainerEdits, NeverOverridesTheContainersOwnEnv) {
  const auto edits = BuildContainerEdits(
      {Plan("b", {}, {{"NCCL_IB_HCA", "mlx5_1"}, {"B_ONLY", "1"}}),
       Plan("a", {}, {{"NCCL_IB_HCA", "mlx5_0"}, {"NCCL_SOCKET_IFNAME", "eth0"}})},
      {"NCCL_SOCKET_IFNAME=ib0", "PATH=/bin", "EMPTY="});
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(edits.env, (Env{{"B_ONLY", "1"}, {"NCCL_IB_HCA", "mlx5_0"}}));
}

TEST(ContainerEdits, EmptyWithoutPlans) {
  EXPECT_TRUE(BuildContainerEdits({}, {"A=1"}).empty());
  EXPECT_TRUE(BuildContainerEdits({Plan("a", {}, {})}, {}).empty());
}

TEST(ContainerEdits, MountsOncePerContainerPath) {
  auto a = Plan("a", {}, {});
  a.mounts = {{"/opt/a", "/opt/x", {}}};
  auto b = Plan("b", {}, {});
  b.mounts = {{"/opt/b", "/opt/x", {}}, {"/opt/c", "/opt/y", {"ro"}}};
  const auto edits = BuildContainerEdits({a, b}, {});
  ASSERT_EQ(edits.mounts.size(), 2u);
  EXPECT_EQ(edits.mounts[0].host_path, "/opt/a");
  EXPECT_EQ(edits.mounts[1].container_path, "/opt/y");
}

}  // namespace
}  // namespace dranet::inject
