// Which link teardown takes for a netdev (core/inject/netdev_identity.h):
// every rule on hand-made link lists, the hostile ones first.
#include "inject/netdev_identity.h"

#include <gtest/gtest.h>

namespace dranet::inject {
namespace {

inventory::LinkFacts Link(int ifindex, const std::string& name, const std::string& mac,
                          const std::string& permanent = "") {
  inventory::LinkFacts link;
  link.ifindex = ifindex;
  link.name = name;
  link.mac = mac;
  link.permanent_mac = permanent;
  return link;
}

// gpu0rdma0, MAC ...0b:01 on the host, "net1" in the pod, the claim's MAC ...0c:01.
NetdevPlan Netdev(const std::string& permanent = "") {
  NetdevPlan netdev;
  netdev.device_name = "pci-0000-0b-00-0";
  netdev.host_if_name = "gpu0rdma0";
  netdev.pod_if_name = "net1";
  netdev.settings.mac = "02:00:00:00:0c:01";
  netdev.host_state.if_name = "gpu0rdma0";
  netdev.host_state.mac = "02:00:00:00:0b:01";
  netdev.host_state.permanent_mac = permanent;
  return netdev;
}

const std::set<std::string> kUplinks = {"eth0"};

std::string NameOf(const inventory::LinkFacts* link) { return link ? link->name : "(none)"; }

TEST(NetdevOnHostTest, TheClaimsMacAloneNeverNamesAHostLink) {
  // The uplink, or an idle NIC, has the MAC the claim gave the netdev.
  const std::vector<inventory::LinkFacts> host = {Link(2, "eth0", "02:00:00:00:0c:01"),
                                                  Link(5, "gpu1rdma0", "02:00:00:00:0c:01")};
  EXPECT_EQ(NameOf(FindNetdevOnHost(host, {}, Netdev(), false)), "(none)");
  EXPECT_EQ(NameOf(FindNetdevOnHost(host, kUplinks, Netdev(), false)), "(none)");
}

TEST(NetdevOnHostTest, AnUplinkIsNeverTakenWhateverItHas) {
  auto netdev = Netdev("b8:ce:f6:00:00:01");
  const std::vector<inventory::LinkFacts> host = {Link(2, "eth0", "02:00:00:00:0b:01", "b8:ce:f6:00:00:01")};
  EXPECT_EQ(NameOf(FindNetdevOnHost(host, kUplinks, netdev, false)), "(none)");
  const std::vector<inventory::LinkFacts> named = {Link(2, "gpu0rdma0", "02:00:00:00:0b:01")};
  EXPECT_EQ(NameOf(FindNetdevOnHost(named, {"gpu0rdma0"}, Netdev(), true)), "(none)");
  EXPECT_EQ(NameOf(FindNetdevOnHost(named, {}, Netdev(), true)), "gpu0rdma0");
}

TEST(NetdevOnHostTest, TheHostNameTakesTheHostOrTheClaimsMac) {
  EXPECT_EQ(NameOf(FindNetdevOnHost({Link(5, "gpu0rdma0", "02:00:00:00:0c:01")}, kUplinks, Netdev(), true)),
            "gpu0rdma0");
  EXPECT_EQ(NameOf(FindNetdevOnHost({Link(5, "gpu0rdma0", "02:00:00:00:0b:01")}, kUplinks, Netdev(), true)),
            "gpu0rdma0");
  // Another link that took the name.
  EXPECT_EQ(NameOf(FindNetdevOnHost({Link(5, "gpu0rdma0", "02:00:00:00:0e:01")}, kUplinks, Netdev(), false)),
            "(none)");
}

TEST(NetdevOnHostTest, AStrayNetdevIsFoundByItsHostMacUnderAnyName) {
  const std::vector<inventory::LinkFacts> host = {Link(2, "eth0", "02:00:00:00:aa:01"),
                                                  Link(7, "dev7", "02:00:00:00:0b:01")};
  EXPECT_EQ(NameOf(FindNetdevOnHost(host, kUplinks, Netdev(), false)), "dev7");
  EXPECT_EQ(NameOf(FindNetdevOnHost(host, kUplinks, Netdev(), true)), "(none)");  // not home yet
}

TEST(NetdevOnHostTest, APermanentAddressDecidesAlone) {
  const auto netdev = Netdev("b8:ce:f6:00:00:01");
  // The kernel returned it as devN with the MAC the pod gave it.
  EXPECT_EQ(NameOf(FindNetdevOnHost({Link(7, "dev7", "02:00:00:00:0d:09", "b8:ce:f6:00:00:01")}, kUplinks, netdev,
                                    false)),
            "dev7");
  // Its host name and MAC, but other hardware: not it.
  EXPECT_EQ(NameOf(FindNetdevOnHost({Link(9, "gpu0rdma0", "02:00:00:00:0b:01", "b8:ce:f6:00:00:02")}, kUplinks,
                                    netdev, false)),
            "(none)");
  // No permanent address at all while the netdev had one: a virtual link.
  EXPECT_EQ(NameOf(FindNetdevOnHost({Link(9, "gpu0rdma0", "02:00:00:00:0b:01")}, kUplinks, netdev, false)),
            "(none)");
}

TEST(NetdevOnHostTest, LinksSharingTheMacAreResolvedByNameOrNotAtAll) {
  const std::vector<inventory::LinkFacts> shared = {Link(7, "vlan7", "02:00:00:00:0b:01"),
                                                    Link(8, "vlan8", "02:00:00:00:0b:01")};
  EXPECT_EQ(NameOf(FindNetdevOnHost(shared, kUplinks, Netdev(), false)), "(none)");
  auto with_pod_name = shared;
  with_pod_name.push_back(Link(9, "net1", "02:00:00:00:0b:01"));
  EXPECT_EQ(NameOf(FindNetdevOnHost(with_pod_name, kUplinks, Netdev(), false)), "net1");
}

TEST(NetdevOnHostTest, ACheckpointWithoutAMacGoesByTheHostNameOnly) {
  auto netdev = Netdev();
  netdev.host_state.mac.clear();
  netdev.settings.mac.clear();
  EXPECT_EQ(NameOf(FindNetdevOnHost({Link(5, "gpu0rdma0", "02:00:00:00:ff:01")}, kUplinks, netdev, true)),
            "gpu0rdma0");
  EXPECT_EQ(NameOf(FindNetdevOnHost({Link(5, "dev5", "02:00:00:00:ff:01")}, kUplinks, netdev, false)), "(none)");
}

TEST(NetdevInPodTest, TheAttachedIndexWinsWhateverThePodDidToTheLink) {
  const std::vector<inventory::LinkFacts> pod = {Link(1, "lo", "00:00:00:00:00:00"),
                                                 Link(3, "eth0", "02:00:00:00:0c:01"),
                                                 Link(9, "renamed", "02:00:00:00:0d:09")};
  EXPECT_EQ(NameOf(FindNetdevInPod(pod, Netdev(), 9)), "renamed");
  // Gone from its index (the pod deleted it): the pod's eth0, which the pod
  // gave the claim's MAC, is not taken for it.
  EXPECT_EQ(NameOf(FindNetdevInPod(pod, Netdev(), 12)), "(none)");
  // Attached before a restart: only the MACs tell.
  EXPECT_EQ(NameOf(FindNetdevInPod(pod, Netdev(), 0)), "eth0");
  // A permanent address that disagrees overrules the index (reused by another link).
  EXPECT_EQ(NameOf(FindNetdevInPod({Link(9, "renamed", "02:00:00:00:0d:09", "b8:ce:f6:00:00:09")},
                                   Netdev("b8:ce:f6:00:00:01"), 9)),
            "(none)");
}

TEST(NetdevInPodTest, ByPermanentAddressOrMacPreferringThePodName) {
  EXPECT_EQ(NameOf(FindNetdevInPod({Link(4, "x", "02:00:00:00:0d:09", "b8:ce:f6:00:00:01")},
                                   Netdev("b8:ce:f6:00:00:01"), 0)),
            "x");
  EXPECT_EQ(NameOf(FindNetdevInPod({Link(4, "net1", "02:00:00:00:0b:01"), Link(5, "macvlan0", "02:00:00:00:0b:01")},
                                   Netdev(), 0)),
            "net1");
  EXPECT_EQ(NameOf(FindNetdevInPod({Link(4, "other", "02:00:00:00:0d:09")}, Netdev(), 0)), "(none)");
}

}  // namespace
}  // namespace dranet::inject
