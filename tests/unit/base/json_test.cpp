// ParseJson: nesting is refused past kMaxJsonDepth before the parser runs,
// whatever hides brackets (strings, escapes), and a million levels cost a
// clear error instead of the stack.
#include "base/json.h"

#include <gtest/gtest.h>

#include <string>

namespace dranet {
namespace {

std::string Nested(int depth, const std::string& inner = "0") {
  return std::string(static_cast<std::size_t>(depth), '[') + inner + std::string(static_cast<std::size_t>(depth), ']');
}

TEST(Json, DepthAtTheLimitParses) {
  rapidjson::Document doc;
  EXPECT_EQ(ParseJson(doc, Nested(kMaxJsonDepth)), "");
  EXPECT_TRUE(doc.IsArray());
}

TEST(Json, OneLevelMoreIsRefusedWithItsOffset) {
  rapidjson::Document doc;
  EXPECT_EQ(ParseJson(doc, Nested(kMaxJsonDepth + 1)),
            "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels at offset " +
                std::to_string(kMaxJsonDepth));
  EXPECT_TRUE(doc.IsNull());
}

// What crashed dranetd: a ResourceClaim whose annotations hold 10^6 '['.
TEST(Json, AMillionLevelsAreRefusedNotFollowed) {
  const std::string claim = R"({"metadata":{"annotations":{"a":)" + std::string(1'000'000, '[') + "}}}";
  rapidjson::Document doc;
  EXPECT_NE(ParseJson(doc, claim).find("nested deeper than"), std::string::npos);
}

TEST(Json, BracketsInStringsDoNotCount) {
  const std::string deep_text = "\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"";
  rapidjson::Document doc;
  EXPECT_EQ(ParseJson(doc, R"({"a":)" + deep_text + "}"), "");
  EXPECT_EQ(FindJsonDepthExcess(R"(["\\", [[ ]]])", 2), 8u);  // the escape ends at the backslash
}

TEST(Json, ParseErrorsNameTheOffset) {
  rapidjson::Document doc;
  EXPECT_EQ(ParseJson(doc, R"({"a":})"), "Invalid value. at offset 5");
  EXPECT_EQ(ParseJson(doc, R"({"a":1} trailing)"), "The document root must not be followed by other values. at offset 8");
  EXPECT_EQ(ParseJson(doc, R"({"a":1} trailing)", /*stop_when_done=*/true), "");
}

}  // namespace
}  // namespace dranet
