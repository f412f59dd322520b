#include "base/k8s_names.h"

#include <string>

#include <gtest/gtest.h>

namespace dranet {
namespace {

TEST(Names, DnsLabel) {
  EXPECT_TRUE(IsDnsLabel("pci-0000-8a-00-0"));
  EXPECT_TRUE(IsDnsLabel("a"));
  EXPECT_TRUE(IsDnsLabel(std::string(63, 'a')));
  EXPECT_FALSE(IsDnsLabel(std::string(64, 'a')));
  EXPECT_FALSE(IsDnsLabel(""));
  EXPECT_FALSE(IsDnsLabel("-a"));
  EXPECT_FALSE(IsDnsLabel("a-"));
  EXPECT_FALSE(IsDnsLabel("Eth0"));
  EXPECT_FALSE(IsDnsLabel("eth0.100"));
}

TEST(Names, DnsSubdomain) {
  EXPECT_TRUE(IsDnsSubdomain("dra.net"));
  EXPECT_TRUE(IsDnsSubdomain("aks-gpu-45139532-vmss000081-dra.net-0"));
  EXPECT_FALSE(IsDnsSubdomain("dra..net"));
  EXPECT_FALSE(IsDnsSubdomain(".dra.net"));
  EXPECT_FALSE(IsDnsSubdomain(std::string(254, 'a')));
}

TEST(Names, QualifiedName) {
  EXPECT_TRUE(IsQualifiedName("dra.net/ifName"));
  EXPECT_TRUE(IsQualifiedName("resource.kubernetes.io/pcieRoot"));
  EXPECT_TRUE(IsQualifiedName("ifName"));
  EXPECT_TRUE(IsQualifiedName("_x1"));
  EXPECT_FALSE(IsQualifiedName("dra.net/if-name"));
  EXPECT_FALSE(IsQualifiedName("dra.net/1ifName"));
  EXPECT_FALSE(IsQualifiedName("a/b/c"));
  EXPECT_FALSE(IsQualifiedName("dra.net/"));
  EXPECT_FALSE(IsQualifiedName("/ifName"));
  EXPECT_TRUE(IsQualifiedName("dra.net/" + std::string(32, 'a')));
  EXPECT_FALSE(IsQualifiedName("dra.net/" + std::string(33, 'a')));
  EXPECT_FALSE(IsQualifiedName(std::string(60, 'a') + ".net/x"));  // domain of 64 chars
}

TEST(Names, SemVer) {
  EXPECT_TRUE(IsSemVer("1.2.3"));
  EXPECT_TRUE(IsSemVer("0.0.0"));
  EXPECT_TRUE(IsSemVer("1.2.3-rc.1+build.5"));
  EXPECT_TRUE(IsSemVer("1.2.3+001"));
  EXPECT_FALSE(IsSemVer("1.2"));
  EXPECT_FALSE(IsSemVer("01.2.3"));
  EXPECT_FALSE(IsSemVer("1.2.3-01"));
  EXPECT_FALSE(IsSemVer("1.2.3-"));
  EXPECT_FALSE(IsSemVer("v1.2.3"));
  EXPECT_FALSE(IsSemVer("1.2.3.4"));
}

}  // namespace
}  // namespace dranet
