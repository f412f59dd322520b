// DRANET's --filter dialect: `attributes[...]` with Go field names, and the
// keep/drop decision (errors keep the device, non-bool drops it).
#include <gtest/gtest.h>

#include "cel/cel.h"

namespace dranet::cel {
namespace {

inventory::Device DeviceWith(inventory::Attributes attrs) {
  inventory::Device d;
  d.name = "dev";
  d.attributes = std::move(attrs);
  return d;
}

Environment FilterEnv() {
  Environment env;
  env.dialect = Dialect::kDranetFilter;
  return env;
}

TEST(DranetFilter, DefaultExpressionExcludesVethOnly) {
  Program filter = Compile(kDranetDefaultFilter, FilterEnv());
  EXPECT_FALSE(FilterKeeps(filter, DeviceWith({{"dra.net/type", std::string("veth")}})));
  EXPECT_TRUE(FilterKeeps(filter, DeviceWith({{"dra.net/type", std::string("device")}})));
  EXPECT_TRUE(FilterKeeps(filter, DeviceWith({{"dra.net/type", std::string("dummy")}})));
  // IB-only devices have no dra.net/type at all.
  EXPECT_TRUE(FilterKeeps(filter, DeviceWith({{"dra.net/rdmaDevice", std::string("mlx5_0")}})));
}

TEST(DranetFilter, GoFieldNamesReadByKind) {
  auto keeps = [](const char* expr, inventory::Attributes attrs) {
    return Compile(expr, FilterEnv()).Evaluate(ViewOf(DeviceWith(std::move(attrs))));
  };
  EXPECT_TRUE(keeps(R"(attributes["dra.net/virtual"].BoolValue == false)", {{"dra.net/virtual", false}}).matched);
  EXPECT_TRUE(keeps(R"(attributes["dra.net/mtu"].IntValue > 1500)", {{"dra.net/mtu", int64_t{9000}}}).matched);
  EXPECT_TRUE(keeps(R"(attributes["v"].VersionValue == "1.2.3")", {{"v", inventory::SemVer{"1.2.3"}}}).matched);
  // A field of another kind is null (Go's nil pointer): unequal, not an error.
  EvalResult r = keeps(R"(attributes["dra.net/mtu"].StringValue != "veth")", {{"dra.net/mtu", int64_t{9000}}});
  EXPECT_TRUE(r.matched);
  EXPECT_FALSE(r.error);
  EXPECT_TRUE(keeps(R"(has(attributes["dra.net/mtu"].IntValue))", {{"dra.net/mtu", int64_t{1}}}).matched);
  EXPECT_FALSE(keeps(R"(has(attributes["dra.net/mtu"].StringValue))", {{"dra.net/mtu", int64_t{1}}}).matched);
  // An int list is IntValues (the Go field of the "ints" kind), a list.
  const inventory::Attributes numa{{"resource.kubernetes.io/numaNode", inventory::IntList{1, 0, 2}}};
  EXPECT_TRUE(keeps(R"(0 in attributes["resource.kubernetes.io/numaNode"].IntValues)", numa).matched);
  EXPECT_FALSE(keeps(R"(has(attributes["resource.kubernetes.io/numaNode"].IntValue))", numa).matched);
  EXPECT_FALSE(keeps(R"(has(attributes["dra.net/mtu"].IntValues))", {{"dra.net/mtu", int64_t{1}}}).matched);
  r = keeps(R"(attributes["dra.net/mtu"].Value == 1)", {{"dra.net/mtu", int64_t{1}}});
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("DeviceAttribute has no field 'Value'"), std::string::npos);
}

TEST(DranetFilter, ErrorsKeepAndNonBoolDrops) {
  Program missing = Compile(R"(attributes["dra.net/virtual"].BoolValue == false)", FilterEnv());
  EXPECT_TRUE(FilterKeeps(missing, DeviceWith({})));  // no such key -> kept
  Program not_bool = Compile(R"("x")", FilterEnv());
  EXPECT_FALSE(FilterKeeps(not_bool, DeviceWith({})));
  Program no = Compile("false", FilterEnv());
  EXPECT_FALSE(FilterKeeps(no, DeviceWith({})));
}

TEST(DranetFilter, DialectsDoNotMix) {
  EXPECT_THROW(Compile(R"(device.driver == "dra.net")", FilterEnv()), CompileError);
  EXPECT_THROW(Compile(kDranetDefaultFilter), CompileError);
}

}  // namespace
}  // namespace dranet::cel
