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

// Who owns which attribute domain is decided from the whole set of plugins,
// never by load order.
TEST(AttributeDomains, OwnDomainsDeclarationsContestsAndReservations) {
  using dranet::plugins::AttributeDomains;
  const uint32_t v13 = DRANET_ABI_VERSION(1, 3), v12 = DRANET_ABI_VERSION(1, 2);
  const AttributeDomains domains({{"gcp", v13, {"gce.dra.net"}},
                                  {"aaa", v13, {"azure.dra.net", "acme.com", "gpu.example.com"}},
                                  {"zzz", v13, {"gpu.example.com", "nvidia.dra.net"}},
                                  {"nvidia", v13, {}},
                                  {"old", v12, {}}},
                                 {"gcp", "aaa", "zzz", "nvidia", "old", "azure"});
  EXPECT_EQ(domains.OwnedBy("gcp"), (std::vector<std::string>{"gce.dra.net", "gcp.dra.net"}));
  EXPECT_EQ(domains.OwnedBy("aaa"), (std::vector<std::string>{"aaa.dra.net", "acme.com"}));
  EXPECT_EQ(domains.OwnedBy("zzz"), (std::vector<std::string>{"zzz.dra.net"}));
  EXPECT_EQ(domains.RefusedDeclarations("aaa"),
            (std::vector<std::string>{
                "declared domain azure.dra.net is reserved for plugin azure (present in the plugin directories)",
                "declared domain gpu.example.com is declared by aaa and zzz, so it belongs to neither"}));
  EXPECT_EQ(domains.RefusedDeclarations("zzz"),
            (std::vector<std::string>{
                "declared domain gpu.example.com is declared by aaa and zzz, so it belongs to neither",
                "declared domain nvidia.dra.net belongs to plugin nvidia"}));
  EXPECT_TRUE(domains.RefusedDeclarations("gcp").empty());

  EXPECT_EQ(domains.Refusal("gcp", "gce.dra.net/machineType"), "");
  EXPECT_EQ(domains.Refusal("gcp", "gcp.dra.net/x"), "");
  EXPECT_EQ(domains.Refusal("aaa", "azure.dra.net/vmSize"),
            "attribute \"azure.dra.net/vmSize\": domain azure.dra.net is not plugin aaa's (its own is aaa.dra.net; "
            "declare others in attribute_domains)");
  EXPECT_EQ(domains.Refusal("aaa", "gce.dra.net/machineType"),
            "attribute \"gce.dra.net/machineType\": domain gce.dra.net belongs to plugin gcp");
  EXPECT_EQ(domains.Refusal("zzz", "gpu.example.com/x"),
            "attribute \"gpu.example.com/x\": domain gpu.example.com is declared by aaa and zzz, so it belongs to "
            "neither");
  EXPECT_EQ(domains.Refusal("nvidia", "dra.net/numaNode"),
            "attribute \"dra.net/numaNode\": domain dra.net is reserved for the core");
  EXPECT_EQ(domains.Refusal("nvidia", "resource.kubernetes.io/pcieRoot"),
            "attribute \"resource.kubernetes.io/pcieRoot\": domain resource.kubernetes.io is reserved for the core");
  // A 1.3 plugin writes only what it owns; an older one also any domain
  // nobody owns, except a plugin's name under .dra.net.
  EXPECT_NE(domains.Refusal("nvidia", "unowned.example.com/x"), "");
  EXPECT_EQ(domains.Refusal("old", "unowned.example.com/x"), "");
  EXPECT_NE(domains.Refusal("old", "azure.dra.net/vmSize"), "");
  EXPECT_NE(domains.Refusal("old", "acme.com/x"), "") << "declared by aaa";
}

// A descriptor that lists a domain twice declares it once: the plugin is
// not its own rival, and a real second declarer still contests it.
TEST(AttributeDomains, ADomainListedTwiceByOnePluginIsStillItsOwn) {
  using dranet::plugins::AttributeDomains;
  const uint32_t v13 = DRANET_ABI_VERSION(1, 3);
  const AttributeDomains alone({{"acme", v13, {"acme.example.com", "acme.example.com"}}}, {"acme"});
  EXPECT_EQ(alone.OwnedBy("acme"), (std::vector<std::string>{"acme.dra.net", "acme.example.com"}));
  EXPECT_TRUE(alone.RefusedDeclarations("acme").empty());
  EXPECT_EQ(alone.Refusal("acme", "acme.example.com/x"), "");
  const AttributeDomains rivals({{"acme", v13, {"acme.example.com", "acme.example.com"}}, {"other", v13, {"acme.example.com"}}},
                                {"acme", "other"});
  EXPECT_EQ(rivals.RefusedDeclarations("acme"),
            (std::vector<std::string>{"declared domain acme.example.com is declared by acme and other, so it belongs to neither"}));
}

TEST(AttributeDomains, TheSameSetInAnyOrderGivesTheSameOwners) {
  using dranet::plugins::AttributeDomains;
  const uint32_t v13 = DRANET_ABI_VERSION(1, 3);
  AttributeDomains::Plugin a{"a", v13, {"shared.example.com", "a-only.example.com"}};
  AttributeDomains::Plugin b{"b", v13, {"shared.example.com"}};
  const AttributeDomains ab({a, b}, {"a", "b"}), ba({b, a}, {"a", "b"});
  for (const char* plugin : {"a", "b"}) {
    EXPECT_EQ(ab.OwnedBy(plugin), ba.OwnedBy(plugin));
    EXPECT_EQ(ab.RefusedDeclarations(plugin), ba.RefusedDeclarations(plugin));
    EXPECT_EQ(ab.Refusal(plugin, "shared.example.com/x"), ba.Refusal(plugin, "shared.example.com/x"));
    EXPECT_NE(ab.Refusal(plugin, "shared.example.com/x"), "");
  }
  EXPECT_EQ(ab.Refusal("a", "a-only.example.com/x"), "");
}
