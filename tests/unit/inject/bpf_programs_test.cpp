// Tests of the BPF programs on a netdev's traffic-control hooks: listing them
// (inventory/bpf_programs.h), detaching them for interface.disableEbpfPrograms
// (inject/bpf_detach.h) and the dra.net/ebpf, tcFilterNames and
// tcxProgramNames attributes discovery publishes from them, live and through
// a node snapshot's netlink.json.
//
// The live tests run as root on veths in network namespaces of their own
// (named after the pid, removed even when an assertion fails). tc filters
// come from tc_test_programs.bpf.c, built with clang's BPF target
// (DRANET_TC_TEST_OBJECT; skipped without it); tcx programs are loaded here
// with bpf(2) and attached both ways the kernel offers: BPF_PROG_ATTACH and a
// bpf_link (BPF_LINK_CREATE).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fake_host.h"
#include "inject/bpf_detach.h"
#include "inject/netns.h"
#include "inject/pod_netns_applier.h"
#include "inventory/bpf_programs.h"
#include "inventory/inventory.h"
#include "inventory/netlink_facts.h"
#include "inventory/snapshot.h"
#include "bpf_test_programs.h"
#include "shell_command.h"

namespace dranet::inject {
namespace {

namespace fs = std::filesystem;
using inventory::AttachedBpfProgram;
using inventory::BpfHook;
using inventory::BpfObjectFd;
using inventory::BpfProgramNames;
using inventory::BpfSyscall;
using dranet::UniqueFd;
using inventory::Device;

constexpr const char* kTcObject = DRANET_TC_TEST_OBJECT;
// The names `tc filter add ... bpf obj tc_test.o sec <section>` gives.
constexpr const char* kTcPassName = "tc_test.o:[tc]";
constexpr const char* kTcDropName = "tc_test.o:[classifier]";

bool Ok(const std::string& command) { return dranet::testing::Ok(command); }
std::string Capture(const std::string& command) { return dranet::testing::Capture(command); }

using testing::kTcxDrop;
using testing::kTcxPass;
using testing::LoadTcxProgram;

// Drops every capability of the calling thread only: Linux keeps
// credentials per thread, so the rest of the test process stays root.
bool DropThreadCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  return ::syscall(SYS_capset, &header, data) == 0;
}

// Drops CAP_NET_ADMIN from the calling thread's effective set and keeps the
// rest: bpf(2) still works (CAP_SYS_ADMIN), rtnetlink changes are refused.
bool DropThreadNetAdmin() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective &= ~CAP_TO_MASK(CAP_NET_ADMIN);
  return ::syscall(SYS_capset, &header, data) == 0;
}

// A network namespace created for the test and deleted with the object.
class TestNetns {
 public:
  explicit TestNetns(std::string name) : name_(std::move(name)) {
    created_ = Ok("ip netns add " + name_);
    if (!created_) return;
    try {
      handle_ = OpenNetns("/var/run/netns/" + name_);
    } catch (...) {
      Ok("ip netns del " + name_);  // the destructor does not run for a throwing constructor
      throw;
    }
  }
  ~TestNetns() {
    if (created_) Ok("ip netns del " + name_);
  }
  TestNetns(const TestNetns&) = delete;
  TestNetns& operator=(const TestNetns&) = delete;

  bool created() const { return created_; }
  const std::string& name() const { return name_; }
  const NetnsHandle& handle() const { return handle_; }
  // `ip -n <name> <args>` succeeds.
  bool Ip(const std::string& args) const { return Ok("ip -n " + name_ + " " + args); }
  // `tc <args>` inside the namespace succeeds.
  bool Tc(const std::string& args) const { return Ok("ip netns exec " + name_ + " tc " + args); }
  std::string TcShow(const std::string& args) const { return Capture("ip netns exec " + name_ + " tc " + args); }

 private:
  std::string name_;
  bool created_ = false;
  NetnsHandle handle_;
};

class BpfHooksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (bpf(2), tc, network namespaces)";
    if (!Ok("ip -V") || !Ok("tc -V")) GTEST_SKIP() << "needs iproute2 (ip, tc)";
    static std::atomic<int> sequence{0};
    const int n = sequence++;
    const std::string id = std::to_string(::getpid()) + "-" + std::to_string(n);
    tag_ = std::to_string(::getpid() % 100000) + std::to_string(n);
    pod_ = std::make_unique<TestNetns>("dranet-bpf-pod-" + id);
    peer_ = std::make_unique<TestNetns>("dranet-bpf-peer-" + id);
    if (!pod_->created() || !peer_->created()) GTEST_SKIP() << "cannot create network namespaces";
    // bpa<tag> in the pod namespace, bpb<tag> in the peer namespace, with
    // permanent neighbours both ways: traffic needs no ARP, which the drop
    // programs would block and which would be slow to recover after.
    netdev_ = "bpa" + tag_;
    peer_netdev_ = "bpb" + tag_;
    ASSERT_TRUE(pod_->Ip("link add " + netdev_ + " address 02:00:00:c9:00:01 type veth peer name " + peer_netdev_ +
                         " address 02:00:00:c9:00:02 netns " + peer_->name()));
    ASSERT_TRUE(pod_->Ip("addr add 10.201.0.1/24 dev " + netdev_));
    ASSERT_TRUE(peer_->Ip("addr add 10.201.0.2/24 dev " + peer_netdev_));
    ASSERT_TRUE(pod_->Ip("link set " + netdev_ + " up"));
    ASSERT_TRUE(peer_->Ip("link set " + peer_netdev_ + " up"));
    ASSERT_TRUE(pod_->Ip("neigh add 10.201.0.2 lladdr 02:00:00:c9:00:02 dev " + netdev_ + " nud permanent"));
    ASSERT_TRUE(peer_->Ip("neigh add 10.201.0.1 lladdr 02:00:00:c9:00:01 dev " + peer_netdev_ + " nud permanent"));
  }

  // Whether the tc test programs were not built (no clang with the BPF target).
  bool TcObjectMissing() const {
    return std::string(kTcObject).empty() || !fs::exists(kTcObject);
  }

  // clsact on `netdev` in `ns`, the pass program on ingress and the drop
  // program on egress.
  void AttachTcPrograms(const TestNetns& ns, const std::string& netdev) {
    ASSERT_TRUE(ns.Tc("qdisc add dev " + netdev + " clsact"));
    ASSERT_TRUE(ns.Tc("filter add dev " + netdev + " ingress bpf da obj " + std::string(kTcObject) + " sec tc"));
    ASSERT_TRUE(ns.Tc("filter add dev " + netdev + " egress bpf da obj " + std::string(kTcObject) + " sec classifier"));
  }

  // A pass program on tcx ingress through BPF_PROG_ATTACH and a drop program
  // on tcx egress through a bpf_link, which tcx_link_ keeps open.
  void AttachTcxPrograms(const TestNetns& ns, const std::string& netdev) {
    BpfObjectFd ingress = LoadTcxProgram("dranet_in", kTcxPass);
    BpfObjectFd egress = LoadTcxProgram("dranet_eg", kTcxDrop);
    ASSERT_TRUE(ingress.valid() && egress.valid()) << "BPF_PROG_LOAD: " << std::strerror(errno);
    std::string error;
    RunInNetns(ns.handle(), [&] {
      const unsigned ifindex = ::if_nametoindex(netdev.c_str());
      if (const int err = testing::AttachTcxProgram(ingress, ifindex, inventory::kBpfTcxIngress); err != 0) {
        error = std::string("BPF_PROG_ATTACH: ") + std::strerror(err);
        return;
      }
      union bpf_attr link {};
      link.link_create.prog_fd = static_cast<uint32_t>(egress.get());
      link.link_create.target_fd = ifindex;
      link.link_create.attach_type = inventory::kBpfTcxEgress;
      tcx_link_ = BpfObjectFd(static_cast<int>(BpfSyscall(BPF_LINK_CREATE, &link, sizeof(link))));
      if (!tcx_link_.valid()) error = std::string("BPF_LINK_CREATE: ") + std::strerror(errno);
    });
    if (error.find("Invalid argument") != std::string::npos) GTEST_SKIP() << "kernel without tcx: " << error;
    ASSERT_EQ(error, "");
  }

  std::vector<AttachedBpfProgram> ListIn(const TestNetns& ns, const std::string& netdev) {
    std::vector<AttachedBpfProgram> programs;
    RunInNetns(ns.handle(), [&] {
      programs = inventory::ListAttachedBpfPrograms(static_cast<int>(::if_nametoindex(netdev.c_str())));
    });
    return programs;
  }

  std::vector<AttachedBpfProgram> DetachIn(const TestNetns& ns, const std::string& netdev) {
    std::vector<AttachedBpfProgram> detached;
    RunInNetns(ns.handle(), [&] { detached = DetachBpfPrograms(netdev); });
    return detached;
  }

  // Whether a UDP datagram from the pod namespace to 10.201.0.2 reaches a
  // socket in the peer namespace within `timeout`.
  bool DatagramArrives(std::chrono::milliseconds timeout) {
    UniqueFd receiver, sender;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    ::inet_pton(AF_INET, "10.201.0.2", &address.sin_addr);
    RunInNetns(peer_->handle(), [&] {
      receiver.Reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
      socklen_t length = sizeof(address);
      if (::bind(receiver.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
          ::getsockname(receiver.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        ADD_FAILURE() << "cannot bind a UDP socket in the peer namespace: " << std::strerror(errno);
      }
    });
    RunInNetns(pod_->handle(), [&] { sender.Reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)); });
    const char payload[] = "dranet";
    if (::sendto(sender.get(), payload, sizeof(payload), 0, reinterpret_cast<sockaddr*>(&address), sizeof(address)) < 0) {
      ADD_FAILURE() << "sendto: " << std::strerror(errno);
      return false;
    }
    pollfd ready{receiver.get(), POLLIN, 0};
    return ::poll(&ready, 1, static_cast<int>(timeout.count())) == 1;
  }

  std::string tag_, netdev_, peer_netdev_;
  std::unique_ptr<TestNetns> pod_, peer_;
  BpfObjectFd tcx_link_;
};

std::vector<std::string> Descriptions(const std::vector<AttachedBpfProgram>& programs) {
  std::vector<std::string> out;
  for (const auto& program : programs) out.push_back(std::string(inventory::BpfHookName(program.hook)) + " " + program.name);
  return out;
}

TEST_F(BpfHooksTest, ListsTcFiltersAndTcxProgramsByName) {
  if (TcObjectMissing()) GTEST_SKIP() << "tc test programs not built (no clang with the BPF target)";
  AttachTcPrograms(*pod_, netdev_);
  AttachTcxPrograms(*pod_, netdev_);
  if (IsSkipped() || HasFatalFailure()) return;

  auto programs = ListIn(*pod_, netdev_);
  EXPECT_EQ(Descriptions(programs),
            (std::vector<std::string>{std::string("tc ingress ") + kTcPassName, std::string("tc egress ") + kTcDropName,
                                      "tcx ingress dranet_in", "tcx egress dranet_eg"}));
  for (const auto& program : programs) {
    SCOPED_TRACE(inventory::Describe(program));
    EXPECT_NE(program.program_id, 0u);
  }
  ASSERT_EQ(programs.size(), 4u);
  EXPECT_EQ(programs[0].tc_parent, 0xfffffff2u);  // clsact ingress
  EXPECT_EQ(programs[1].tc_parent, 0xfffffff3u);  // clsact egress
  EXPECT_NE(programs[0].tc_handle, 0u);
  EXPECT_EQ(programs[2].tcx_link_id, 0u) << "attached with BPF_PROG_ATTACH";
  EXPECT_NE(programs[3].tcx_link_id, 0u) << "attached through a bpf_link";

  EXPECT_EQ(inventory::NamesOf(programs),
            (BpfProgramNames{{kTcDropName, kTcPassName}, {"dranet_eg", "dranet_in"}}));
}

// More tcx programs on one hook than the first query has room for.
TEST_F(BpfHooksTest, ManyTcxProgramsAreAllListedAndDetached) {
  std::vector<std::string> expected;
  std::string error;
  for (int i = 0; i < 20; ++i) {
    std::string name = "dranet_many" + std::to_string(i);
    BpfObjectFd program = LoadTcxProgram(name, kTcxPass);
    ASSERT_TRUE(program.valid()) << "BPF_PROG_LOAD: " << std::strerror(errno);
    RunInNetns(pod_->handle(), [&] {
      const int err = testing::AttachTcxProgram(program, ::if_nametoindex(netdev_.c_str()), inventory::kBpfTcxIngress);
      if (err != 0) error = std::strerror(err);
    });
    if (error == "Invalid argument") GTEST_SKIP() << "kernel without tcx";
    ASSERT_EQ(error, "");
    expected.push_back("tcx ingress " + name);
  }
  EXPECT_EQ(Descriptions(ListIn(*pod_, netdev_)), expected);
  EXPECT_EQ(Descriptions(DetachIn(*pod_, netdev_)), expected);
  EXPECT_TRUE(ListIn(*pod_, netdev_).empty());
}

TEST_F(BpfHooksTest, NetdevWithoutProgramsListsNone) {
  EXPECT_TRUE(ListIn(*pod_, netdev_).empty());
  EXPECT_TRUE(DetachIn(*pod_, netdev_).empty());
  ASSERT_TRUE(pod_->Tc("qdisc add dev " + netdev_ + " clsact"));
  ASSERT_TRUE(pod_->Tc("filter add dev " + netdev_ + " ingress prio 1 u32 match u32 0 0 classid 1:1"));
  EXPECT_TRUE(ListIn(*pod_, netdev_).empty()) << "a u32 filter is no BPF program";
  EXPECT_FALSE(inventory::NamesOf(ListIn(*pod_, netdev_)).any());
}

TEST_F(BpfHooksTest, DetachRemovesEveryBpfProgramAndKeepsOtherFiltersAndTheQdisc) {
  if (TcObjectMissing()) GTEST_SKIP() << "tc test programs not built (no clang with the BPF target)";
  AttachTcPrograms(*pod_, netdev_);
  AttachTcxPrograms(*pod_, netdev_);
  if (IsSkipped() || HasFatalFailure()) return;
  // Filters that are not BPF, before and after the BPF filters.
  ASSERT_TRUE(pod_->Tc("filter add dev " + netdev_ + " ingress prio 1 u32 match u32 0 0 classid 1:1"));
  ASSERT_TRUE(pod_->Tc("filter add dev " + netdev_ + " egress prio 60000 u32 match u32 0 0 classid 1:2"));
  // The egress drop programs keep traffic from leaving.
  EXPECT_FALSE(DatagramArrives(std::chrono::milliseconds(300)));

  auto detached = DetachIn(*pod_, netdev_);
  EXPECT_EQ(Descriptions(detached),
            (std::vector<std::string>{std::string("tc ingress ") + kTcPassName, std::string("tc egress ") + kTcDropName,
                                      "tcx ingress dranet_in", "tcx egress dranet_eg"}));
  EXPECT_TRUE(ListIn(*pod_, netdev_).empty());
  EXPECT_TRUE(DatagramArrives(std::chrono::seconds(5))) << "traffic still blocked after the detach";

  // The u32 filters and the clsact qdisc are untouched; the link is still there.
  std::string ingress = pod_->TcShow("filter show dev " + netdev_ + " ingress");
  std::string egress = pod_->TcShow("filter show dev " + netdev_ + " egress");
  EXPECT_NE(ingress.find("u32"), std::string::npos) << ingress;
  EXPECT_NE(egress.find("u32"), std::string::npos) << egress;
  EXPECT_EQ((ingress + egress).find(" bpf "), std::string::npos) << ingress << egress;
  EXPECT_NE(pod_->TcShow("qdisc show dev " + netdev_).find("clsact"), std::string::npos);
  EXPECT_TRUE(pod_->Ip("link show " + netdev_));

  // Nothing left: a second detach has nothing to do.
  EXPECT_TRUE(DetachIn(*pod_, netdev_).empty());
}

TEST_F(BpfHooksTest, DetachNamesAMissingInterface) {
  const std::string missing = "nobpf" + tag_;
  try {
    DetachIn(*pod_, missing);
    FAIL() << "no error for a missing interface";
  } catch (const InjectError& error) {
    EXPECT_NE(std::string(error.what()).find(missing), std::string::npos) << error.what();
  }
}

// Without CAP_NET_ADMIN/CAP_SYS_ADMIN the tcx query is refused: detaching
// fails naming the interface, and discovery leaves the ebpf attributes out
// (unknown is not "no programs") with a warning.
TEST_F(BpfHooksTest, UnreadableProgramsFailTheDetachAndLeaveTheAttributesOut) {
  std::string detach_error = "<no error>";
  bool dropped = false;
  std::ostringstream log_text;
  Logger log(log_text);
  inventory::NetlinkFacts facts;
  RunInNetns(pod_->handle(), [&] {
    dropped = DropThreadCapabilities();
    if (!dropped) return;
    try {
      DetachBpfPrograms(netdev_);
    } catch (const InjectError& error) {
      detach_error = error.what();
    }
    facts = inventory::ReadLiveNetlinkFacts(log);
  });
  ASSERT_TRUE(dropped) << "capset: " << std::strerror(errno);
  EXPECT_NE(detach_error.find(netdev_), std::string::npos) << detach_error;
  EXPECT_NE(detach_error.find("Operation not permitted"), std::string::npos) << detach_error;
  bool seen = false;
  for (const auto& link : facts.links) {
    if (link.name != netdev_) continue;
    seen = true;
    EXPECT_EQ(link.bpf_programs, std::nullopt);
  }
  EXPECT_TRUE(seen) << netdev_ << " not in the live facts";
  EXPECT_NE(log_text.str().find("cannot read the BPF programs"), std::string::npos) << log_text.str();
}

// A program that cannot be detached does not stop the others: without
// CAP_NET_ADMIN the tc filters stay, the tcx programs go (bpf(2) only needs
// CAP_SYS_ADMIN), and the error names the interface and each filter left.
TEST_F(BpfHooksTest, PartialDetachNamesEveryProgramLeftAndDetachesTheRest) {
  if (TcObjectMissing()) GTEST_SKIP() << "tc test programs not built (no clang with the BPF target)";
  AttachTcPrograms(*pod_, netdev_);
  AttachTcxPrograms(*pod_, netdev_);
  if (IsSkipped() || HasFatalFailure()) return;
  std::string detach_error = "<no error>";
  bool dropped = false;
  RunInNetns(pod_->handle(), [&] {
    dropped = DropThreadNetAdmin();
    if (!dropped) return;
    try {
      DetachBpfPrograms(netdev_);
    } catch (const InjectError& error) {
      detach_error = error.what();
    }
  });
  ASSERT_TRUE(dropped) << "capset: " << std::strerror(errno);
  EXPECT_NE(detach_error.find(netdev_), std::string::npos) << detach_error;
  EXPECT_NE(detach_error.find("(2 detached)"), std::string::npos) << detach_error;
  EXPECT_NE(detach_error.find(std::string("tc ingress filter \"") + kTcPassName), std::string::npos) << detach_error;
  EXPECT_NE(detach_error.find(std::string("tc egress filter \"") + kTcDropName), std::string::npos) << detach_error;
  EXPECT_EQ(detach_error.find("tcx"), std::string::npos) << detach_error;
  EXPECT_EQ(Descriptions(ListIn(*pod_, netdev_)),
            (std::vector<std::string>{std::string("tc ingress ") + kTcPassName, std::string("tc egress ") + kTcDropName}));
}

// Discovery in the pod namespace (live netlink; the veths have no sysfs
// entry in this mount namespace, so they are published as virtual devices).
TEST_F(BpfHooksTest, DiscoveryPublishesTheProgramNamesAndEbpf) {
  if (TcObjectMissing()) GTEST_SKIP() << "tc test programs not built (no clang with the BPF target)";
  // bpa: tc and tcx programs; bpc: only tcx; bpd: none.
  const std::string tcx_only = "bpc" + tag_, none = "bpd" + tag_;
  ASSERT_TRUE(pod_->Ip("link add " + tcx_only + " type veth peer name " + none));
  AttachTcPrograms(*pod_, netdev_);
  AttachTcxPrograms(*pod_, netdev_);
  if (IsSkipped() || HasFatalFailure()) return;
  BpfObjectFd link_on_first = std::move(tcx_link_);  // the second attach reuses tcx_link_
  AttachTcxPrograms(*pod_, tcx_only);
  if (HasFatalFailure()) return;

  std::vector<Device> devices;
  RunInNetns(pod_->handle(), [&] {
    inventory::DiscoveryOptions options;
    options.netlink_source = inventory::DiscoveryOptions::NetlinkSource::kLive;
    devices = inventory::Discover(options, NullLogger());
  });
  auto find = [&](const std::string& if_name) -> const Device* {
    for (const auto& device : devices) {
      if (device.if_name == if_name) return &device;
    }
    ADD_FAILURE() << "no device for " << if_name;
    return nullptr;
  };
  auto attribute = [](const Device* device, std::string_view key) -> std::string {
    if (device == nullptr) return "<no device>";
    auto it = device->attributes.find(std::string(key));
    if (it == device->attributes.end()) return "<absent>";
    if (auto* text = std::get_if<std::string>(&it->second)) return *text;
    if (auto* flag = std::get_if<bool>(&it->second)) return *flag ? "true" : "false";
    return "<other type>";
  };
  namespace attr = inventory::attr;
  const Device* all = find(netdev_);
  EXPECT_EQ(attribute(all, attr::kEbpf), "true");
  EXPECT_EQ(attribute(all, attr::kTcFilterNames), std::string(kTcDropName) + "," + kTcPassName);
  EXPECT_EQ(attribute(all, attr::kTcxProgramNames), "dranet_eg,dranet_in");
  const Device* only_tcx = find(tcx_only);
  EXPECT_EQ(attribute(only_tcx, attr::kEbpf), "true");
  EXPECT_EQ(attribute(only_tcx, attr::kTcFilterNames), "<absent>");
  EXPECT_EQ(attribute(only_tcx, attr::kTcxProgramNames), "dranet_eg,dranet_in");
  const Device* without = find(none);
  EXPECT_EQ(attribute(without, attr::kEbpf), "false");
  EXPECT_EQ(attribute(without, attr::kTcFilterNames), "<absent>");
  EXPECT_EQ(attribute(without, attr::kTcxProgramNames), "<absent>");
}

// netlink.json carries the names: present, recorded as none, or (older
// snapshots) not recorded at all — then no ebpf attribute is published.
// Capturing such a snapshot writes the same three cases back.
TEST(SnapshotBpfProgramNames, PublishedFromNetlinkJsonAndKeptByCapture) {
  inventory::testing::FakeHost host;
  host.Netdev("", "with0", 2);
  host.Netdev("", "none0", 3);
  host.Netdev("", "old0", 4);
  host.File(inventory::kSnapshotNetlinkFile,
            R"({"formatVersion":2,"links":[)"
            R"({"name":"with0","kind":"veth","addresses":[],"tcFilterNames":["b.o:[tc]","a.o:[tc]"],"tcxProgramNames":["cilium_tcx"]},)"
            R"({"name":"none0","kind":"veth","addresses":[],"tcFilterNames":[],"tcxProgramNames":[]},)"
            R"({"name":"old0","kind":"veth","addresses":[]}],"routes":[],"rules":[],"neighbors":[]})");
  inventory::DiscoveryOptions options;
  options.host_root = host.root();
  auto devices = inventory::Discover(options, NullLogger());
  auto attributes_of = [&](const std::string& if_name) {
    for (const auto& device : devices) {
      if (device.if_name == if_name) return device.attributes;
    }
    ADD_FAILURE() << "no device for " << if_name;
    return inventory::Attributes{};
  };
  namespace attr = inventory::attr;
  auto with = attributes_of("with0");
  EXPECT_EQ(with[std::string(attr::kEbpf)], inventory::AttributeValue(true));
  EXPECT_EQ(with[std::string(attr::kTcFilterNames)], inventory::AttributeValue(std::string("a.o:[tc],b.o:[tc]")));
  EXPECT_EQ(with[std::string(attr::kTcxProgramNames)], inventory::AttributeValue(std::string("cilium_tcx")));
  auto none = attributes_of("none0");
  EXPECT_EQ(none[std::string(attr::kEbpf)], inventory::AttributeValue(false));
  EXPECT_EQ(none.count(std::string(attr::kTcFilterNames)), 0u);
  EXPECT_EQ(none.count(std::string(attr::kTcxProgramNames)), 0u);
  auto old = attributes_of("old0");
  EXPECT_EQ(old.count(std::string(attr::kEbpf)), 0u);
  EXPECT_EQ(old.count(std::string(attr::kTcFilterNames)), 0u);

  std::string pattern = (fs::temp_directory_path() / "dranet-bpfsnapshot-XXXXXX").string();
  fs::path out = fs::path(::mkdtemp(pattern.data())) / "snapshot";
  inventory::CaptureOptions capture;
  capture.host_root = host.root();
  inventory::CaptureSnapshot(out, capture, NullLogger());
  auto original = inventory::ReadSnapshotNetlinkFacts(host.root(), NullLogger());
  auto recaptured = inventory::ReadSnapshotNetlinkFacts(out, NullLogger());
  fs::remove_all(out.parent_path());
  ASSERT_EQ(recaptured.links.size(), original.links.size());
  for (std::size_t i = 0; i < original.links.size(); ++i) {
    SCOPED_TRACE(original.links[i].name);
    EXPECT_EQ(recaptured.links[i].bpf_programs, original.links[i].bpf_programs);
  }
  ASSERT_EQ(original.links.size(), 3u);
  EXPECT_EQ(original.links[0].bpf_programs, (BpfProgramNames{{"a.o:[tc]", "b.o:[tc]"}, {"cilium_tcx"}}));
  EXPECT_EQ(original.links[1].bpf_programs, BpfProgramNames{});
  EXPECT_EQ(original.links[2].bpf_programs, std::nullopt);
}

}  // namespace
}  // namespace dranet::inject
