#include "state/plan_json.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "state/crc32.h"
#include "state_test_support.h"

namespace dranet::state {
namespace {

using testing::SamplePlan;

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  return d;
}

TEST(Crc32, KnownVector) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926U);
  EXPECT_EQ(Crc32(""), 0U);
}

TEST(PlanJson, RoundTripsEveryField) {
  std::vector<inject::ClaimPlan> plans = {SamplePlan("a"), SamplePlan("b")};
  plans[1].netdevs[0].mtu.reset();
  auto doc = Parse(PlansToJson(plans));
  EXPECT_EQ(PlansFromJson(doc), plans);
}

// The checkpoint joins the per-claim texts: that must be the array's text.
TEST(PlanJson, JoinedPlanTextsAreTheArrayText) {
  std::vector<inject::ClaimPlan> plans = {SamplePlan("a"), SamplePlan("b"), SamplePlan("c")};
  plans[1].netdevs[0].mtu.reset();
  std::string joined = "[";
  for (const auto& p : plans) joined += (joined.size() > 1 ? "," : "") + PlanToJson(p);
  joined += "]";
  EXPECT_EQ(joined, PlansToJson(plans));
  EXPECT_EQ(PlansToJson({}), "[]");
}

TEST(PlanJson, CheckpointsFromBeforeRulesAndNeighborsStillLoad) {
  auto plan = SamplePlan("old");
  auto json = PlansToJson({plan});
  // What an older dranetd wrote: routes without scope/protocol, no rules or neighbours.
  for (const char* cut : {R"(,"scope":0,"protocol":0)", R"(,"scope":253,"protocol":16)",
                          R"(,"rules":[{"priority":100,"source":"192.168.1.0/24","destination":"","table":101,"family":2}])",
                          R"(,"neighbors":[{"destination":"192.168.1.1","lladdr":"00:00:5e:00:01:01"}])",
                          R"(,"rules":[{"priority":0,"source":"","destination":"10.1.0.0/16","table":102,"family":2}])",
                          R"(,"neighbors":[{"destination":"fe80::1","lladdr":"02:00:00:00:00:01"}])"}) {
    auto at = json.find(cut);
    ASSERT_NE(at, std::string::npos) << cut;
    json.erase(at, std::string(cut).size());
  }
  auto doc = Parse(json);
  auto loaded = PlansFromJson(doc);
  ASSERT_EQ(loaded.size(), 1U);
  const auto& n = loaded[0].netdevs[0];
  EXPECT_TRUE(n.rules.empty());
  EXPECT_TRUE(n.neighbors.empty());
  EXPECT_TRUE(n.host_state.rules.empty());
  EXPECT_EQ(n.routes[1].scope, 0);
  EXPECT_EQ(n.routes[0].destination, "10.0.0.0/8");
}

// A plan without claim-config settings is written as before they existed,
// and such a checkpoint loads with nothing set.
TEST(PlanJson, PlansWithoutClaimConfigSettingsLookAsBefore) {
  auto plan = SamplePlan("plain");
  auto& n = plan.netdevs[0];
  n.settings = {};
  n.host_state.settings = {};
  n.vrf_name.clear();
  n.vrf_table = 0;
  n.disable_ebpf_programs = false;
  n.dhcp_lease.reset();
  plan.profiles.clear();
  plan.published_attributes.clear();
  plan.devices.pop_back();  // the adminAccess one
  plan.devices.pop_back();  // the share
  plan.netdevs.pop_back();  // the child
  const auto json = PlansToJson({plan});
  for (const char* key : {"settings", "vrfName", "disableEbpfPrograms", "dhcpLease", "profiles", "publishedAttributes",
                          "adminAccess", "shareID", "childType", "childMode"})
    EXPECT_EQ(json.find(key), std::string::npos) << key;
  auto doc = Parse(json);
  EXPECT_EQ(PlansFromJson(doc), std::vector<inject::ClaimPlan>{plan});
}

// A device's published attributes are kept as the object the slice carried,
// not as a string of JSON inside JSON.
TEST(PlanJson, PublishedAttributesAreKeptAsObjects) {
  const auto json = PlansToJson({SamplePlan("a")});
  EXPECT_NE(json.find(R"("publishedAttributes":{"pci-0000-8a-00-0":{"dra.net/ifName":{"string":"gpu0rdma0"},)"),
            std::string::npos)
      << json;
  auto doc = Parse(json);
  EXPECT_EQ(PlansFromJson(doc)[0].published_attributes, SamplePlan("a").published_attributes);
}

TEST(PlanJson, AChildOfAnUnknownTypeOrModeIsRefused) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {R"("childType":"ipvlan")", R"("childType":"vlan")"}, {R"("childMode":"l2")", R"("childMode":"bridge")"}}) {
    auto json = PlansToJson({SamplePlan("a")});
    const auto at = json.find(from);
    ASSERT_NE(at, std::string::npos) << json;
    json.replace(at, from.size(), to);
    auto doc = Parse(json);
    try {
      PlansFromJson(doc);
      ADD_FAILURE() << "accepted " << to;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(from.substr(1, 9)), std::string::npos) << e.what();
    }
  }
}

TEST(PlanJson, MistypedFieldIsNamed) {
  auto json = PlansToJson({SamplePlan("a")});
  auto at = json.find("\"major\":231");
  json.replace(at, 11, "\"major\":\"x\"");
  auto doc = Parse(json);
  try {
    PlansFromJson(doc);
    FAIL() << "accepted a string major";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("deviceNodes.major"), std::string::npos) << e.what();
  }
}

TEST(PlanJson, MissingFieldIsRejected) {
  auto doc = Parse(R"([{"claimUID":"a","namespace":"n"}])");
  EXPECT_THROW(PlansFromJson(doc), std::invalid_argument);
  auto not_array = Parse(R"({"claims":1})");
  EXPECT_THROW(PlansFromJson(not_array), std::invalid_argument);
}

}  // namespace
}  // namespace dranet::state
