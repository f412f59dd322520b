// klog text and JSON lines: severity letter, source, quoted message, fields.
#include "base/log.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

namespace dranet {
namespace {

TEST(Logger, KlogTextLine) {
  std::ostringstream out;
  Logger log(out);
  log.Warning("plugin rejected", {{"file", "/x/a.so"}, {"reason", "say \"hi\"\n"}, {"count", 3}, {"ok", true}});
  std::regex line(R"(^W\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ log_test\.cpp:\d+\] "plugin rejected" file="/x/a\.so" reason="say \\"hi\\"\\n" count="3" ok="true"\n$)");
  EXPECT_TRUE(std::regex_match(out.str(), line)) << out.str();
}

TEST(Logger, JsonLine) {
  std::ostringstream out;
  Logger log(out, Logger::Format::kJson);
  log.Error("claim failed", {{"claim", "ns/c"}});
  std::regex line(R"(^\{"ts":"\d{4}-\d{2}-\d{2}T[^"]+Z","level":"error","caller":"log_test\.cpp:\d+","msg":"claim failed","claim":"ns/c"\}\n$)");
  EXPECT_TRUE(std::regex_match(out.str(), line)) << out.str();
}

TEST(Logger, VerbosityGatesVerboseLines) {
  std::ostringstream out;
  Logger log(out, Logger::Format::kText, 2);
  log.Verbose(3, "hidden");
  log.Verbose(2, "shown");
  EXPECT_EQ(out.str().find("hidden"), std::string::npos);
  EXPECT_NE(out.str().find("shown"), std::string::npos);
  EXPECT_THROW(Logger::ParseFormat("xml"), std::invalid_argument);
}

}  // namespace
}  // namespace dranet
