// --shared-devices: which devices are published shareable, and with which
// capacities (cel/share_policy.h).
#include "cel/share_policy.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dranet::cel {
namespace {

using ::testing::HasSubstr;

inventory::Device Hca(std::string name, std::string rdma_device, int64_t speed_mbps, std::string if_name = "") {
  inventory::Device d;
  d.name = std::move(name);
  d.rdma_device = rdma_device;
  d.if_name = if_name;
  d.link_speed_mbps = speed_mbps;
  d.attributes["dra.net/rdma"] = !rdma_device.empty();
  if (!rdma_device.empty()) d.attributes["dra.net/rdmaDevice"] = rdma_device;
  if (!if_name.empty()) d.attributes["dra.net/ifName"] = if_name;
  d.attributes["dra.net/numaNode"] = int64_t{d.name.back() == '1' ? 1 : 0};
  return d;
}

TEST(SharePolicy, NoExpressionSharesNothing) {
  std::ostringstream text;
  Logger log(text);
  auto policy = CompileSharePolicy("", 8);
  EXPECT_FALSE(policy.enabled());
  auto devices = ApplySharePolicy(policy, {Hca("ib-0", "mlx5_0", 400000)}, log);
  EXPECT_FALSE(devices[0].allow_multiple_allocations);
  EXPECT_TRUE(devices[0].capacity.empty());
}

TEST(SharePolicy, SelectedRdmaDevicesGetSharesAndBandwidth) {
  std::ostringstream text;
  Logger log(text, Logger::Format::kText, 1);
  auto policy = CompileSharePolicy(R"(device.attributes["dra.net"].numaNode == 0)", 4);
  auto devices = ApplySharePolicy(policy,
                                  {Hca("ib-0", "mlx5_0", 800000), Hca("ib-1", "mlx5_1", 800000),
                                   Hca("eth-0", "", 100000, "eth0"), Hca("roce-0", "mlx5_2", 0, "gpu0rdma0")},
                                  log);
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_TRUE(devices[0].allow_multiple_allocations);
  const auto& shares = devices[0].capacity.at("dra.net/shares");
  EXPECT_EQ(shares.value, 4);
  EXPECT_EQ(shares.request_policy, (inventory::CapacityRequestPolicy{1, 1, 4, 1}));
  const auto& bandwidth = devices[0].capacity.at("dra.net/bandwidth");
  EXPECT_EQ(bandwidth.value, 800);  // Gbit/s
  EXPECT_EQ(bandwidth.request_policy, (inventory::CapacityRequestPolicy{200, 1, 800, 1}));
  EXPECT_FALSE(devices[1].allow_multiple_allocations);  // NUMA node 1: not selected
  EXPECT_FALSE(devices[2].allow_multiple_allocations);  // no RDMA device, netdev not known Ethernet: not shareable
  EXPECT_THAT(text.str(), HasSubstr("it has neither an RDMA device nor an Ethernet netdev"));
  EXPECT_TRUE(devices[3].allow_multiple_allocations);  // RoCE, link speed unknown: shares only
  EXPECT_EQ(devices[3].capacity.count("dra.net/bandwidth"), 0u);
}

// An Ethernet netdev without RDMA is shared through child interfaces; an
// IPoIB one without RDMA has nothing to share.
TEST(SharePolicy, AnEthernetNetdevIsSharedAnIpoibOneWithoutRdmaIsNot) {
  std::ostringstream text;
  Logger log(text, Logger::Format::kText, 1);
  auto ether = Hca("eth-0", "", 0, "eth1");
  ether.attributes["dra.net/encapsulation"] = std::string("ether");
  auto ipoib = Hca("ib-0", "", 0, "ib0");
  ipoib.attributes["dra.net/encapsulation"] = std::string("infiniband");
  auto devices = ApplySharePolicy(CompileSharePolicy("true", 4), {ether, ipoib}, log);
  EXPECT_TRUE(devices[0].allow_multiple_allocations);
  EXPECT_EQ(devices[0].capacity.at("dra.net/shares").value, 4);
  EXPECT_FALSE(devices[1].allow_multiple_allocations);
}

TEST(SharePolicy, TheDefaultBandwidthIsAFairShareOfAtLeastOneGbit) {
  EXPECT_EQ(ShareCapacities(8, 400000).at("dra.net/bandwidth").request_policy->default_value, 50);
  EXPECT_EQ(ShareCapacities(3, 100000).at("dra.net/bandwidth").request_policy->default_value, 33);
  EXPECT_EQ(ShareCapacities(16, 10000).at("dra.net/bandwidth").request_policy->default_value, 1);
  EXPECT_EQ(ShareCapacities(2, 500).count("dra.net/bandwidth"), 0u);  // below 1 Gbit/s
}

TEST(SharePolicy, AnEvaluationErrorLeavesTheDeviceExclusiveWithAWarning) {
  std::ostringstream text;
  Logger log(text);
  auto policy = CompileSharePolicy(R"(device.attributes["dra.net"].missing == 1)", 8);
  auto devices = ApplySharePolicy(policy, {Hca("ib-0", "mlx5_0", 400000)}, log);
  EXPECT_FALSE(devices[0].allow_multiple_allocations);
  EXPECT_THAT(text.str(), HasSubstr("--shared-devices cannot be evaluated"));
}

TEST(SharePolicy, BadFlagsAreRefused) {
  EXPECT_THROW(CompileSharePolicy("true", 1), std::invalid_argument);
  EXPECT_THROW(CompileSharePolicy("true", 1025), std::invalid_argument);
  EXPECT_THROW(CompileSharePolicy("device.attributes[", 8), CompileError);
  EXPECT_NO_THROW(CompileSharePolicy("true", 2));
}

}  // namespace
}  // namespace dranet::cel
