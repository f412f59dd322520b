// DRANET's flag value syntaxes as dranetd reads them (cmd/dranet/app.go:
// Go durations, Kubernetes feature gates, the cloud provider hint, the bbolt
// file path, and manifests whose args start with the program).
#include "daemon/dranet_flags.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace dranet::daemon {
namespace {

using std::chrono::milliseconds;

TEST(DranetFlags, GoDurations) {
  EXPECT_EQ(ParseGoDuration("2s"), milliseconds(2000));
  EXPECT_EQ(ParseGoDuration("1m"), milliseconds(60000));
  EXPECT_EQ(ParseGoDuration("1m30s"), milliseconds(90000));
  EXPECT_EQ(ParseGoDuration("1.5h"), milliseconds(5400000));
  EXPECT_EQ(ParseGoDuration("500ms"), milliseconds(500));
  EXPECT_EQ(ParseGoDuration("1500us"), milliseconds(1));
  EXPECT_EQ(ParseGoDuration("0"), milliseconds(0));
  EXPECT_EQ(ParseGoDuration("+3s"), milliseconds(3000));
  for (const char* bad : {"", "2", "s", "5x", "1..5s", "-1s", "2 s", "1m-"}) {
    EXPECT_THROW(ParseGoDuration(bad), std::invalid_argument) << bad;
  }
  try {
    ParseGoDuration("5x");
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "invalid duration \"5x\": unknown unit \"x\" (Go syntax, e.g. 2s, 1m30s, 500ms)");
  }
}

TEST(DranetFlags, FeatureGatesKnownGatesAndGoBools) {
  auto gates = ParseFeatureGates("");
  EXPECT_EQ(gates.size(), 2U);
  EXPECT_FALSE(gates.at("DRAListTypeAttributes"));
  EXPECT_FALSE(gates.at("PersistentResourceSliceAttributes"));
  gates = ParseFeatureGates("DRAListTypeAttributes=true, PersistentResourceSliceAttributes=F");
  EXPECT_TRUE(gates.at("DRAListTypeAttributes"));
  EXPECT_FALSE(gates.at("PersistentResourceSliceAttributes"));
  EXPECT_TRUE(ParseFeatureGates("PersistentResourceSliceAttributes=1").at("PersistentResourceSliceAttributes"));
  EXPECT_THROW(ParseFeatureGates("NoSuchGate=true"), std::invalid_argument);
  EXPECT_THROW(ParseFeatureGates("DRAListTypeAttributes"), std::invalid_argument);
  EXPECT_THROW(ParseFeatureGates("DRAListTypeAttributes=yes"), std::invalid_argument);
}

TEST(DranetFlags, CloudHintChoosesOneCloudPluginOrNone) {
  auto detect = CloudPluginsForHint("");
  EXPECT_TRUE(detect.detect);
  EXPECT_TRUE(detect.deny.empty());
  auto gce = CloudPluginsForHint("GCE");
  EXPECT_FALSE(gce.detect);
  EXPECT_EQ(gce.plugin, "gcp");
  EXPECT_EQ(gce.deny, (std::vector<std::string>{"alibaba", "aws", "azure", "oci"}));
  EXPECT_EQ(CloudPluginsForHint("azure").plugin, "azure");
  EXPECT_EQ(CloudPluginsForHint("OKE").plugin, "oci");
  EXPECT_EQ(CloudPluginsForHint("AWS").plugin, "aws");
  EXPECT_EQ(CloudPluginsForHint("ALIBABA").plugin, "alibaba");
  auto none = CloudPluginsForHint("NONE");
  EXPECT_EQ(none.deny, CloudPluginNames());
  EXPECT_TRUE(none.note.empty());
  auto webhook = CloudPluginsForHint("webhook");
  EXPECT_EQ(webhook.deny, CloudPluginNames());
  EXPECT_NE(webhook.note.find("not supported"), std::string::npos);
  EXPECT_THROW(CloudPluginsForHint("digitalocean"), std::invalid_argument);
}

TEST(DranetFlags, DbPathGivesItsDirectory) {
  EXPECT_EQ(StateDirForDbPath("/var/run/dranet/dranet.db"), "/var/run/dranet");
  EXPECT_EQ(StateDirForDbPath("/data/x.db"), "/data");
  EXPECT_EQ(StateDirForDbPath("x.db"), ".");
  EXPECT_EQ(StateDirForDbPath(""), "");
}

TEST(DranetFlags, AnEmptyValueAfterTheEqualsSignIsTheEmptyValue) {
  using V = std::vector<std::string>;
  EXPECT_EQ(SplitEmptyValues({"--feature-gates=", "--v=4", "--webhook-url=", "--filter", ""}),
            (V{"--feature-gates", "", "--v=4", "--webhook-url", "", "--filter", ""}));
  // A value that merely ends in '=' is a value; "--=" and a lone "-x=" are left to the parser.
  EXPECT_EQ(SplitEmptyValues({"--plugin-config=azure.detect=", "--=", "-v="}),
            (V{"--plugin-config=azure.detect=", "--=", "-v="}));
}

TEST(DranetFlags, ProgramNameAsFirstArgumentIsSkipped) {
  const char* dranet[] = {"/usr/bin/dranetd", "/dranet", "--v=4"};
  EXPECT_EQ(FirstArgument(3, dranet), 2);
  const char* ours[] = {"/usr/bin/dranetd", "dranetd", "--v=4"};
  EXPECT_EQ(FirstArgument(3, ours), 2);
  const char* flags[] = {"/usr/bin/dranetd", "--v=4"};
  EXPECT_EQ(FirstArgument(2, flags), 1);
  const char* other[] = {"/usr/bin/dranetd", "/bin/sh"};
  EXPECT_EQ(FirstArgument(2, other), 1);
  const char* alone[] = {"/usr/bin/dranetd"};
  EXPECT_EQ(FirstArgument(1, alone), 1);
}

}  // namespace
}  // namespace dranet::daemon
