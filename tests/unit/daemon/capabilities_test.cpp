// Reading CapEff and naming what the NRI plugin would miss.
#include "daemon/capabilities.h"

#include <gtest/gtest.h>

namespace dranet::daemon {
namespace {

TEST(Capabilities, ParsesCapEff) {
  EXPECT_EQ(EffectiveCapabilities("Name:\tdranetd\nCapInh:\t0000000000000000\nCapEff:\t0000000000201000\n"),
            0x201000u);
  EXPECT_EQ(EffectiveCapabilities("Name:\tx\n"), 0u);
  EXPECT_EQ(EffectiveCapabilities("CapEff:\tzz\n"), 0u);
}

TEST(Capabilities, NetAdminAndSysAdminAreEnoughForNri) {
  const uint64_t net_admin = uint64_t{1} << 12, sys_admin = uint64_t{1} << 21;
  EXPECT_TRUE(MissingCapabilities(net_admin | sys_admin, true).empty());
  auto missing = MissingCapabilities(net_admin, true);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_STREQ(missing[0].name, "CAP_SYS_ADMIN");
  EXPECT_EQ(MissingCapabilities(0, true).size(), 2u);
  EXPECT_TRUE(MissingCapabilities(0, false).empty()) << "discovery and publishing need no capability";
}

}  // namespace
}  // namespace dranet::daemon
