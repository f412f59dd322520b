#include "health/taint_policy.h"

#include <gtest/gtest.h>

namespace dranet::health {
namespace {

using namespace std::chrono_literals;
using Clock = TaintPolicy::Clock;

HealthReport Report(std::vector<std::pair<std::string, Health>> devices) {
  HealthReport report;
  report.generation = 1;
  for (auto& [name, health] : devices)
    report.devices.push_back({name, {health, health == Health::kUnhealthy ? "why" : "",
                                     health == Health::kUnhealthy ? "NoCarrier" : ""}, {}, {}});
  return report;
}

const inventory::DeviceTaint kNoCarrier{"dra.net/unhealthy", "NoCarrier", "NoSchedule"};

TEST(TaintPolicy, AnUnhealthyDeviceIsTaintedAtOnce) {
  TaintPolicy policy(30s);
  const auto t0 = Clock::now();
  EXPECT_TRUE(policy.Update(Report({{"a", Health::kHealthy}, {"b", Health::kHealthy}}), t0).empty());
  const auto taints = policy.Update(Report({{"a", Health::kUnhealthy}, {"b", Health::kHealthy}}), t0 + 1s);
  ASSERT_EQ(taints.size(), 1u);
  EXPECT_EQ(taints.at("a"), kNoCarrier);
  EXPECT_EQ(policy.NextDue(), Clock::time_point::max());
}

TEST(TaintPolicy, TheTaintGoesOnlyAfterHealthyForTheWholeClearTime) {
  TaintPolicy policy(30s);
  const auto t0 = Clock::now();
  policy.Update(Report({{"a", Health::kUnhealthy}}), t0);
  EXPECT_EQ(policy.Update(Report({{"a", Health::kHealthy}}), t0 + 1s).size(), 1u);
  EXPECT_EQ(policy.NextDue(), t0 + 31s);
  EXPECT_EQ(policy.Update(Report({{"a", Health::kHealthy}}), t0 + 30s).size(), 1u);
  EXPECT_TRUE(policy.Update(Report({{"a", Health::kHealthy}}), t0 + 31s).empty());
  EXPECT_EQ(policy.NextDue(), Clock::time_point::max());
}

TEST(TaintPolicy, AFlappingDeviceStaysTaintedUntilQuiet) {
  TaintPolicy policy(30s);
  auto t = Clock::now();
  int changes = 0;
  std::map<std::string, inventory::DeviceTaint> last;
  for (int flap = 0; flap < 40; ++flap) {  // down and up every second for 40 s
    for (auto health : {Health::kUnhealthy, Health::kHealthy}) {
      auto now = policy.Update(Report({{"a", health}}), t);
      changes += now != last;
      last = now;
      t += 500ms;
    }
  }
  EXPECT_EQ(changes, 1);  // tainted once
  EXPECT_EQ(last.size(), 1u);
  t += 30s;  // quiet
  EXPECT_TRUE(policy.Update(Report({{"a", Health::kHealthy}}), t).empty());
}

TEST(TaintPolicy, UnknownIsNoRecoveryAndAGoneDeviceTakesItsTaintAlong) {
  TaintPolicy policy(30s);
  const auto t0 = Clock::now();
  policy.Update(Report({{"a", Health::kUnhealthy}, {"b", Health::kUnhealthy}}), t0);
  EXPECT_EQ(policy.Update(Report({{"a", Health::kUnknown}, {"b", Health::kUnhealthy}}), t0 + 40s).size(), 2u);
  const auto taints = policy.Update(Report({{"a", Health::kUnknown}}), t0 + 80s);
  ASSERT_EQ(taints.size(), 1u);
  EXPECT_EQ(taints.count("a"), 1u);
}

TEST(WithTaints, ReplacesEachDevicesTaints) {
  inventory::Device a, b;
  a.name = "a";
  b.name = "b";
  b.taints.push_back({"old", "x", "NoExecute"});
  const auto out = WithTaints({a, b}, {{"a", kNoCarrier}});
  EXPECT_EQ(out[0].taints, std::vector<inventory::DeviceTaint>{kNoCarrier});
  EXPECT_TRUE(out[1].taints.empty());
}

}  // namespace
}  // namespace dranet::health
