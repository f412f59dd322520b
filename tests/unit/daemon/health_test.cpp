// Readiness conditions and liveness heartbeats.
#include "daemon/health.h"

#include <gtest/gtest.h>

namespace dranet::daemon {
namespace {

TEST(Health, ReadyOnlyWhenEveryConditionHolds) {
  Health h;
  EXPECT_TRUE(h.Ready().ok) << "no conditions declared";
  h.AddCondition("first-publish");
  h.AddCondition("nri-connected");
  auto v = h.Ready();
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.detail, "[-]first-publish not ready\n[-]nri-connected not ready\n");
  h.Set("first-publish", true);
  h.Set("nri-connected", true);
  EXPECT_TRUE(h.Ready().ok);
  h.Set("nri-connected", false);  // the runtime went away
  EXPECT_FALSE(h.Ready().ok);
  EXPECT_NE(h.Ready().detail.find("[+]first-publish ok"), std::string::npos);
}

TEST(Health, StalledLoopFailsLiveness) {
  Health h;
  h.AddLoop("discovery", std::chrono::seconds(10));
  h.Beat("discovery");
  auto now = Health::Clock::now();
  EXPECT_TRUE(h.Live(now + std::chrono::seconds(5)).ok);
  auto stalled = h.Live(now + std::chrono::seconds(11));
  EXPECT_FALSE(stalled.ok);
  EXPECT_EQ(stalled.detail, "[-]discovery stalled\n");
}

}  // namespace
}  // namespace dranet::daemon
