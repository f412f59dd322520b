// Tests of EthtoolSocket: the verbose bitset codec, and as root the real
// ethtool generic netlink family on a veth pair inside a network namespace of
// the test's own (named after the pid, deleted even when an assertion fails),
// with `ethtool -k` as the independent reader. Root tests skip without root,
// `ip` or `ethtool`.
#include "inject/ethtool_socket.h"

#include <gtest/gtest.h>
#include <linux/ethtool_netlink.h>
#include <unistd.h>

#include <atomic>
#include <sstream>

#include "inject/ethtool_feature_names.h"
#include "inject/pod_netns_applier.h"
#include "inject_error_of.h"
#include "shell_command.h"

namespace dranet::inject {
namespace {

using dranet::testing::Capture;
using dranet::testing::Ok;
using Flags = std::map<std::string, bool>;

using testing::ErrorOf;

// The first attribute of `msg`'s payload (a bare message, no family header).
const nlattr* FirstAttribute(nl_msg* msg) { return static_cast<const nlattr*>(nlmsg_data(nlmsg_hdr(msg))); }

TEST(EthtoolBitset, NamedBitsRoundTripWithTheirValues) {
  NlMsgPtr msg(nlmsg_alloc());
  PutEthtoolBitset(msg.get(), ETHTOOL_A_FEATURES_WANTED, {{"rx-gro", true}, {"tx-tcp-segmentation", false}});
  const nlattr* bitset = FirstAttribute(msg.get());
  EXPECT_EQ(nla_type(bitset), ETHTOOL_A_FEATURES_WANTED);
  EXPECT_TRUE(bitset->nla_type & NLA_F_NESTED);  // the ethtool family validates nests strictly
  nlattr* tb[ETHTOOL_A_BITSET_MAX + 1] = {};
  ASSERT_GE(nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, const_cast<nlattr*>(bitset), nullptr), 0);
  EXPECT_EQ(tb[ETHTOOL_A_BITSET_NOMASK], nullptr);  // a mask: bits not named are left alone
  EXPECT_EQ(ParseEthtoolBitset(bitset), (Flags{{"rx-gro", true}, {"tx-tcp-segmentation", false}}));
}

TEST(EthtoolBitset, EveryBitOfAListIsOn) {
  NlMsgPtr msg(nlmsg_alloc());
  nlattr* bitset = nla_nest_start(msg.get(), ETHTOOL_A_FEATURES_HW);
  ASSERT_EQ(nla_put_flag(msg.get(), ETHTOOL_A_BITSET_NOMASK), 0);
  nlattr* bits = nla_nest_start(msg.get(), ETHTOOL_A_BITSET_BITS);
  for (const char* name : {"highdma", "rx-gro"}) {
    nlattr* bit = nla_nest_start(msg.get(), ETHTOOL_A_BITSET_BITS_BIT);
    ASSERT_EQ(nla_put_u32(msg.get(), ETHTOOL_A_BITSET_BIT_INDEX, 7), 0);
    ASSERT_EQ(nla_put_string(msg.get(), ETHTOOL_A_BITSET_BIT_NAME, name), 0);
    nla_nest_end(msg.get(), bit);
  }
  nla_nest_end(msg.get(), bits);
  nla_nest_end(msg.get(), bitset);
  EXPECT_EQ(ParseEthtoolBitset(FirstAttribute(msg.get())), (Flags{{"highdma", true}, {"rx-gro", true}}));
}

TEST(EthtoolBitset, ACompactBitsetIsRefused) {
  NlMsgPtr msg(nlmsg_alloc());
  nlattr* bitset = nla_nest_start(msg.get(), ETHTOOL_A_FEATURES_HW);
  ASSERT_EQ(nla_put_u32(msg.get(), ETHTOOL_A_BITSET_SIZE, 32), 0);
  ASSERT_EQ(nla_put_u32(msg.get(), ETHTOOL_A_BITSET_VALUE, 0x5), 0);
  nla_nest_end(msg.get(), bitset);
  EXPECT_EQ(ErrorOf([&] { ParseEthtoolBitset(FirstAttribute(msg.get())); }),
            "ethtool bitset in compact form where bit names were asked for");
}

// What `ethtool -k` prints for the features it names by kernel name (not
// ethtool's legacy group names): kernel name -> {on, fixed}.
struct CliFeature {
  bool on = false;
  bool fixed = false;
};
std::map<std::string, CliFeature> EthtoolCliFeatures(const std::string& netns, const std::string& dev) {
  std::set<std::string> legacy;
  for (const auto& row : LegacyEthtoolFeatures()) legacy.emplace(row.long_name);
  std::map<std::string, CliFeature> out;
  std::istringstream lines(Capture("ip netns exec " + netns + " ethtool -k " + dev));
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(": ");
    if (colon == std::string::npos) continue;
    const auto name = line.substr(line.find_first_not_of('\t'), colon - line.find_first_not_of('\t'));
    const auto value = line.substr(colon + 2);
    if (legacy.contains(name) || (value.rfind("on", 0) != 0 && value.rfind("off", 0) != 0)) continue;
    out[name] = {value.rfind("on", 0) == 0, value.find("[fixed]") != std::string::npos};
  }
  return out;
}

// A network namespace holding a veth pair (both ends), deleted with them.
class VethNamespace {
 public:
  VethNamespace() {
    static std::atomic<int> sequence{0};
    const std::string id = std::to_string(::getpid()) + "-" + std::to_string(sequence++);
    name_ = "dranet-ethtool-" + id;
    if (!Ok("ip netns add " + name_)) {
      name_.clear();
      return;
    }
    dev_ = "eth" + std::to_string(::getpid() % 100000);
    ok_ = Ok("ip -n " + name_ + " link add name " + dev_ + " type veth peer name peer0") &&
          Ok("ip -n " + name_ + " link set " + dev_ + " up");
  }
  ~VethNamespace() {
    if (!name_.empty()) Ok("ip netns del " + name_);
  }
  VethNamespace(const VethNamespace&) = delete;
  VethNamespace& operator=(const VethNamespace&) = delete;

  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  const std::string& dev() const { return dev_; }
  std::string path() const { return "/var/run/netns/" + name_; }

 private:
  std::string name_, dev_;
  bool ok_ = false;
};

class EthtoolSocketNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (!Ok("ip -V")) GTEST_SKIP() << "needs the ip tool";
    if (!Ok("ethtool --version")) GTEST_SKIP() << "needs the ethtool tool (reads features back)";
    veth_ = std::make_unique<VethNamespace>();
    ASSERT_TRUE(veth_->ok()) << "cannot create a veth pair in a network namespace";
    netns_ = OpenNetns(veth_->path());
    socket_ = std::make_unique<EthtoolSocket>(netns_);
  }

  std::map<std::string, CliFeature> Cli() { return EthtoolCliFeatures(veth_->name(), veth_->dev()); }

  std::unique_ptr<VethNamespace> veth_;
  NetnsHandle netns_;
  std::unique_ptr<EthtoolSocket> socket_;
};

TEST_F(EthtoolSocketNetnsTest, FeaturesReadAgreeWithEthtool) {
  const auto features = socket_->ReadFeatures(veth_->dev());
  const auto cli = Cli();
  ASSERT_GT(cli.size(), 20u);
  EXPECT_TRUE(features.changeable.contains("tx-tcp-segmentation"));
  EXPECT_FALSE(features.changeable.contains("tx-checksum-ipv4"));  // fixed off on a veth
  for (const auto& [name, state] : cli) {
    EXPECT_EQ(features.changeable.contains(name), !state.fixed) << name;
    EXPECT_EQ(features.active.contains(name), state.on) << name;
    if (!state.fixed) {
      EXPECT_EQ(features.wanted.contains(name), state.on) << name;
    }
  }
}

TEST_F(EthtoolSocketNetnsTest, LegacyNamesSetEveryFeatureTheyStandFor) {
  const auto& dev = veth_->dev();
  const auto changeable = socket_->ReadFeatures(dev).changeable;
  socket_->SetFeatures(dev, ResolveFeatureNames({{"tso", false}, {"gro", true}}, changeable, dev));
  auto cli = Cli();
  for (const char* name :
       {"tx-tcp-segmentation", "tx-tcp6-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation"}) {
    EXPECT_FALSE(cli.at(name).on) << name;
  }
  EXPECT_TRUE(Capture("ip netns exec " + veth_->name() + " ethtool -k " + dev).find("generic-receive-offload: on") !=
              std::string::npos);
  EXPECT_TRUE(cli.at("tx-udp-segmentation").on);  // not named, not touched

  socket_->SetFeatures(dev, ResolveFeatureNames({{"tcp-segmentation-offload", true}}, changeable, dev));
  cli = Cli();
  EXPECT_TRUE(cli.at("tx-tcp-segmentation").on);
  EXPECT_TRUE(cli.at("tx-tcp6-segmentation").on);
  EXPECT_TRUE(socket_->ReadFeatures(dev).active.contains("tx-tcp6-segmentation"));
}

TEST_F(EthtoolSocketNetnsTest, AFeatureThatDoesNotTakeItsValueFailsTheSet) {
  const auto& dev = veth_->dev();
  // TCP segmentation needs checksum offload: the kernel keeps TSO off.
  EXPECT_EQ(ErrorOf([&] {
              socket_->SetFeatures(dev, {{"tx-checksum-ip-generic", false}, {"tx-tcp-segmentation", true}});
            }),
            "setting the ethtool features of " + dev + " failed: tx-tcp-segmentation stayed off (asked on)");
  const auto features = socket_->ReadFeatures(dev);
  EXPECT_TRUE(features.wanted.contains("tx-tcp-segmentation"));
  EXPECT_FALSE(features.active.contains("tx-tcp-segmentation"));
  EXPECT_FALSE(features.active.contains("tx-checksum-ip-generic"));
}

TEST_F(EthtoolSocketNetnsTest, KernelRefusalsNameTheInterfaceAndTheKernelsReason) {
  EXPECT_EQ(ErrorOf([&] { socket_->ReadFeatures("nosuchdev0"); }),
            "reading the ethtool features of nosuchdev0 failed: No such device (no device matches name)");
  EXPECT_EQ(
      ErrorOf([&] {
        socket_->SetFeatures(veth_->dev(), {{"no-such-feature", true}});
      }),
      "setting the ethtool features of " + veth_->dev() + " failed: Operation not supported (bit name not found)");
  // The socket is still usable after refusals (no stale answer left behind).
  EXPECT_TRUE(socket_->ReadFeatures(veth_->dev()).changeable.contains("rx-gro"));
}

TEST_F(EthtoolSocketNetnsTest, InterfacesAreNamedAsTheSocketsNamespaceKnowsThem) {
  EthtoolSocket here(OpenNetns("/proc/self/ns/net"));
  EXPECT_EQ(ErrorOf([&] { here.ReadFeatures(veth_->dev()); }),
            "reading the ethtool features of " + veth_->dev() + " failed: No such device (no device matches name)");
}

TEST_F(EthtoolSocketNetnsTest, ANetdevWithoutPrivateFlagsHasNone) {
  const auto& dev = veth_->dev();
  EXPECT_TRUE(socket_->ReadPrivateFlags(dev).empty());
  EXPECT_NO_THROW(socket_->SetPrivateFlags(dev, {}));
  EXPECT_EQ(ErrorOf([&] {
              socket_->SetPrivateFlags(dev, {{"enable-max-rx-buffer-size", true}});
            }),
            "ethtool.privateFlags on " + dev + ": \"enable-max-rx-buffer-size\" is not a private flag of " + dev +
                " (it has: none)");
  EXPECT_EQ(ErrorOf([&] { socket_->ReadPrivateFlags("nosuchdev0"); }),
            "reading the ethtool private flags of nosuchdev0 failed: No such device (no device matches name)");
}

}  // namespace
}  // namespace dranet::inject
