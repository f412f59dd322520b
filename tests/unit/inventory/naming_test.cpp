#include "inventory/naming.h"

#include <gtest/gtest.h>

#include <utility>

namespace dranet::inventory {
namespace {

TEST(DeviceNameForInterface, KeepsDnsLabelsAndEncodesOtherNames) {
  // Base32 rows are the examples DRANET documents (verified against its Go code).
  const std::pair<const char*, const char*> cases[] = {
      {"gpu0rdma0", "gpu0rdma0"},     {"eth0", "eth0"},
      {"veth-a1", "veth-a1"},         {"mlx5_6", "net-nvwhqnk7gy"},
      {"eth0.100", "net-mv2gqmbogeyda"}, {"dummy_0", "net-mr2w23lzl4ya"},
      {"Eth0", "net-iv2gqma"},        {"-lead", "net-fvwgkyle"},
  };
  for (const auto& [if_name, device_name] : cases) EXPECT_EQ(DeviceNameForInterface(if_name), device_name);
}

TEST(DeviceNameForInterface, LongestInterfaceNameStaysALabel) {
  std::string name = DeviceNameForInterface("abcdefghijklm_o");  // IFNAMSIZ-1 bytes
  EXPECT_TRUE(IsDnsLabel(name)) << name;
}

TEST(EncodeBase32Lower, MatchesRfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},           {"f", "my"},
                                                         {"fo", "mzxq"},     {"foo", "mzxw6"},
                                                         {"foob", "mzxw6yq"}, {"fooba", "mzxw6ytb"},
                                                         {"foobar", "mzxw6ytboi"}};
  for (const auto& [input, encoded] : vectors) EXPECT_EQ(EncodeBase32Lower(input), encoded);
}

TEST(IsDnsLabel, RejectsWhatTheApiRejects) {
  EXPECT_FALSE(IsDnsLabel(""));
  EXPECT_FALSE(IsDnsLabel("-a"));
  EXPECT_FALSE(IsDnsLabel("a-"));
  EXPECT_FALSE(IsDnsLabel("A"));
  EXPECT_FALSE(IsDnsLabel("a_b"));
  EXPECT_FALSE(IsDnsLabel(std::string(64, 'a')));
  EXPECT_TRUE(IsDnsLabel(std::string(63, 'a')));
}

TEST(DeviceNameForPciAddress, ReplacesSeparators) {
  EXPECT_EQ(DeviceNameForPciAddress("0000:8a:00.0"), "pci-0000-8a-00-0");
  EXPECT_EQ(DeviceNameForPciAddress("0101:00:00.0"), "pci-0101-00-00-0");
  EXPECT_EQ(DeviceNameForPciAddress("0000:8A:00.1"), "pci-0000-8a-00-1");
}

TEST(CapAttributeValue, KeepsShortValues) {
  bool truncated = true;
  EXPECT_EQ(CapAttributeValue("mlx5_0", &truncated), "mlx5_0");
  EXPECT_FALSE(truncated);
  EXPECT_EQ(CapAttributeValue(std::string(64, 'x'), &truncated), std::string(64, 'x'));
  EXPECT_FALSE(truncated);
}

TEST(CapAttributeValue, CutsAt64Bytes) {
  bool truncated = false;
  std::string capped = CapAttributeValue(std::string(100, 'x'), &truncated);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(capped, std::string(64, 'x'));
}

TEST(CapAttributeValue, NeverSplitsUtf8) {
  // 63 ASCII bytes then a 2-byte character: byte 64 would split it.
  std::string value = std::string(63, 'a') + "\xc3\xa9" + "tail";
  std::string capped = CapAttributeValue(value);
  EXPECT_EQ(capped, std::string(63, 'a'));
}

TEST(JoinWholeItemsCapped, DropsItemsThatDoNotFit) {
  std::vector<std::string> items = {"10.0.0.1/24", "10.0.0.2/24", "10.0.0.3/24", "10.0.0.4/24",
                                    "10.0.0.5/24", "10.0.0.6/24"};
  std::string joined = JoinWholeItemsCapped(items);
  EXPECT_EQ(joined, "10.0.0.1/24,10.0.0.2/24,10.0.0.3/24,10.0.0.4/24,10.0.0.5/24");
  EXPECT_LE(joined.size(), kMaxAttributeValueBytes);
}

TEST(PciNames, RecognisesAddressesAndRootBuses) {
  EXPECT_TRUE(IsPciAddress("0000:8a:00.0"));
  EXPECT_FALSE(IsPciAddress("8a:00.0"));
  EXPECT_FALSE(IsPciAddress("0000:8a:00.g"));
  EXPECT_TRUE(IsPciRootBusName("pci0000:80"));
  EXPECT_FALSE(IsPciRootBusName("pci0000:8"));
  EXPECT_FALSE(IsPciRootBusName("LNXSYSTM:00"));
}

}  // namespace
}  // namespace dranet::inventory
