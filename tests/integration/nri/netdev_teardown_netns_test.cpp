// Root tests of which link teardown takes for a claim's netdev, against a
// private "node" network namespace (the NetnsMover's host namespace) that
// holds an uplink stand-in (a veth carrying the node's default route, with
// an address) and a NIC stand-in (a veth, peer in the same namespace), plus
// a pod namespace. Prepare is the real plan builder reading the node
// namespace; attach and detach are the real NetnsMover. Each hostile case
// checks that the uplink keeps its name, MAC, MTU, address and default route
// and that the failure is reported. Skipped when not root or without `ip`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "inject/netns_mover.h"
#include "kubelet/claim_plan_builder.h"
#include "kubelet/host_access.h"
#include "netns_lab.h"
#include "shell_command.h"

namespace dranet::testing {
namespace {

using ::testing::HasSubstr;

class NetdevTeardownNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (!Ok("ip -V")) GTEST_SKIP() << "needs the ip tool";
    static int counter = 0;
    const std::string id = std::to_string(::getpid() % 100000) + "t" + std::to_string(counter++);
    node_ = "dntnode" + id;
    pod_ = "dntpod" + id;
    ASSERT_TRUE(Ok("ip netns add " + node_));
    ASSERT_TRUE(Ok("ip netns add " + pod_));
    // The uplink: the node's default route leaves through it.
    ASSERT_TRUE(InNode("link add uplink0 address 02:00:00:00:0a:01 mtu 1500 type veth peer name uplinkpeer"));
    ASSERT_TRUE(InNode("link set uplinkpeer up"));
    ASSERT_TRUE(InNode("addr add 10.250.0.2/24 dev uplink0"));
    ASSERT_TRUE(InNode("link set uplink0 up"));
    ASSERT_TRUE(InNode("route add default via 10.250.0.1 dev uplink0"));
    // The NIC a claim gets.
    ASSERT_TRUE(InNode("link add gpu0rdma0 address 02:00:00:00:0b:01 mtu 1500 type veth peer name gpu0peer"));
    ASSERT_TRUE(InNode("addr add 10.251.0.2/24 dev gpu0rdma0"));
    ASSERT_TRUE(InNode("link set gpu0peer up"));
    ASSERT_TRUE(InNode("link set gpu0rdma0 up"));
    // An idle NIC no claim has.
    ASSERT_TRUE(InNode("link add gpu1rdma0 address 02:00:00:00:0b:02 mtu 1500 type veth peer name gpu1peer"));
    ASSERT_TRUE(InNode("addr add 10.253.0.2/24 dev gpu1rdma0"));
    ASSERT_TRUE(InNode("link set gpu1peer up"));
    ASSERT_TRUE(InNode("link set gpu1rdma0 up"));
    uplink_before_ = Uplink();
    idle_before_ = Idle();
    inventory::Device device;
    device.name = "net-teardown-test";
    device.if_name = "gpu0rdma0";
    inventory_ = {device};
    options_.pool_name = "node-a";
  }

  void TearDown() override {
    if (node_.empty()) return;
    Ok("ip netns del " + pod_);
    Ok("ip netns del " + node_);
  }

  bool InNode(const std::string& args) { return Ok("ip -n " + node_ + " " + args); }
  std::string NodePath() const { return "/var/run/netns/" + node_; }
  inject::PodSandboxRef Pod() const { return {"pod-t", "ml", "worker", "/var/run/netns/" + pod_}; }

  // Everything of the uplink a teardown must never change.
  std::string Uplink() {
    return Capture("ip -n " + node_ + " -o link show uplink0 | sed 's/ state [A-Z]*//'") +
           Capture("ip -n " + node_ + " -o -4 addr show dev uplink0") + Capture("ip -n " + node_ + " route show default");
  }

  std::string Idle() {
    return Capture("ip -n " + node_ + " -o link show gpu1rdma0 | sed 's/ state [A-Z]*//'") +
           Capture("ip -n " + node_ + " -o -4 addr show dev gpu1rdma0") +
           Capture("ip -n " + node_ + " route show dev gpu1rdma0");
  }

  kube::ResourceClaim Claim(const std::string& config) {
    kube::ResourceClaim claim;
    claim.namespace_name = "ml";
    claim.name = "teardown";
    claim.uid = "claim-t";
    claim.allocated = true;
    claim.results.push_back({"nic", "dra.net", "node-a", "net-teardown-test", "", false});
    if (!config.empty()) claim.configs.push_back({"FromClaim", {}, "dra.net", config});
    claim.reserved_for.push_back({"", "pods", "worker", "pod-t"});
    return claim;
  }

  // The real plan builder, reading the node namespace.
  inject::ClaimPlan Prepare(const std::string& config) {
    kubelet::HostAccess host([this] { return netlab::ReadFactsIn(NodePath(), log_); });
    return kubelet::BuildClaimPlan(Claim(config), inventory_, options_, {}, host);
  }

  std::unique_ptr<inject::NetnsMover> Mover() {
    inject::NetnsMover::Options options;
    options.host_netns_path = NodePath();
    options.on_restore_failure = [this] { ++restore_failures_; };
    return std::make_unique<inject::NetnsMover>(options, log_);
  }

  std::string node_, pod_, uplink_before_, idle_before_;
  std::vector<inventory::Device> inventory_;
  kubelet::PlanBuilderOptions options_;
  int restore_failures_ = 0;
  std::ostringstream log_out_;
  Logger log_{log_out_};
};

TEST_F(NetdevTeardownNetnsTest, PrepareRefusesAMacAnotherNodeNetdevHas) {
  try {
    Prepare(R"({"interface":{"hardwareAddr":"02:00:00:00:0A:01"}})");
    FAIL() << "prepared a claim that gives the NIC the uplink's MAC";
  } catch (const kubelet::PrepareError& e) {
    EXPECT_THAT(e.what(), HasSubstr("uplink0 already has"));
  }
  // The NIC's own MAC changes nothing and is accepted.
  EXPECT_NO_THROW(Prepare(R"({"interface":{"hardwareAddr":"02:00:00:00:0b:01"}})"));
}

// A claim MAC that equals the uplink's (a checkpoint from before prepare
// refused it, or an address the uplink took later): when the pod destroyed
// the netdev, teardown used to find the uplink by that MAC, rename it and
// give it the claim's addresses, and the node lost its default route.
TEST_F(NetdevTeardownNetnsTest, AVanishedNetdevIsReportedAndTheUplinkWithTheClaimsMacIsLeftAlone) {
  auto plan = Prepare(R"({"interface":{"name":"net1","hardwareAddr":"02:00:00:00:0c:01",
                          "addresses":["10.252.0.7/24"]}})");
  plan.netdevs.at(0).settings.mac = "02:00:00:00:0a:01";
  auto mover = Mover();
  mover->AttachNetdevs(Pod(), {plan});
  ASSERT_TRUE(Ok("ip -n " + pod_ + " link del net1"));  // a veth: both ends go
  try {
    mover->DetachNetdevs(Pod(), {plan});
    FAIL() << "a netdev that is nowhere was reported restored";
  } catch (const inject::InjectError& e) {
    EXPECT_THAT(e.what(), HasSubstr("gpu0rdma0 cannot be found"));
  }
  EXPECT_EQ(Uplink(), uplink_before_);
  EXPECT_EQ(restore_failures_, 1);
}

// The same with an idle NIC that has the claim's MAC: it is not an uplink,
// and still not taken (it has neither the netdev's name nor its host MAC).
TEST_F(NetdevTeardownNetnsTest, AnIdleNicWithTheClaimsMacIsLeftAlone) {
  auto plan = Prepare(R"({"interface":{"name":"net1","hardwareAddr":"02:00:00:00:0c:01",
                          "addresses":["10.252.0.7/24"]}})");
  plan.netdevs.at(0).settings.mac = "02:00:00:00:0b:02";
  auto mover = Mover();
  mover->AttachNetdevs(Pod(), {plan});
  ASSERT_TRUE(Ok("ip -n " + pod_ + " link del net1"));
  EXPECT_THROW(mover->DetachNetdevs(Pod(), {plan}), inject::InjectError);
  EXPECT_EQ(Idle(), idle_before_);
  EXPECT_EQ(Uplink(), uplink_before_);
  EXPECT_EQ(restore_failures_, 1);
}

// The uplink has the MAC the NIC had on the host (a bond port or VLAN
// shares it): it fits the recorded MAC, and is still never taken.
TEST_F(NetdevTeardownNetnsTest, TheUplinkIsNeverTakenEvenWithTheNetdevsHostMac) {
  ASSERT_TRUE(InNode("link set gpu0rdma0 address 02:00:00:00:0a:01"));
  const auto plan = Prepare(R"({"interface":{"name":"net1"}})");
  ASSERT_EQ(plan.netdevs.at(0).host_state.mac, "02:00:00:00:0a:01");
  auto mover = Mover();
  mover->AttachNetdevs(Pod(), {plan});
  ASSERT_TRUE(Ok("ip -n " + pod_ + " link del net1"));
  EXPECT_THROW(mover->DetachNetdevs(Pod(), {plan}), inject::InjectError);
  EXPECT_EQ(Uplink(), uplink_before_);
}

// A pod that renamed the netdev and changed its MAC: the index it got at
// attach still names it, and it comes home with its own name and MAC.
TEST_F(NetdevTeardownNetnsTest, ANetdevThePodRenamedAndReaddressedComesHomeByItsIndex) {
  const auto plan = Prepare(R"({"interface":{"name":"net1","hardwareAddr":"02:00:00:00:0c:02"}})");
  auto mover = Mover();
  mover->AttachNetdevs(Pod(), {plan});
  ASSERT_TRUE(Ok("ip -n " + pod_ + " link set net1 down"));
  ASSERT_TRUE(Ok("ip -n " + pod_ + " link set net1 address 02:00:00:00:0d:09 name other7"));
  mover->DetachNetdevs(Pod(), {plan});
  EXPECT_THAT(Capture("ip -n " + node_ + " link show gpu0rdma0"), HasSubstr("link/ether 02:00:00:00:0b:01"));
  EXPECT_THAT(Capture("ip -n " + node_ + " -4 addr show dev gpu0rdma0"), HasSubstr("10.251.0.2/24"));
  EXPECT_EQ(Uplink(), uplink_before_);
  EXPECT_EQ(restore_failures_, 0);
}

// After a restart the index is not known: a netdev with neither its host MAC
// nor the claim's is not guessed at, and nothing on the node changes.
TEST_F(NetdevTeardownNetnsTest, AfterARestartANetdevWithAStrangeMacIsReportedNotGuessed) {
  const auto plan = Prepare(R"({"interface":{"name":"net1"}})");
  Mover()->AttachNetdevs(Pod(), {plan});
  ASSERT_TRUE(Ok("ip -n " + pod_ + " link set net1 down"));
  ASSERT_TRUE(Ok("ip -n " + pod_ + " link set net1 address 02:00:00:00:0a:01 name other7"));
  auto restarted = Mover();
  // Not in the pod by what it had on the host, nor on the host: adopting
  // the pod cannot move it in, and says so.
  EXPECT_THROW(restarted->AdoptPod(Pod(), {plan}), inject::InjectError);
  EXPECT_THROW(restarted->DetachNetdevs(Pod(), {plan}), inject::InjectError);
  EXPECT_EQ(Uplink(), uplink_before_);
  EXPECT_THAT(Capture("ip -n " + pod_ + " link show other7"), HasSubstr("02:00:00:00:0a:01"));
}

}  // namespace
}  // namespace dranet::testing
