// Root tests of child interfaces (docs/sharing.md): the real plan builder
// against the live host, the real NetnsMover creating IPVLAN and macvlan
// children of a host netdev (one end of a veth) in real pod namespaces, a
// peer namespace at the other end of the veth to reach, and the host read
// back after teardown. Skipped when not root or without `ip`; what needs
// the kernel's IPVLAN driver is skipped, saying so, on a kernel without it
// (macvlan children are tested there instead).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "inject/netns_mover.h"
#include "inventory/inventory.h"
#include "kubelet/claim_plan_builder.h"
#include "kubelet/host_access.h"
#include "netns_lab.h"
#include "shell_command.h"

namespace dranet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ChildInterfaceNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (!Ok("ip -V")) GTEST_SKIP() << "needs the ip tool";
    static const bool ipvlan = KernelMakesChildren("ipvlan");
    ipvlan_ = ipvlan;
    static int counter = 0;
    const std::string id = std::to_string(::getpid() % 100000) + "k" + std::to_string(counter++);
    net_ = "10.238." + std::to_string(10 + (::getpid() + counter) % 200) + ".";
    pods_ = {"dnka" + id, "dnkb" + id};
    peer_ns_ = "dnkp" + id;
    parent_ = "dnk" + id;
    for (const auto& ns : pods_) ASSERT_TRUE(Ok("ip netns add " + ns));
    ASSERT_TRUE(Ok("ip netns add " + peer_ns_));
    // The netdev to share, and the network behind it: a peer at .1.
    ASSERT_TRUE(Ok("ip link add " + parent_ + " type veth peer name peer0 netns " + peer_ns_));
    ASSERT_TRUE(Ok("ip addr add " + net_ + "2/24 dev " + parent_));
    ASSERT_TRUE(Ok("ip link set " + parent_ + " up"));
    ASSERT_TRUE(Ok("ip -n " + peer_ns_ + " addr add " + net_ + "1/24 dev peer0"));
    ASSERT_TRUE(Ok("ip -n " + peer_ns_ + " link set peer0 up"));
    host_before_ = HostSummary();
    inventory::Device device;
    device.name = "net-child-test";
    device.if_name = parent_;
    device.attributes[std::string(inventory::attr::kEncapsulation)] = std::string("ether");
    inventory_ = {device};
    options_.pool_name = "node-a";
  }

  void TearDown() override {
    if (parent_.empty()) return;
    Ok("ip link del " + parent_);
    for (const auto& ns : pods_) Ok("ip netns del " + ns);
    Ok("ip netns del " + peer_ns_);
  }

  // Claim `name` holding share `share_id` (empty: the device alone) of the
  // device, with `config`, for pod `pod`.
  kube::ResourceClaim Claim(const std::string& name, const std::string& share_id, const std::string& config,
                            const std::string& pod) {
    kube::ResourceClaim claim;
    claim.namespace_name = "ml";
    claim.name = name;
    claim.uid = "claim-" + name;
    claim.allocated = true;
    claim.results.push_back({"nic", "dra.net", "node-a", "net-child-test", "", false});
    claim.results[0].share_id = share_id;
    if (!config.empty()) claim.configs.push_back({"FromClaim", {}, "dra.net", config});
    claim.reserved_for.push_back({"", "pods", pod, "uid-" + pod});
    return claim;
  }

  inject::ClaimPlan Prepare(const kube::ResourceClaim& claim) {
    kubelet::HostAccess host = kubelet::LiveHostAccess(
        [this] { return inventory::ReadNetlinkFacts(inventory::DiscoveryOptions{}, log_); }, nullptr);
    return kubelet::BuildClaimPlan(claim, inventory_, options_, {}, host);
  }

  inject::PodSandboxRef Pod(std::size_t i) const {
    const std::string pod = i == 0 ? "pod-a" : "pod-b";
    return {"uid-" + pod, "ml", pod, "/var/run/netns/" + pods_[i]};
  }
  // Whether namespace `ns` reaches `address`: a TCP connection to a port
  // nobody listens on comes back refused (a round trip); without a path it
  // times out or finds no route.
  bool Reaches(const std::string& ns, const std::string& address) {
    const auto out = Capture("ip netns exec " + ns + " timeout 3 bash -c 'exec 3<>/dev/tcp/" + address + "/9'");
    return out.find("Connection refused") != std::string::npos;
  }

  // What must be the same on the host before and after: the netdev, its
  // address and routes, and no child of it anywhere on the host.
  std::string HostSummary() {
    return Capture("ip -o link show " + parent_ + " | sed 's/ qdisc.*//'") +
           Capture("ip -o -4 addr show dev " + parent_ + " | awk '{print $4}'") +
           Capture("ip route show dev " + parent_) + Capture("ip -o link show type ipvlan") +
           Capture("ip -o link show type macvlan");
  }

  // The config's interface.type for a child this kernel can make: a share's
  // default (IPVLAN) where it has the driver, else macvlan.
  std::string Kind() const { return ipvlan_ ? "ipvlan" : "macvlan"; }
  std::string TypeField() const { return ipvlan_ ? "" : R"("type":"macvlan",)"; }

  bool ipvlan_ = false;
  std::string parent_, peer_ns_, net_;
  std::vector<std::string> pods_;
  std::string host_before_;
  std::vector<inventory::Device> inventory_;
  kubelet::PlanBuilderOptions options_;
  std::ostringstream log_out_;
  Logger log_{log_out_};
};

class TwoSharesTest : public ChildInterfaceNetnsTest, public ::testing::WithParamInterface<std::string> {};

// Two shares of one netdev: each pod has its own child (IPVLAN, the default,
// or macvlan) with its own address, reaches the peer and the other pod over
// it, and does not see the other's address; the netdev never leaves the
// host. Pods go in either order, and the host is as it was.
TEST_P(TwoSharesTest, EachGetsAChildReachesThePeerAndTheHostIsAsItWas) {
  const std::string kind = GetParam();
  if (kind == "ipvlan" && !ipvlan_) GTEST_SKIP() << "this kernel has no IPVLAN driver (CONFIG_IPVLAN)";
  const std::string type = kind == "ipvlan" ? "" : R"("type":"macvlan",)";
  for (bool a_first : {true, false}) {
    SCOPED_TRACE(a_first ? "pod a deleted first" : "pod b deleted first");
    const auto plan_a = Prepare(Claim("a", "share-a", R"({"interface":{)" + type + R"("name":"net1","addresses":[")" +
                                                           net_ + R"(11/24"]}})", "pod-a"));
    const auto plan_b = Prepare(Claim("b", "share-b", R"({"interface":{)" + type + R"("name":"net1","addresses":[")" +
                                                           net_ + R"(12/24"]}})", "pod-b"));
    ASSERT_EQ(plan_a.netdevs.size(), 1U);
    EXPECT_EQ(plan_a.netdevs[0].child_type, kind);
    inject::NetnsMover mover({}, log_);
    mover.AttachNetdevs(Pod(0), {plan_a});
    mover.AttachNetdevs(Pod(1), {plan_b});

    EXPECT_THAT(Capture("ip -d -n " + pods_[0] + " link show net1"),
                HasSubstr(kind == "ipvlan" ? "ipvlan  mode l2" : "macvlan mode bridge"));
    EXPECT_THAT(Capture("ip -n " + pods_[0] + " -4 addr show dev net1"), HasSubstr(net_ + "11/24"));
    EXPECT_THAT(Capture("ip -n " + pods_[1] + " -4 addr show dev net1"), HasSubstr(net_ + "12/24"));
    EXPECT_THAT(Capture("ip -n " + pods_[0] + " -4 addr"), Not(HasSubstr(net_ + "12")));
    EXPECT_THAT(Capture("ip -n " + pods_[1] + " -4 addr"), Not(HasSubstr(net_ + "11")));
    EXPECT_TRUE(Reaches(pods_[0], net_ + "1"));
    EXPECT_TRUE(Reaches(pods_[1], net_ + "1"));
    EXPECT_TRUE(Reaches(pods_[0], net_ + "12"));
    // The netdev stays on the host with its address.
    EXPECT_THAT(Capture("ip -4 addr show dev " + parent_), HasSubstr(net_ + "2/24"));

    const std::size_t first = a_first ? 0 : 1, second = 1 - first;
    const auto& plan_first = a_first ? plan_a : plan_b;
    const auto& plan_second = a_first ? plan_b : plan_a;
    mover.DetachNetdevs(Pod(first), {plan_first});
    EXPECT_THAT(Capture("ip -n " + pods_[first] + " link"), Not(HasSubstr("net1")));
    // The other share is untouched.
    EXPECT_TRUE(Reaches(pods_[second], net_ + "1"));
    mover.DetachNetdevs(Pod(second), {plan_second});
    EXPECT_THAT(Capture("ip -n " + pods_[second] + " link"), Not(HasSubstr("net1")));
    EXPECT_EQ(HostSummary(), host_before_);
    EXPECT_EQ(mover.held_pods(), 0U);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, TwoSharesTest, ::testing::Values("ipvlan", "macvlan"));

// A device held alone with interface.type macvlan: a child with the claim's
// MAC, MTU, mode and routes; the parent keeps its own.
TEST_F(ChildInterfaceNetnsTest, AMacvlanChildHasTheClaimsMacMtuModeAndRoutes) {
  const auto plan = Prepare(Claim("m", "", R"({"interface":{"name":"mv0","type":"macvlan","macvlan":{"mode":"private"},
      "hardwareAddr":"02:00:00:5e:00:21","mtu":1400,"addresses":[")" + net_ + R"(21/24"]},
      "routes":[{"destination":"10.239.0.0/16","gateway":")" + net_ + R"(1"}]})", "pod-a"));
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(0), {plan});
  const std::string link = Capture("ip -d -n " + pods_[0] + " link show mv0");
  EXPECT_THAT(link, HasSubstr("macvlan mode private"));
  EXPECT_THAT(link, HasSubstr("mtu 1400"));
  EXPECT_THAT(link, HasSubstr("link/ether 02:00:00:5e:00:21"));
  EXPECT_THAT(Capture("ip -n " + pods_[0] + " route show"), HasSubstr("10.239.0.0/16 via " + net_ + "1 dev mv0"));
  EXPECT_TRUE(Reaches(pods_[0], net_ + "1"));
  // Attaching again (a retried hook) takes the same child.
  mover.AttachNetdevs(Pod(0), {plan});
  EXPECT_EQ(Capture("ip -n " + pods_[0] + " -o link show type macvlan | wc -l"), "1\n");
  mover.DetachNetdevs(Pod(0), {plan});
  EXPECT_THAT(Capture("ip -n " + pods_[0] + " link"), Not(HasSubstr("mv0")));
  EXPECT_EQ(HostSummary(), host_before_);
}

// A restarted dranetd adopting the running pod takes its child as it is
// (no second one), and the pod's stop deletes it; a pod that started while
// dranetd was away gets its child at adoption.
TEST_F(ChildInterfaceNetnsTest, AnAdoptedPodsChildIsTakenAgainAndDeletedAtStop) {
  const auto plan = Prepare(Claim("a", "share-a", R"({"interface":{)" + TypeField() + R"("name":"net1","addresses":[")" +
                                                     net_ + R"(11/24"]}})", "pod-a"));
  {
    inject::NetnsMover before_restart({}, log_);
    before_restart.AttachNetdevs(Pod(0), {plan});
  }
  const std::string child_before = Capture("ip -n " + pods_[0] + " -o link show net1");
  inject::NetnsMover mover({}, log_);
  mover.AdoptPod(Pod(0), {plan});
  EXPECT_EQ(Capture("ip -n " + pods_[0] + " -o link show net1"), child_before) << "the child was made again";
  ASSERT_EQ(mover.HeldNetdevs().size(), 1u);
  EXPECT_NE(mover.HeldNetdevs()[0].pod_ifindex, 0) << "the child's index in the pod is known again";
  mover.DetachNetdevs(Pod(0), {plan});
  EXPECT_THAT(Capture("ip -n " + pods_[0] + " link"), Not(HasSubstr("net1")));
  // Started while dranetd was away: adoption makes its child.
  mover.AdoptPod(Pod(0), {plan});
  EXPECT_TRUE(Reaches(pods_[0], net_ + "1"));
  mover.DetachNetdevs(Pod(0), {plan});
  EXPECT_EQ(HostSummary(), host_before_);
}

// An interface of the pod's own under the child's name is refused before
// anything is created, and never deleted as if it were the child.
TEST_F(ChildInterfaceNetnsTest, AnInterfaceOfThePodsOwnUnderTheNameIsNeverTaken) {
  ASSERT_TRUE(Ok("ip -n " + pods_[0] + " link add net1 type veth peer name own1"));
  const auto plan = Prepare(Claim("a", "share-a", R"({"interface":{)" + TypeField() + R"("name":"net1"}})", "pod-a"));
  inject::NetnsMover mover({}, log_);
  try {
    mover.AttachNetdevs(Pod(0), {plan});
    ADD_FAILURE() << "attached over the pod's own net1";
  } catch (const inject::InjectError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the pod already has an interface named net1; the " + Kind() +
                                    " child of netdev " + parent_ + " needs another name there"));
  }
  mover.DetachNetdevs(Pod(0), {plan});
  EXPECT_THAT(Capture("ip -d -n " + pods_[0] + " link show net1"), HasSubstr("veth"));
  EXPECT_EQ(HostSummary(), host_before_);
}

// The runtime deletes the pod's namespace without telling: the mover holds
// it open, reports the pod vanished, and the detach deletes the child there;
// the netdev on the host was never involved.
TEST_F(ChildInterfaceNetnsTest, AChildInANamespaceTheRuntimeForgotIsDeletedByTheReconciler) {
  const auto plan = Prepare(Claim("a", "share-a", R"({"interface":{)" + TypeField() + R"("addresses":[")" + net_ +
                                                     R"(11/24"]}})", "pod-a"));
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(0), {plan});
  ASSERT_TRUE(Ok("ip netns del " + pods_[0]));
  const auto vanished = mover.VanishedPods();
  ASSERT_EQ(vanished.size(), 1U);
  EXPECT_EQ(vanished[0].uid, "uid-pod-a");
  // Held open, the namespace still has the child: the address answers.
  EXPECT_TRUE(Reaches(peer_ns_, net_ + "11"));
  mover.DetachNetdevs(vanished[0], {});
  EXPECT_EQ(mover.held_pods(), 0U);
  EXPECT_FALSE(Reaches(peer_ns_, net_ + "11"));
  EXPECT_EQ(HostSummary(), host_before_);
  ASSERT_TRUE(Ok("ip netns add " + pods_[0]));  // for TearDown
}

// On a kernel without the IPVLAN driver a share's default child cannot be
// made: the pod start fails naming the missing driver and the way out, and
// nothing is left in the pod or on the host.
TEST_F(ChildInterfaceNetnsTest, AChildTheKernelCannotMakeFailsNamingTheDriver) {
  if (ipvlan_) GTEST_SKIP() << "this kernel has the IPVLAN driver";
  const auto plan = Prepare(Claim("a", "share-a", R"({"interface":{"name":"net1"}})", "pod-a"));
  inject::NetnsMover mover({}, log_);
  try {
    mover.AttachNetdevs(Pod(0), {plan});
    ADD_FAILURE() << "an IPVLAN child was made on a kernel that has no driver for it";
  } catch (const inject::InjectError& e) {
    EXPECT_THAT(e.what(), HasSubstr("this kernel has no ipvlan driver, CONFIG_IPVLAN; interface.type \"macvlan\""));
  }
  EXPECT_THAT(Capture("ip -n " + pods_[0] + " link"), Not(HasSubstr("net1")));
  EXPECT_EQ(HostSummary(), host_before_);
}

// Children of both types cannot share a parent (one receive handler per
// netdev): the second is refused with the reason, the first keeps working.
TEST_F(ChildInterfaceNetnsTest, AMacvlanBesideAnIpvlanOfTheSameNetdevIsRefusedWithTheReason) {
  if (!ipvlan_) GTEST_SKIP() << "this kernel has no IPVLAN driver (CONFIG_IPVLAN)";
  const auto ipvlan = Prepare(Claim("a", "share-a", R"({"interface":{"addresses":[")" + net_ + R"(11/24"]}})", "pod-a"));
  const auto macvlan = Prepare(Claim("b", "share-b", R"({"interface":{"type":"macvlan"}})", "pod-b"));
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(0), {ipvlan});
  try {
    mover.AttachNetdevs(Pod(1), {macvlan});
    ADD_FAILURE() << "a macvlan was made beside an ipvlan";
  } catch (const inject::InjectError& e) {
    EXPECT_THAT(e.what(), HasSubstr("creating macvlan child " + parent_ + " (bridge) of netdev " + parent_));
  }
  EXPECT_THAT(Capture("ip -n " + pods_[1] + " link"), Not(HasSubstr(parent_)));
  EXPECT_TRUE(Reaches(pods_[0], net_ + "1"));
  mover.DetachNetdevs(Pod(0), {ipvlan});
  EXPECT_EQ(HostSummary(), host_before_);
}

}  // namespace
}  // namespace dranet::testing
