// Root tests: every NetworkConfig field of a claim, from prepare (the real
// plan builder against the live host: netlink, ethtool netlink, sysctls) to
// the pod (the real NetnsMover moving a real veth into a pod network
// namespace) and back. Each field is read back from the kernel inside the pod
// namespace (rtnetlink dumps, ethtool, /proc/sys), and after teardown the
// host must have its own values again. Skipped when not root or without `ip`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <net/if.h>

#include "inject/netns_mover.h"
#include "inventory/bpf_programs.h"
#include "inventory/inventory.h"
#include "kubelet/claim_plan_builder.h"
#include "kubelet/host_access.h"
#include "kubelet/network_config.h"
#include "kubelet/plugin_profile_provider.h"
#include "plugins/plugin_host.h"
#include "bpf_test_programs.h"
#include "dnsmasq_server.h"
#include "netns_lab.h"
#include "shell_command.h"

namespace dranet::testing {
namespace {

using ::testing::HasSubstr;

class ClaimConfigNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (!Ok("ip -V")) GTEST_SKIP() << "needs the ip tool";
    static int counter = 0;
    const std::string id = std::to_string(::getpid() % 100000) + "c" + std::to_string(counter++);
    octet_ = std::to_string(10 + (::getpid() + counter) % 200);
    pod_ns_ = "dncfg" + id;
    host_ = "dnc" + id;
    peer_ = "dnq" + id;
    ASSERT_TRUE(Ok("ip netns add " + pod_ns_));
    ASSERT_TRUE(Ok("ip link add " + host_ + " type veth peer name " + peer_));
    ASSERT_TRUE(Ok("ip addr add 10.241." + octet_ + ".2/24 dev " + host_));
    ASSERT_TRUE(Ok("ip link set " + peer_ + " up"));
    ASSERT_TRUE(Ok("ip link set " + host_ + " up"));
    ASSERT_TRUE(Ok("ip route add 10.243." + octet_ + ".0/24 via 10.241." + octet_ + ".1 dev " + host_));
    // Host values the pod's config differs from, to be found again after teardown.
    ASSERT_TRUE(Ok("sysctl -qw net.ipv4.conf." + host_ + ".arp_ignore=2"));
    ASSERT_TRUE(Ok("sysctl -qw net.ipv4.conf." + host_ + ".arp_announce=1"));
    host_before_ = HostSummary();
    inventory::Device device;
    device.name = "net-cfg-test";
    device.if_name = host_;
    inventory_ = {device};
    options_.pool_name = "node-a";
  }

  void TearDown() override {
    if (host_.empty()) return;
    Ok("ip link del " + host_);
    Ok("ip -n " + pod_ns_ + " link del cfg0");
    Ok("ip netns del " + pod_ns_);
  }

  kube::ResourceClaim Claim(const std::string& config) {
    kube::ResourceClaim claim;
    claim.namespace_name = "ml";
    claim.name = "cfg";
    claim.uid = "claim-cfg";
    claim.allocated = true;
    claim.results.push_back({"nic", "dra.net", "node-a", "net-cfg-test", "", false});
    claim.configs.push_back({"FromClaim", {}, "dra.net", config});
    claim.reserved_for.push_back({"", "pods", "worker", "pod-cfg"});
    return claim;
  }

  inject::ClaimPlan Prepare(const std::string& config) {
    kubelet::HostAccess host = kubelet::LiveHostAccess(
        [this] { return inventory::ReadNetlinkFacts(inventory::DiscoveryOptions{}, log_); }, nullptr);
    return kubelet::BuildClaimPlan(Claim(config), inventory_, options_, {}, host);
  }

  inject::PodSandboxRef Pod() const { return {"pod-cfg", "ml", "worker", "/var/run/netns/" + pod_ns_}; }

  // The netdev as the pod's kernel reports it (rtnetlink: iproute2 here may
  // not print every attribute).
  inventory::LinkFacts PodLink(const std::string& name) {
    for (const auto& link : netlab::ReadFactsIn("/var/run/netns/" + pod_ns_, log_).links)
      if (link.name == name) return link;
    ADD_FAILURE() << name << " is not in the pod";
    return {};
  }
  std::string InPod(const std::string& command) { return Capture("ip netns exec " + pod_ns_ + " " + command); }

  // What must be the same on the host before prepare and after teardown.
  std::string HostSummary() {
    std::string out;
    for (const auto& link : inventory::ReadNetlinkFacts(inventory::DiscoveryOptions{}, log_).links) {
      if (link.name != host_) continue;
      out += "mac " + link.mac + " mtu " + std::to_string(link.mtu) + " gso " + std::to_string(link.gso_max_size) +
             " gro " + std::to_string(link.gro_max_size) + " gso4 " + std::to_string(link.gso_ipv4_max_size) +
             " gro4 " + std::to_string(link.gro_ipv4_max_size) + " up " + std::to_string(link.flags & 1) + "\n";
    }
    out += Capture("cat /proc/sys/net/ipv4/conf/" + host_ + "/arp_ignore /proc/sys/net/ipv4/conf/" + host_ +
                   "/arp_announce");
    out += Capture("ip -4 addr show dev " + host_ + " | grep inet");
    out += Capture("ip route show dev " + host_);
    out += Capture("ethtool -k " + host_ + " | grep -E 'tcp-segmentation-offload|generic-receive-offload|"
                   "large-receive-offload'");
    return out;
  }

  std::string host_, peer_, pod_ns_, octet_;
  std::string host_before_;
  std::vector<inventory::Device> inventory_;
  kubelet::PlanBuilderOptions options_;
  std::ostringstream log_out_;
  Logger log_{log_out_};
};

TEST_F(ClaimConfigNetnsTest, EveryLinkFieldIsAppliedInThePodAndTheHostGetsItsOwnBack) {
  const std::string net = "10.241." + octet_ + ".";
  const auto plan = Prepare(R"({"interface":{"name":"cfg0","mtu":4000,"hardwareAddr":"02:11:22:33:44:55",
      "addresses":[")" + net + R"(7/24"],"gsoMaxSize":131072,"groMaxSize":131072,"gsoIPv4MaxSize":98304,
      "groIPv4MaxSize":98304,"arpIgnore":1,"arpAnnounce":2},
      "routes":[{"destination":"10.244.)" + octet_ + R"(.0/24","gateway":")" + net + R"(1","table":100}],
      "rules":[{"priority":1000,"source":")" + net + R"(0/24","table":100}],
      "neighbors":[{"destination":")" + net + R"(9","hardwareAddr":"02:aa:bb:cc:dd:01"}],
      "ethtool":{"features":{"tso":false,"gro":false}}})");
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(), {plan});

  const auto link = PodLink("cfg0");
  EXPECT_EQ(link.mac, "02:11:22:33:44:55");
  EXPECT_EQ(link.mtu, 4000U);
  EXPECT_EQ(link.gso_max_size, 131072U);
  EXPECT_EQ(link.gro_max_size, 131072U);
  if (link.gso_ipv4_max_size != 0) {  // Linux 6.3+
    EXPECT_EQ(link.gso_ipv4_max_size, 98304U);
    EXPECT_EQ(link.gro_ipv4_max_size, 98304U);
  }
  EXPECT_EQ(InPod("cat /proc/sys/net/ipv4/conf/cfg0/arp_ignore /proc/sys/net/ipv4/conf/cfg0/arp_announce"), "1\n2\n");
  const std::string features = InPod("ethtool -k cfg0");
  EXPECT_THAT(features, HasSubstr("tcp-segmentation-offload: off"));
  EXPECT_THAT(features, HasSubstr("generic-receive-offload: off"));
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " -4 addr show dev cfg0"), HasSubstr(net + "7/24"));
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " route show table 100"),
              HasSubstr("10.244." + octet_ + ".0/24 via " + net + "1 dev cfg0"));
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " rule"), HasSubstr("1000:\tfrom " + net + "0/24 lookup 100"));
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " neigh show dev cfg0"), HasSubstr(net + "9 lladdr 02:aa:bb:cc:dd:01 PERMANENT"));
  // The host's own route came along (copied host routes).
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " route show"), HasSubstr("10.243." + octet_ + ".0/24 via " + net + "1"));

  mover.DetachNetdevs(Pod(), {plan});
  EXPECT_EQ(HostSummary(), host_before_);
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " link"), ::testing::Not(HasSubstr("cfg0")));
}

// A netdev whose MAC the pod changed is still found (by that MAC) when it
// comes back under another name, and gets its own MAC back.
TEST_F(ClaimConfigNetnsTest, NetdevWithThePodsMacIsFoundAndGetsItsOwnBack) {
  const auto plan = Prepare(R"({"interface":{"name":"cfg0","hardwareAddr":"02:11:22:33:44:66"}})");
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(), {plan});
  // The pod renames it: only the MAC the claim gave it identifies it now.
  ASSERT_TRUE(Ok("ip -n " + pod_ns_ + " link set cfg0 down"));
  ASSERT_TRUE(Ok("ip -n " + pod_ns_ + " link set cfg0 name renamed0"));
  mover.DetachNetdevs(Pod(), {plan});
  EXPECT_EQ(HostSummary(), host_before_);
}

// Unprepare after StopPodSandbox detaches the same pod again: the netdev is
// home and restored already, and what the host did with it since stays.
TEST_F(ClaimConfigNetnsTest, ASecondDetachLeavesARestoredNetdevAlone) {
  const auto plan = Prepare(R"({"interface":{"name":"cfg0","mtu":4000,"arpIgnore":1}})");
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(), {plan});
  mover.DetachNetdevs(Pod(), {plan});
  EXPECT_EQ(HostSummary(), host_before_);
  ASSERT_TRUE(Ok("ip link set " + host_ + " mtu 1400"));
  ASSERT_TRUE(Ok("sysctl -qw net.ipv4.conf." + host_ + ".arp_ignore=0"));
  mover.DetachNetdevs({"pod-cfg", "", "", ""}, {plan});
  EXPECT_THAT(Capture("ip link show " + host_), HasSubstr("mtu 1400"));
  EXPECT_EQ(Capture("cat /proc/sys/net/ipv4/conf/" + host_ + "/arp_ignore"), "0\n");
  // Attached again, it is restored again.
  mover.AttachNetdevs(Pod(), {plan});
  mover.DetachNetdevs(Pod(), {plan});
  EXPECT_EQ(HostSummary(), host_before_);
}

// interface.dhcp against a real DHCP server (dnsmasq) at the other end of
// the veth: the lease is the pod's address, its option-121 routes are the
// pod's, the pod reaches the server, and unprepare releases the lease.
TEST_F(ClaimConfigNetnsTest, DhcpLeaseFromARealServerIsThePodsAndIsReleasedAtUnprepare) {
  if (!std::filesystem::exists(kDnsmasqPath)) GTEST_SKIP() << "needs " << kDnsmasqPath << " (dnsmasq-base)";
  const std::string server_ns = pod_ns_ + "s";
  const std::string net = "198.18." + octet_ + ".";
  ASSERT_TRUE(Ok("ip netns add " + server_ns));
  struct Cleanup {
    std::string ns;
    ~Cleanup() { Ok("ip netns del " + ns); }
  } cleanup{server_ns};
  ASSERT_TRUE(Ok("ip link set " + peer_ + " netns " + server_ns));
  ASSERT_TRUE(Ok("ip -n " + server_ns + " addr add " + net + "1/24 dev " + peer_));
  ASSERT_TRUE(Ok("ip -n " + server_ns + " link set " + peer_ + " up"));
  const auto dir = std::filesystem::temp_directory_path() / ("dranet-cfg-dhcp-" + pod_ns_);
  std::filesystem::create_directories(dir);
  DnsmasqServer dnsmasq(dir);
  ASSERT_NO_THROW(dnsmasq.Start(server_ns, peer_, net + "50," + net + "50",
                                {"--dhcp-option=121,10.246." + octet_ + ".0/24," + net + "254"}));

  const auto plan = Prepare(R"({"interface":{"name":"cfg0","dhcp":true}})");
  const auto& n = plan.netdevs.at(0);
  EXPECT_EQ(n.addresses, std::vector<std::string>{net + "50/24"});
  ASSERT_TRUE(n.dhcp_lease);
  EXPECT_EQ(n.dhcp_lease->server_id, net + "1");
  EXPECT_THAT(dnsmasq.Leases(), HasSubstr(net + "50"));
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(), {plan});
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " -4 addr show dev cfg0"), HasSubstr(net + "50/24"));
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " route show"), HasSubstr("10.246." + octet_ + ".0/24 via " + net + "254"));
  // The pod reaches the server: a datagram to it resolves the server's MAC.
  Ok("ip netns exec " + pod_ns_ + " bash -c 'echo x > /dev/udp/" + net + "1/9'");
  EXPECT_TRUE(Eventually([&] {
    return Capture("ip -n " + pod_ns_ + " neigh show " + net + "1").find("lladdr") != std::string::npos;
  })) << "the pod does not reach the DHCP server";
  mover.DetachNetdevs(Pod(), {plan});
  kubelet::HostAccess host = kubelet::LiveHostAccess({}, nullptr);
  EXPECT_TRUE(kubelet::ReleaseClaimResources(plan, host).empty());
  EXPECT_TRUE(Eventually([&] { return dnsmasq.Leases().find(net + "50") == std::string::npos; }))
      << "still leased: " << dnsmasq.Leases() << ReadAll(dnsmasq.log_path());
  dnsmasq.Stop();
  std::filesystem::remove_all(dir);
}

// disableEbpfPrograms: a tcx program on the host's netdev goes into the pod
// with it (tc filters do not: a move drops the netdev's qdiscs) and is
// detached there; the host side publishes it first.
TEST_F(ClaimConfigNetnsTest, DisableEbpfProgramsDetachesWhatCameAlongIntoThePod) {
  auto program = LoadTcxProgram("dranet_cfg", kTcxPass);
  ASSERT_TRUE(program.valid()) << "BPF_PROG_LOAD: " << std::strerror(errno);
  const int err = AttachTcxProgram(program, ::if_nametoindex(host_.c_str()), inventory::kBpfTcxIngress);
  if (err == EINVAL) GTEST_SKIP() << "kernel without tcx";
  ASSERT_EQ(err, 0) << std::strerror(err);
  const auto listed = inventory::ListAttachedBpfPrograms(static_cast<int>(::if_nametoindex(host_.c_str())));
  ASSERT_EQ(listed.size(), 1U);

  const auto plan = Prepare(R"({"interface":{"name":"cfg0","disableEbpfPrograms":true}})");
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(), {plan});
  std::vector<inventory::AttachedBpfProgram> in_pod;
  inject::RunInNetns(inject::OpenNetns("/var/run/netns/" + pod_ns_), [&] {
    in_pod = inventory::ListAttachedBpfPrograms(static_cast<int>(::if_nametoindex("cfg0")));
  });
  EXPECT_TRUE(in_pod.empty());
  EXPECT_THAT(log_out_.str(), HasSubstr("BPF program detached"));
  EXPECT_THAT(log_out_.str(), HasSubstr("dranet_cfg"));
  mover.DetachNetdevs(Pod(), {plan});
}

// Unknown ethtool names fail at prepare, while kubelet can still report it.
TEST_F(ClaimConfigNetnsTest, EthtoolNamesTheNetdevLacksFailAtPrepare) {
  try {
    Prepare(R"({"ethtool":{"features":{"no-such-offload":true,"tso":false}}})");
    FAIL() << "prepared";
  } catch (const kubelet::PrepareError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no-such-offload"));
    EXPECT_THAT(e.what(), HasSubstr(host_));
  }
  EXPECT_EQ(HostSummary(), host_before_);
}

// This kernel may lack VRF: then a VRF config fails at prepare, clearly; with
// VRF the netdev is in a VRF of that table in the pod.
TEST_F(ClaimConfigNetnsTest, VrfIsMadeInThePodOrRefusedAtPrepareWhereTheKernelHasNone) {
  const std::string config = R"({"interface":{"name":"cfg0","vrf":{"name":"blue","table":1100}}})";
  const bool kernel_has_vrf = Ok("ip link add dncfgvrf" + octet_ + " type vrf table 1101") &&
                              Ok("ip link del dncfgvrf" + octet_);
  if (!kernel_has_vrf) {
    try {
      Prepare(config);
      FAIL() << "prepared a VRF config on a kernel without VRF";
    } catch (const kubelet::PrepareError& e) {
      EXPECT_THAT(e.what(), HasSubstr("cannot create VRF devices: the kernel has no VRF support"));
    }
    return;
  }
  const auto plan = Prepare(config);
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(), {plan});
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " -d link show blue"), HasSubstr("vrf table 1100"));
  EXPECT_THAT(Capture("ip -n " + pod_ns_ + " link show cfg0"), HasSubstr("master blue"));
  EXPECT_EQ(InPod("cat /proc/sys/net/ipv4/tcp_l3mdev_accept /proc/sys/net/ipv4/udp_l3mdev_accept"), "1\n1\n");
  mover.DetachNetdevs(Pod(), {plan});
  EXPECT_EQ(HostSummary(), host_before_);
}

// Stands in for a profile provider (whereabouts, a webhook): every profile
// resolves to one address.
class OneAddressProfiles : public kubelet::ProfileProvider {
 public:
  explicit OneAddressProfiles(std::string cidr) : cidr_(std::move(cidr)) {}
  std::string GetProfileConfig(const kubelet::ProfileDevice&, const std::string&, const std::string&,
                               std::stop_token) override {
    return R"({"interface":{"addresses":[")" + cidr_ + R"("]}})";
  }
  void ReleaseProfileConfig(const kubelet::ProfileDevice&, const std::string&, const std::string&,
                            std::stop_token) override {
    ++released;
  }
  std::string Describe() const override { return "test profiles"; }
  int released = 0;

 private:
  std::string cidr_;
};

// --profile-provider=cloud: a plugin (the fake, ABI 1.2) resolves the
// profile; its address, route and MTU reach the pod, the host gets its netdev
// back as it was, and unprepare releases the profile at the plugin.
TEST_F(ClaimConfigNetnsTest, CloudProfileFromAPluginIsAppliedInThePodAndReleased) {
  const auto plugin_dir = std::filesystem::temp_directory_path() / ("dranet-cfg-plugins-" + pod_ns_);
  std::filesystem::remove_all(plugin_dir);
  std::filesystem::create_directories(plugin_dir);
  std::filesystem::copy_file(std::filesystem::path(DRANET_FAKE_PLUGIN_DIR) / "dranet-plugin-fake.so",
                             plugin_dir / "dranet-plugin-fake.so");
  plugins::PluginHostOptions options;
  options.plugin_dirs = {plugin_dir};
  options.require_root_owned = false;
  options.config["fake"]["profile-config"] = R"({"interface":{"mtu":3000,"addresses":["10.247.)" + octet_ +
                                             R"(.7/24"]},"routes":[{"destination":"10.248.)" + octet_ +
                                             R"(.0/24","gateway":"10.247.)" + octet_ + R"(.1"}]})";
  plugins::PluginHost plugin_host(options, log_);
  ASSERT_EQ(plugin_host.ProfilePlugins(), std::vector<std::string>{"fake"}) << log_out_.str();
  kubelet::HostAccess host = kubelet::LiveHostAccess(
      [this] { return inventory::ReadNetlinkFacts(inventory::DiscoveryOptions{}, log_); },
      kubelet::MakePluginProfileProvider(plugin_host));

  const auto plan = kubelet::BuildClaimPlan(Claim(R"({"profile":"fake-profile","interface":{"name":"cfg0"}})"),
                                            inventory_, options_, {}, host);
  ASSERT_EQ(plan.profiles.size(), 1U);
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(), {plan});
  EXPECT_EQ(PodLink("cfg0").mtu, 3000U);
  EXPECT_THAT(InPod("ip -4 addr show dev cfg0"), HasSubstr("10.247." + octet_ + ".7/24"));
  EXPECT_THAT(InPod("ip route show"), HasSubstr("10.248." + octet_ + ".0/24 via 10.247." + octet_ + ".1 dev cfg0"));
  mover.DetachNetdevs(Pod(), {plan});
  EXPECT_EQ(HostSummary(), host_before_);
  EXPECT_TRUE(kubelet::ReleaseClaimResources(plan, host).empty());
  EXPECT_THAT(log_out_.str(), HasSubstr("fake released profile fake-profile of " + plan.profiles.at(0).device));
  std::filesystem::remove_all(plugin_dir);
}

std::vector<std::string> DranetConfigFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(DRANET_CLAIM_CONFIGS_DIR))
    if (entry.path().extension() == ".json") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

class DranetManifestConfigTest : public ClaimConfigNetnsTest, public ::testing::WithParamInterface<std::string> {};

// Each opaque config of DRANET's own e2e manifests prepares against a live
// veth, is applied in a pod namespace, and the host gets its state back.
TEST_P(DranetManifestConfigTest, PreparesAppliesAndRestoresTheHost) {
  std::ifstream in(std::string(DRANET_CLAIM_CONFIGS_DIR) + "/" + GetParam());
  const std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(config.empty());
  const auto parsed = kubelet::ParseNetworkConfig(config);
  auto profiles = std::make_shared<OneAddressProfiles>("10.245." + octet_ + ".5/24");
  kubelet::HostAccess host = kubelet::LiveHostAccess(
      [this] { return inventory::ReadNetlinkFacts(inventory::DiscoveryOptions{}, log_); }, profiles);
  if (parsed.interface.vrf && !host.vrf_unsupported().empty()) {
    try {
      kubelet::BuildClaimPlan(Claim(config), inventory_, options_, {}, host);
      FAIL() << "a VRF config prepared on a kernel without VRF";
    } catch (const kubelet::PrepareError& e) {
      EXPECT_THAT(e.what(), HasSubstr("cannot create VRF devices"));
    }
    EXPECT_EQ(HostSummary(), host_before_);
    return;
  }
  const auto plan = kubelet::BuildClaimPlan(Claim(config), inventory_, options_, {}, host);
  inject::NetnsMover mover({}, log_);
  mover.AttachNetdevs(Pod(), {plan});
  const std::string pod_name = parsed.interface.name.empty() ? host_ : parsed.interface.name;
  const auto link = PodLink(pod_name);
  EXPECT_EQ(link.flags & 1U, 1U) << "up";
  // The addresses the config (or its profile) asked for, not whatever the plan holds.
  std::vector<std::string> wanted = parsed.interface.addresses;
  if (!parsed.profile.empty()) wanted.push_back("10.245." + octet_ + ".5/24");
  if (wanted.empty()) wanted.push_back("10.241." + octet_ + ".2/24");  // the host's, copied
  const std::string pod_addresses = Capture("ip -n " + pod_ns_ + " addr show dev " + pod_name);
  for (const auto& address : wanted) EXPECT_THAT(pod_addresses, HasSubstr("inet " + address)) << address;
  const auto& i = parsed.interface;
  EXPECT_EQ(link.mtu, i.mtu ? static_cast<uint32_t>(*i.mtu) : 1500U);
  if (i.hardware_addr) {
    EXPECT_EQ(link.mac, *i.hardware_addr);
  }
  if (i.gso_max_size) {
    EXPECT_EQ(link.gso_max_size, static_cast<uint32_t>(*i.gso_max_size));
  }
  if (i.arp_ignore) {
    EXPECT_EQ(InPod("cat /proc/sys/net/ipv4/conf/" + pod_name + "/arp_ignore"), std::to_string(*i.arp_ignore) + "\n");
  }
  if (i.forwarding) {
    EXPECT_EQ(InPod("cat /proc/sys/net/ipv4/conf/" + pod_name + "/forwarding"), "1\n");
    // IPv6 is on in the test's pod namespace: its forwarding too.
    EXPECT_EQ(InPod("cat /proc/sys/net/ipv6/conf/" + pod_name + "/forwarding"), "1\n");
  }
  for (const auto& route : parsed.routes) {
    // As `ip route` prints it: "default", and a host route without its /32.
    std::string shown = route.destination == "0.0.0.0/0" ? "default" : route.destination;
    if (shown.size() > 3 && shown.compare(shown.size() - 3, 3, "/32") == 0) shown.resize(shown.size() - 3);
    const std::string table = route.table ? std::to_string(route.table) : "main";
    EXPECT_THAT(Capture("ip -n " + pod_ns_ + " route show table " + table), HasSubstr(shown + " "));
  }
  for (const auto& rule : parsed.rules)
    EXPECT_THAT(Capture("ip -n " + pod_ns_ + " rule"), HasSubstr("lookup " + std::to_string(rule.table)));
  mover.DetachNetdevs(Pod(), {plan});
  EXPECT_TRUE(kubelet::ReleaseClaimResources(plan, host).empty());
  EXPECT_EQ(profiles->released, parsed.profile.empty() ? 0 : 1);
  EXPECT_EQ(HostSummary(), host_before_);
}

INSTANTIATE_TEST_SUITE_P(AllOfThem, DranetManifestConfigTest, ::testing::ValuesIn(DranetConfigFiles()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param.substr(0, param.param.size() - 5);
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace dranet::testing
