// Declarative matching, evaluated by the host.
#include <gtest/gtest.h>

#include "plugins/plugin_host.h"

using dranet::plugins::MatchesTable;

namespace {
dranet::inventory::Device Dev() {
  dranet::inventory::Device d;
  d.name = "pci-0000-8a-00-0";
  d.if_name = "gpu0rdma0";
  d.rdma_device = "mlx5_0";
  d.driver = "mlx5_core";
  d.pci_vendor_id = 0x15b3;
  d.pci_device_id = 0x1021;
  return d;
}
}  // namespace

TEST(MatchTable, EmptyMeansAlways) { EXPECT_TRUE(MatchesTable({}, Dev())); }

TEST(MatchTable, PciIdsWithWildcards) {
  EXPECT_TRUE(MatchesTable({{DRANET_MATCH_PCI, 0x15b3, 0x1021, nullptr}}, Dev()));
  EXPECT_TRUE(MatchesTable({{DRANET_MATCH_PCI, 0x15b3, DRANET_MATCH_ANY_ID, nullptr}}, Dev()));
  EXPECT_FALSE(MatchesTable({{DRANET_MATCH_PCI, 0x8086, DRANET_MATCH_ANY_ID, nullptr}}, Dev()));
  auto virt = Dev();
  virt.pci_vendor_id = 0;
  EXPECT_FALSE(MatchesTable({{DRANET_MATCH_PCI, DRANET_MATCH_ANY_ID, DRANET_MATCH_ANY_ID, nullptr}}, virt))
      << "a virtual device is no PCI match even for wildcards";
}

TEST(MatchTable, DriverIfnameRdmaAlways) {
  EXPECT_TRUE(MatchesTable({{DRANET_MATCH_DRIVER, 0, 0, "mlx5_core"}}, Dev()));
  EXPECT_FALSE(MatchesTable({{DRANET_MATCH_DRIVER, 0, 0, "efa"}}, Dev()));
  EXPECT_TRUE(MatchesTable({{DRANET_MATCH_IFNAME, 0, 0, "gpu*rdma0"}}, Dev()));
  EXPECT_FALSE(MatchesTable({{DRANET_MATCH_IFNAME, 0, 0, "eth*"}}, Dev()));
  EXPECT_TRUE(MatchesTable({{DRANET_MATCH_RDMA, 0, 0, nullptr}}, Dev()));
  auto plain = Dev();
  plain.rdma_device.clear();
  EXPECT_FALSE(MatchesTable({{DRANET_MATCH_RDMA, 0, 0, nullptr}}, plain));
  EXPECT_TRUE(MatchesTable({{DRANET_MATCH_ALWAYS, 0, 0, nullptr}}, plain));
}

TEST(MatchTable, AnyEntryMatchesAndUnknownKindsNever) {
  EXPECT_TRUE(MatchesTable({{99, 0, 0, nullptr}, {DRANET_MATCH_DRIVER, 0, 0, "mlx5_core"}}, Dev()));
  EXPECT_FALSE(MatchesTable({{99, 0, 0, nullptr}}, Dev()));
}
