// Unit tests of ethtool feature-name resolution (kernel names, ethtool's
// legacy short and long names) and private-flag name checks.
#include "inject/ethtool_feature_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inject/pod_netns_applier.h"
#include "inject_error_of.h"

namespace dranet::inject {
namespace {

using Flags = std::map<std::string, bool>;

// The changeable features of a veth on Linux 6.x (`ethtool -k`, not [fixed]).
const std::set<std::string> kVethChangeable = {
    "rx-checksum",
    "tx-checksum-ip-generic",
    "tx-checksum-sctp",
    "tx-scatter-gather",
    "tx-scatter-gather-fraglist",
    "tx-tcp-segmentation",
    "tx-tcp-ecn-segmentation",
    "tx-tcp-mangleid-segmentation",
    "tx-tcp6-segmentation",
    "tx-generic-segmentation",
    "rx-gro",
    "rx-vlan-hw-parse",
    "tx-vlan-hw-insert",
    "highdma",
    "tx-udp-segmentation",
    "rx-gro-list",
    "tx-nocache-copy",
};

using testing::ErrorOf;

TEST(EthtoolFeatureNames, KernelNamesPassThrough) {
  EXPECT_EQ(ResolveFeatureNames({{"rx-gro", true}, {"tx-nocache-copy", false}}, kVethChangeable, "eth1"),
            (Flags{{"rx-gro", true}, {"tx-nocache-copy", false}}));
}

TEST(EthtoolFeatureNames, ShortLegacyNameBecomesEveryChangeableMatch) {
  EXPECT_EQ(ResolveFeatureNames({{"tso", false}}, kVethChangeable, "eth1"),
            (Flags{{"tx-tcp-segmentation", false},
                   {"tx-tcp-ecn-segmentation", false},
                   {"tx-tcp-mangleid-segmentation", false},
                   {"tx-tcp6-segmentation", false}}));
  EXPECT_EQ(ResolveFeatureNames({{"sg", true}}, kVethChangeable, "eth1"),
            (Flags{{"tx-scatter-gather", true}, {"tx-scatter-gather-fraglist", true}}));
  // The pattern "tx-checksum-*" matches only what the netdev can change.
  EXPECT_EQ(ResolveFeatureNames({{"tx", false}}, kVethChangeable, "eth1"),
            (Flags{{"tx-checksum-ip-generic", false}, {"tx-checksum-sctp", false}}));
}

TEST(EthtoolFeatureNames, LongLegacyNamesMatchLikeShortOnes) {
  EXPECT_EQ(ResolveFeatureNames({{"tcp-segmentation-offload", true}}, kVethChangeable, "eth1"),
            ResolveFeatureNames({{"tso", true}}, kVethChangeable, "eth1"));
  EXPECT_EQ(
      ResolveFeatureNames({{"generic-receive-offload", true}, {"rx-checksumming", false}}, kVethChangeable, "eth1"),
      (Flags{{"rx-gro", true}, {"rx-checksum", false}}));
}

TEST(EthtoolFeatureNames, TheTestClaimsAdvancedConfigResolves) {
  // DRANET's resourceclaim_advanced.yaml: tso, gro and lro off — lro is
  // changeable on the NIC it targets, so that NIC's set is used here.
  auto nic = kVethChangeable;
  nic.insert("rx-lro");
  const auto resolved = ResolveFeatureNames({{"tso", false}, {"gro", false}, {"lro", false}}, nic, "eth1");
  EXPECT_EQ(resolved.size(), 6u);
  EXPECT_EQ(resolved.at("rx-lro"), false);
  EXPECT_EQ(resolved.at("rx-gro"), false);
  EXPECT_EQ(resolved.at("tx-tcp6-segmentation"), false);
}

TEST(EthtoolFeatureNames, EveryLegacyRowHasBothNamesAndAPattern) {
  const auto table = LegacyEthtoolFeatures();
  EXPECT_EQ(table.size(), 12u);
  for (const auto& row : table) {
    EXPECT_FALSE(row.short_name.empty());
    EXPECT_FALSE(row.long_name.empty());
    EXPECT_FALSE(row.kernel_pattern.empty());
  }
}

TEST(EthtoolFeatureNames, AllLegacyNamesResolveOnANetdevThatHasEverything) {
  const std::set<std::string> everything = {"rx-checksum",
                                            "tx-checksum-ipv4",
                                            "tx-scatter-gather",
                                            "tx-tcp-segmentation",
                                            "tx-udp-fragmentation",
                                            "tx-generic-segmentation",
                                            "rx-gro",
                                            "rx-lro",
                                            "rx-vlan-hw-parse",
                                            "tx-vlan-hw-insert",
                                            "rx-ntuple-filter",
                                            "rx-hashing"};
  for (const auto& row : LegacyEthtoolFeatures()) {
    for (const auto name : {row.short_name, row.long_name}) {
      const auto resolved = ResolveFeatureNames({{std::string(name), true}}, everything, "eth1");
      EXPECT_EQ(resolved.size(), 1u) << name;
    }
  }
}

TEST(EthtoolFeatureNames, UnknownAndUnchangeableNamesAreListedWithWhatCanChange) {
  const auto error = ErrorOf([] {
    ResolveFeatureNames({{"lro", false}, {"rx-gro", true}, {"turbo", true}}, {"rx-gro", "highdma"}, "gpu0rdma0");
  });
  EXPECT_EQ(error,
            "ethtool.features on gpu0rdma0: \"lro\", \"turbo\" are not features gpu0rdma0 can change "
            "(it can change: \"highdma\", \"rx-gro\")");
  EXPECT_EQ(ErrorOf([] {
              ResolveFeatureNames({{"rx-gro", true}}, {}, "eth1");
            }),
            "ethtool.features on eth1: \"rx-gro\" is not a feature eth1 can change (it can change: none)");
}

TEST(EthtoolFeatureNames, OppositeValuesForOneFeatureAreRefused) {
  const auto error = ErrorOf([] {
    ResolveFeatureNames({{"tso", false}, {"tx-tcp-segmentation", true}}, kVethChangeable, "eth1");
  });
  EXPECT_EQ(error,
            "ethtool.features on eth1: \"tso\" and \"tx-tcp-segmentation\" ask for opposite values of "
            "tx-tcp-segmentation");
  // The same value twice is no conflict.
  EXPECT_EQ(ResolveFeatureNames({{"gro", true}, {"rx-gro", true}}, kVethChangeable, "eth1"), (Flags{{"rx-gro", true}}));
}

// A veth's rx-lro is "off [fixed]": asking it off is no change (DRANET's
// manifests do), asking it on stays for ResolveFeatureNames to refuse.
TEST(EthtoolFeatureNames, FixedFeaturesAlreadyAtTheirValueNeedNothing) {
  const std::set<std::string> known = {"rx-gro", "rx-lro", "tx-tcp-segmentation"};
  const std::set<std::string> changeable = {"rx-gro", "tx-tcp-segmentation"};
  const std::set<std::string> active = {"rx-gro"};
  EXPECT_EQ(WithoutFixedAtTheirValue({{"lro", false}, {"gro", false}, {"large-receive-offload", false}}, known,
                                     changeable, active),
            (Flags{{"gro", false}}));
  EXPECT_EQ(WithoutFixedAtTheirValue({{"lro", true}}, known, changeable, active), (Flags{{"lro", true}}));
  EXPECT_EQ(WithoutFixedAtTheirValue({{"turbo", false}}, known, changeable, active), (Flags{{"turbo", false}}));
  EXPECT_THAT(ErrorOf([&] {
                ResolveFeatureNames(WithoutFixedAtTheirValue({{"lro", true}}, known, changeable, active), changeable,
                                    "eth1");
              }),
              ::testing::HasSubstr("\"lro\" is not a feature eth1 can change"));
}

TEST(EthtoolPrivateFlagNames, KnownNamesPassUnknownOnesAreListed) {
  const Flags gvnic = {{"enable-header-split", false}, {"enable-max-rx-buffer-size", false}};
  EXPECT_NO_THROW(CheckPrivateFlagNames({{"enable-max-rx-buffer-size", true}}, gvnic, "eth0"));
  EXPECT_EQ(ErrorOf([&] {
              CheckPrivateFlagNames({{"enable-max-rx-buffer", true}}, gvnic, "eth0");
            }),
            "ethtool.privateFlags on eth0: \"enable-max-rx-buffer\" is not a private flag of eth0 (it has: "
            "\"enable-header-split\", \"enable-max-rx-buffer-size\")");
  EXPECT_EQ(ErrorOf([] {
              CheckPrivateFlagNames({{"a", true}, {"b", false}}, {}, "veth0");
            }),
            "ethtool.privateFlags on veth0: \"a\", \"b\" are not private flags of veth0 (it has: none)");
}

}  // namespace
}  // namespace dranet::inject
