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
