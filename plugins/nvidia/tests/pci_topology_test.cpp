// plugins/common/pci_topology.h as pure logic: link classes and the
// spreading of NICs over equally close GPUs.
#include "pci_topology.h"

#include <gtest/gtest.h>

namespace {

using dranet::plugins::common::Classify;
using dranet::plugins::common::GpuAffinity;
using dranet::plugins::common::LinkClass;
using dranet::plugins::common::LinkClassName;
using dranet::plugins::common::PciFunction;

PciFunction Fn(const std::string& bdf, const std::string& root, std::vector<std::string> bridges, int numa,
               uint32_t device = 0x1021) {
  PciFunction f;
  f.bdf = bdf;
  f.vendor = 0x15b3;
  f.device = device;
  f.host_bridge = root;
  f.bridges = std::move(bridges);
  f.numa_node = numa;
  return f;
}

TEST(PciTopology, LinkClasses) {
  // One switch: upstream port 0000:02:00.0, downstream ports 03:00.0 / 03:01.0.
  auto nic = Fn("0000:04:00.0", "pci0000:00", {"0000:00:01.0", "0000:02:00.0", "0000:03:00.0"}, 0);
  auto pix = Fn("0000:05:00.0", "pci0000:00", {"0000:00:01.0", "0000:02:00.0", "0000:03:01.0"}, 0);
  // Same root port, different switches below it.
  auto pxb = Fn("0000:08:00.0", "pci0000:00", {"0000:00:01.0", "0000:06:00.0", "0000:07:00.0"}, 0);
  // Same host bridge, different root port.
  auto phb = Fn("0000:0a:00.0", "pci0000:00", {"0000:00:02.0"}, 0);
  auto node = Fn("0000:41:00.0", "pci0000:40", {"0000:40:01.0"}, 0);
  auto sys = Fn("0000:81:00.0", "pci0000:80", {"0000:80:01.0"}, 1);
  EXPECT_EQ(Classify(nic, pix), LinkClass::kPIX);
  EXPECT_EQ(Classify(nic, pxb), LinkClass::kPXB);
  EXPECT_EQ(Classify(nic, phb), LinkClass::kPHB);
  EXPECT_EQ(Classify(nic, node), LinkClass::kNODE);
  EXPECT_EQ(Classify(nic, sys), LinkClass::kSYS);
  EXPECT_EQ(Classify(pix, nic), LinkClass::kPIX) << "symmetric";
  // Functions hanging off the host bridge directly (flat VM topologies).
  EXPECT_EQ(Classify(Fn("0000:00:04.0", "pci0000:00", {}, 0), Fn("0000:00:05.0", "pci0000:00", {}, 0)),
            LinkClass::kPHB);
  // Unknown NUMA on both sides of different roots: one node.
  EXPECT_EQ(Classify(Fn("0001:00:00.0", "pci0001:00", {}, -1), Fn("0002:00:00.0", "pci0002:00", {}, -1)),
            LinkClass::kNODE);
  EXPECT_STREQ(LinkClassName(LinkClass::kPXB), "PXB");
}

TEST(PciTopology, EquallyCloseGpusAreSpreadOverNicsInAddressOrder) {
  // GB300-like: every function in its own domain, two per NUMA node.
  std::vector<PciFunction> gpus{Fn("0008:06:00.0", "pci0008:00", {"0008:00:00.0"}, 0, 0x31c2),
                                Fn("0009:06:00.0", "pci0009:00", {"0009:00:00.0"}, 0, 0x31c2),
                                Fn("0018:06:00.0", "pci0018:00", {"0018:00:00.0"}, 1, 0x31c2),
                                Fn("0019:06:00.0", "pci0019:00", {"0019:00:00.0"}, 1, 0x31c2)};
  std::vector<PciFunction> nics{Fn("0101:00:00.0", "pci0101:00", {}, 0), Fn("0102:00:00.0", "pci0102:00", {}, 0),
                                Fn("0103:00:00.0", "pci0103:00", {}, 1), Fn("0104:00:00.0", "pci0104:00", {}, 1),
                                // A different NIC model on NUMA 0 does not shift the pairing.
                                Fn("0001:00:02.0", "pci0001:00", {}, 0, 0x101a)};
  GpuAffinity affinity(gpus, nics);
  const char* expected[] = {"0008:06:00.0", "0009:06:00.0", "0018:06:00.0", "0019:06:00.0"};
  for (int i = 0; i < 4; ++i) {
    auto m = affinity.Nearest(nics[static_cast<std::size_t>(i)]);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->bus_id, expected[i]) << nics[static_cast<std::size_t>(i)].bdf;
    EXPECT_EQ(m->index, i);
    EXPECT_EQ(m->link, LinkClass::kNODE);
  }
  EXPECT_EQ(Classify(nics[2], gpus[0]), LinkClass::kSYS);
  EXPECT_FALSE(GpuAffinity({}, nics).Nearest(nics[0]).has_value());
}

}  // namespace
