// What a plugin attribute must look like (resource.k8s.io/v1 limits).
#include <gtest/gtest.h>

#include "plugins/attribute_rules.h"

using namespace dranet::plugins;

namespace {
dranet_attr_t Str(const char* name, const char* value, uint32_t type = DRANET_ATTR_STRING) {
  return dranet_attr_t{sizeof(dranet_attr_t), type, name, value, 0};
}
dranet_attr_t Int(const char* name, int64_t v, uint32_t type = DRANET_ATTR_INT) {
  return dranet_attr_t{sizeof(dranet_attr_t), type, name, nullptr, v};
}
}  // namespace

TEST(AttributeRules, QualifiedAndUnqualifiedNames) {
  std::string why;
  auto a = AcceptAttribute(Str("azure.dra.net/vmSize", "Standard_ND128isr_GB300_v6"), "azure", why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->first, "azure.dra.net/vmSize");
  auto b = AcceptAttribute(Int("gpuIndex", 3), "gcp", why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->first, "gcp.dra.net/gpuIndex");
  EXPECT_EQ(std::get<int64_t>(b->second), 3);
}

TEST(AttributeRules, LimitsAreEnforced) {
  std::string why;
  EXPECT_FALSE(AcceptAttribute(Str("x.dra.net/a", std::string(65, 'v').c_str()), "x", why));
  EXPECT_TRUE(AcceptAttribute(Str("x.dra.net/a", std::string(64, 'v').c_str()), "x", why));
  EXPECT_FALSE(AcceptAttribute(Str(("x.dra.net/" + std::string(33, 'a')).c_str(), "v"), "x", why));
  EXPECT_TRUE(AcceptAttribute(Str(("x.dra.net/" + std::string(32, 'a')).c_str(), "v"), "x", why));
  EXPECT_FALSE(AcceptAttribute(Str("Bad_Domain/a", "v"), "x", why));
  EXPECT_FALSE(AcceptAttribute(Str("x.dra.net/1abc", "v"), "x", why));
  EXPECT_FALSE(AcceptAttribute(Str("x.dra.net/a", nullptr), "x", why));
  EXPECT_FALSE(AcceptAttribute(Int("x.dra.net/b", 2, DRANET_ATTR_BOOL), "x", why));
  EXPECT_FALSE(AcceptAttribute(Int("x.dra.net/b", 2, 77), "x", why));
  EXPECT_NE(why.find("unknown type 77"), std::string::npos);
}

TEST(AttributeRules, VersionsMustBeSemver) {
  std::string why;
  auto v = AcceptAttribute(Str("x.dra.net/fw", "28.39.1002", DRANET_ATTR_VERSION), "x", why);
  ASSERT_TRUE(v) << why;
  EXPECT_EQ(std::get<dranet::inventory::SemVer>(v->second).value, "28.39.1002");
  EXPECT_FALSE(AcceptAttribute(Str("x.dra.net/fw", "v1.2", DRANET_ATTR_VERSION), "x", why));
  EXPECT_TRUE(AcceptAttribute(Str("x.dra.net/fw", "1.2.3-rc.1+build.5", DRANET_ATTR_VERSION), "x", why));
}

TEST(AttributeRules, CoreDomains) {
  EXPECT_TRUE(IsCoreDomain("dra.net/ifName"));
  EXPECT_TRUE(IsCoreDomain("resource.kubernetes.io/pcieRoot"));
  EXPECT_FALSE(IsCoreDomain("azure.dra.net/vmSize"));
  EXPECT_FALSE(IsCoreDomain("gpuIndex"));
}
