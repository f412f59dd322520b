// The selector corpus: expressions with their expected result or error on
// a RoCE NIC and a GPU, plus CEL's commutative error semantics and limits.
#include <gtest/gtest.h>

#include <string>

#include "cel/cel.h"

namespace dranet::cel {
namespace {

using inventory::Attributes;
using inventory::SemVer;

struct Fixture {
  Attributes nic_attrs{
      {"dra.net/ifName", std::string("gpu1rdma0")},
      {"dra.net/rdma", true},
      {"dra.net/rdmaDevice", std::string("mlx5_1")},
      {"dra.net/numaNode", int64_t{0}},
      {"dra.net/mtu", int64_t{8896}},
      {"dra.net/type", std::string("device")},
      {"resource.kubernetes.io/pcieRoot", std::string("pci0000:8f")},
      {"gce.dra.net/gpuIndex", int64_t{1}},
  };
  Attributes gpu_attrs{
      {"type", std::string("gpu")},  // bare: the driver's own domain
      {"gpu.nvidia.com/driverVersion", SemVer{"550.54.15"}},
      {"gpu.nvidia.com/cudaComputeCapability", SemVer{"10.0.0"}},
      {"resource.kubernetes.io/pciBusID", std::string("0000:8f:00.0")},
  };
  Capacity gpu_capacity{{"gpu.nvidia.com/memory", "183359Mi"}, {"gpu.nvidia.com/slots", "1500m"}};
  DeviceView nic() const { return DeviceView{"dra.net", &nic_attrs, nullptr}; }
  DeviceView gpu() const { return DeviceView{"gpu.nvidia.com", &gpu_attrs, &gpu_capacity}; }
};

enum class Want { kTrue, kFalse, kError, kCompileError };

struct Case {
  const char* expr;
  Want want;
  const char* message = "";  // substring of the error, when an error is wanted
  bool on_gpu = false;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.expr; }

class Corpus : public ::testing::TestWithParam<Case> {};

TEST_P(Corpus, Evaluates) {
  const Case& c = GetParam();
  Fixture f;
  if (c.want == Want::kCompileError) {
    try {
      Compile(c.expr);
      FAIL() << "compiled: " << c.expr;
    } catch (const CompileError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
    return;
  }
  Program p = Compile(c.expr);
  EvalResult r = p.Evaluate(c.on_gpu ? f.gpu() : f.nic());
  switch (c.want) {
    case Want::kTrue:
      EXPECT_TRUE(r.matched) << (r.error ? r.error->ToString() : "false");
      EXPECT_FALSE(r.error);
      break;
    case Want::kFalse:
      EXPECT_FALSE(r.matched);
      EXPECT_FALSE(r.error) << r.error->ToString();
      break;
    case Want::kError:
      EXPECT_FALSE(r.matched);
      ASSERT_TRUE(r.error);
      EXPECT_NE(r.error->message.find(c.message), std::string::npos) << r.error->ToString();
      break;
    case Want::kCompileError:
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Selectors, Corpus,
    ::testing::Values(
        // Device fields and both attribute spellings.
        Case{R"(device.driver == "dra.net")", Want::kTrue},
        Case{R"(device.attributes["dra.net"].rdma == true)", Want::kTrue},
        Case{R"(device.attributes["dra.net"]["rdmaDevice"] == "mlx5_1")", Want::kTrue},
        Case{R"(device.attributes["dra.net"].rdmaDevice == "mlx5_0")", Want::kFalse},
        Case{R"(device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:8f")", Want::kTrue},
        Case{R"(device.attributes["gpu.nvidia.com"].type == "gpu")", Want::kTrue, "", true},
        // Missing attribute: an error (the device does not match), not a crash.
        Case{R"(device.attributes["dra.net"].pciAddress == "x")", Want::kError, "no such key: pciAddress"},
        Case{R"(device.attributes["nope.example.com"].x == 1)", Want::kError, "no such key: x"},
        Case{R"(has(device.attributes["dra.net"].pciAddress))", Want::kFalse},
        Case{R"(has(device.attributes["dra.net"].ifName))", Want::kTrue},
        Case{R"(has(device.attributes["nope.example.com"].x))", Want::kFalse},
        Case{R"("dra.net" in device.attributes)", Want::kTrue},
        Case{R"("gpu.nvidia.com" in device.attributes)", Want::kFalse},
        Case{R"("rdma" in device.attributes["dra.net"])", Want::kTrue},
        // Comparisons across types.
        Case{R"(device.attributes["dra.net"].numaNode < 1)", Want::kTrue},
        Case{R"(device.attributes["dra.net"].mtu >= 9000)", Want::kFalse},
        Case{R"(device.attributes["dra.net"].ifName > "gpu0")", Want::kTrue},
        Case{R"(false < true)", Want::kTrue},
        Case{R"(device.attributes["dra.net"].numaNode == "0")", Want::kFalse},
        Case{R"(device.attributes["dra.net"].numaNode < "1")", Want::kError, "no matching overload for '_<_'"},
        // String functions.
        Case{R"(device.attributes["dra.net"].ifName.startsWith("gpu"))", Want::kTrue},
        Case{R"(device.attributes["dra.net"].ifName.endsWith("rdma0"))", Want::kTrue},
        Case{R"(device.attributes["dra.net"].ifName.contains("rdma"))", Want::kTrue},
        Case{R"(device.attributes["dra.net"].ifName.matches("^gpu[0-3]rdma0$"))", Want::kTrue},
        Case{R"(device.attributes["dra.net"].ifName.matches("(?i)^GPU"))", Want::kTrue},
        Case{R"(matches(device.attributes["dra.net"].ifName, "rdma1"))", Want::kFalse},
        Case{R"(device.attributes["dra.net"].ifName.matches("^gpu\\drdma\\d$"))", Want::kTrue},
        Case{R"(device.attributes["dra.net"].ifName.matches("^(?:gpu|eth)[0-9]+"))", Want::kTrue},
        Case{R"(device.attributes["dra.net"].ifName.matches("\\s"))", Want::kFalse},
        Case{R"(device.attributes["dra.net"].ifName.substring(3, 4) == "1")", Want::kTrue},
        Case{R"(device.attributes["dra.net"].ifName.substring(4) == "rdma0")", Want::kTrue},
        Case{R"(device.attributes["dra.net"].ifName.substring(5, 4) == "")", Want::kError, "invalid substring range"},
        Case{R"(device.attributes["dra.net"].ifName.substring(0, 99) == "")", Want::kError, "index out of range: 99"},
        Case{R"(device.attributes["dra.net"].ifName.size() == 9)", Want::kTrue},
        Case{R"(size(device.attributes["dra.net"].ifName) == 9)", Want::kTrue},
        Case{R"("héllo".size() == 5 && "héllo".substring(1, 2) == "é")", Want::kTrue},
        Case{R"(device.attributes["dra.net"].ifName.upperAscii() == "GPU1RDMA0")", Want::kTrue},
        // Conversions.
        Case{R"(int(device.attributes["dra.net"].ifName.substring(3, 4)) < 2)", Want::kTrue},
        Case{R"(int("x") == 1)", Want::kError, "cannot convert \"x\" to int"},
        Case{R"(int("9223372036854775808") == 1)", Want::kError, "out of range"},
        Case{R"(string(device.attributes["dra.net"].numaNode) == "0")", Want::kTrue},
        Case{R"(string(true) + "x" == "truex")", Want::kTrue},
        Case{R"(bool("true"))", Want::kTrue},
        // Lists, in, size, ternary.
        Case{R"(device.attributes["dra.net"].rdmaDevice in ["mlx5_0", "mlx5_1"])", Want::kTrue},
        Case{R"(3 in [1, 2])", Want::kFalse},
        Case{R"(size([1, 2, 3]) == 3 && [1, 2][1] == 2)", Want::kTrue},
        Case{R"([1, 2] + [3] == [1, 2, 3])", Want::kTrue},
        Case{R"([1][5] == 1)", Want::kError, "index out of range: 5"},
        Case{R"(device.attributes["dra.net"].numaNode == 0 ? true : false)", Want::kTrue},
        Case{R"(1 ? true : false)", Want::kError, "condition of '?:' is int"},
        // Integer arithmetic with overflow errors.
        Case{R"(7 / 2 == 3 && 7 % 2 == 1 && -7 / 2 == -3 && 2 * 3 - 1 == 5)", Want::kTrue},
        Case{R"(9223372036854775807 + 1 > 0)", Want::kError, "integer overflow in _+_"},
        Case{R"(-9223372036854775808 - 1 < 0)", Want::kError, "integer overflow in _-_"},
        Case{R"(-9223372036854775808 / -1 < 0)", Want::kError, "integer overflow in _/_"},
        Case{R"(4611686018427387904 * 2 > 0)", Want::kError, "integer overflow in _*_"},
        Case{R"(1 / 0 == 0)", Want::kError, "division by zero"},
        Case{R"(1 % 0 == 0)", Want::kError, "modulus by zero"},
        Case{R"(-(-9223372036854775807 - 1) > 0)", Want::kError, "integer overflow in negation"},
        Case{R"(0x10 == 16)", Want::kTrue},
        // Semantic versions (attribute values and semver()).
        Case{R"(device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0")))", Want::kTrue, "", true},
        Case{R"(device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("550.54.15")) == 0)", Want::kTrue, "", true},
        Case{R"(device.attributes["gpu.nvidia.com"].driverVersion == semver("550.54.15"))", Want::kTrue, "", true},
        Case{R"(device.attributes["gpu.nvidia.com"].cudaComputeCapability >= semver("9.0.0"))", Want::kTrue, "", true},
        Case{R"(device.attributes["gpu.nvidia.com"].driverVersion.major() == 550)", Want::kTrue, "", true},
        Case{R"(semver("1.0.0-alpha").isLessThan(semver("1.0.0")))", Want::kTrue},
        Case{R"(semver("1.0.0-alpha.1") < semver("1.0.0-alpha.beta"))", Want::kTrue},
        Case{R"(semver("1.0.0-2") < semver("1.0.0-10"))", Want::kTrue},
        Case{R"(semver("1.0.0+build1") == semver("1.0.0+build2"))", Want::kTrue},
        Case{R"(isSemver("1.2") || isSemver("01.2.3"))", Want::kFalse},
        Case{R"(semver(device.attributes["dra.net"].ifName) == semver("1.0.0"))", Want::kError, "invalid semantic version"},
        Case{R"(device.attributes["gpu.nvidia.com"].driverVersion == "550.54.15")", Want::kFalse, "", true},
        // Capacity quantities.
        Case{R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("100Gi")) > 0)", Want::kTrue, "", true},
        Case{R"(device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("200Gi")))", Want::kTrue, "", true},
        Case{R"(device.capacity["gpu.nvidia.com"].memory.asInteger() == 183359 * 1048576)", Want::kTrue, "", true},
        Case{R"(device.capacity["gpu.nvidia.com"].slots.isInteger())", Want::kFalse, "", true},
        Case{R"(device.capacity["gpu.nvidia.com"].slots.asInteger() == 1)", Want::kError, "not an integer", true},
        Case{R"(device.capacity["gpu.nvidia.com"].cores.asInteger() == 1)", Want::kError, "no such key: cores", true},
        // Non-bool results are errors for a selector.
        Case{R"(device.attributes["dra.net"].numaNode)", Want::kError, "expected bool"},
        // Compile-time errors.
        Case{R"(device.attribute["dra.net"].rdma)", Want::kCompileError, "device has no field 'attribute'"},
        Case{R"(attributes["dra.net/rdma"].BoolValue)", Want::kCompileError, "undeclared reference to 'attributes'"},
        Case{R"(device.driver.startsWith())", Want::kCompileError, "takes 1 argument(s), got 0"},
        Case{R"(device.driver.frobnicate(1))", Want::kCompileError, "unknown function 'frobnicate'"},
        Case{R"(device.driver.matches("("))", Want::kCompileError, "invalid regular expression"},
        Case{R"(device.driver.matches("(a)\\1"))", Want::kCompileError, "back-references"},
        Case{R"(device.driver.matches("a+?"))", Want::kCompileError, "lazy quantifiers"},
        Case{R"(device.driver.matches("a++"))", Want::kCompileError, "bad repetition operator"},
        Case{R"(semver("1.2") == semver("1.2.0"))", Want::kCompileError, "invalid semantic version"},
        Case{R"(device.driver == "x)", Want::kCompileError, "unterminated string literal"},
        Case{R"(device.driver = "x")", Want::kCompileError, "did you mean '=='"},
        Case{R"(has(device.attributes["dra.net"]))", Want::kCompileError, "has() takes one field selection"},
        Case{R"([1, 2].exists(x, x > 1))", Want::kCompileError, "macro is not supported"},
        Case{R"(1.5 > 1)", Want::kCompileError, "floating-point literals are not supported"},
        Case{R"(9223372036854775808 > 1)", Want::kCompileError, "integer literal out of range"},
        Case{R"(device.driver == )", Want::kCompileError, "unexpected end of input"},
        Case{R"((device.driver == "a")) )", Want::kCompileError, "after the expression"}));

// device.allowMultipleAllocations (consumable capacity): the device's flag,
// false unless set; has() knows the field.
TEST(DeviceFields, AllowMultipleAllocationsIsTheDevicesFlag) {
  inventory::Attributes attributes{{"dra.net/rdma", true}};
  DeviceView shared{"dra.net", &attributes, nullptr, true};
  DeviceView alone{"dra.net", &attributes, nullptr};
  const auto program = Compile(R"(device.attributes["dra.net"].rdma && device.allowMultipleAllocations)");
  EXPECT_TRUE(program.Evaluate(shared).matched);
  EXPECT_FALSE(program.Evaluate(alone).matched);
  EXPECT_FALSE(program.Evaluate(alone).error);
  EXPECT_TRUE(Compile("has(device.allowMultipleAllocations)").Evaluate(alone).matched);
  inventory::Device device;
  device.allow_multiple_allocations = true;
  EXPECT_TRUE(Compile("device.allowMultipleAllocations").Evaluate(ViewOf(device)).matched);
}

// CEL's && and || are commutative over errors: the deciding value wins
// from either side; otherwise the error surfaces.
TEST(LogicalOperators, ErrorSemanticsAreCommutative) {
  Fixture f;
  const std::string missing = R"(device.attributes["dra.net"].missing == 1)";
  auto eval = [&](const std::string& e) { return Compile(e).Evaluate(f.nic()); };

  EXPECT_TRUE(eval("true || " + missing).matched);
  EXPECT_TRUE(eval(missing + " || true").matched);
  EXPECT_FALSE(eval(missing + " || true").error);
  EXPECT_FALSE(eval("false && " + missing).error);
  EXPECT_FALSE(eval(missing + " && false").error);
  EXPECT_FALSE(eval(missing + " && false").matched);

  EvalResult r = eval("true && " + missing);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("no such key: missing"), std::string::npos);
  r = eval(missing + " || false");
  ASSERT_TRUE(r.error);
  // A non-bool operand is an error, but false && still decides.
  EXPECT_TRUE(eval("1 && true").error);
  EXPECT_FALSE(eval("1 && false").error);
  EXPECT_TRUE(eval("!1").error);
}

TEST(Positions, EvaluationErrorPointsAtTheLookup) {
  Fixture f;
  Program p = Compile("device.driver == \"dra.net\" &&\n  device.attributes[\"dra.net\"].pciAddress == \"x\"");
  EvalResult r = p.Evaluate(f.nic());
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position.line, 2u);
  EXPECT_EQ(r.error->position.column, 31u);  // the '.' before pciAddress
  EXPECT_EQ(r.error->ToString(),
            "2:31: no such key: pciAddress (device has no attribute \"dra.net/pciAddress\")\n"
            " |   device.attributes[\"dra.net\"].pciAddress == \"x\"\n"
            " | ..............................^");
}

TEST(Limits, CostLimitStopsEvaluation) {
  Fixture f;
  Environment env;
  env.cost_limit = 50;
  // A list of 40 elements checked with `in` costs more than 50 steps.
  std::string list = "[";
  for (int i = 0; i < 40; ++i) list += std::to_string(i) + (i < 39 ? "," : "]");
  Program p = Compile("99 in " + list, env);
  EvalResult r = p.Evaluate(f.nic());
  EXPECT_FALSE(r.matched);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("cost over the limit of 50"), std::string::npos) << r.error->ToString();
  // The same program under the default limit evaluates.
  EXPECT_FALSE(Compile("99 in " + list).Evaluate(f.nic()).error);
}

TEST(Limits, CostLimitIsNotDecidedAwayByOr) {
  Fixture f;
  Environment env;
  env.cost_limit = 10;
  // The right side would decide, but the budget is gone before it runs.
  std::string expr = "[1,2,3,4,5,6,7,8,9,10,11,12] == [1] || true";
  EvalResult r = Compile(expr, env).Evaluate(f.nic());
  ASSERT_TRUE(r.error);
  EXPECT_FALSE(r.matched);
}

TEST(Regex, NoCatastrophicBacktracking) {
  // A backtracking engine takes minutes on this; RE2 and glibc's ERE matcher
  // are linear. The assertion is on the answer: the test would time out.
  inventory::Attributes attrs{{"dra.net/ifName", std::string(60, 'a') + "!"}};
  auto p = Compile(R"(device.attributes["dra.net"].ifName.matches("(a+)+$"))");
  DeviceView view{"dra.net", &attrs, nullptr};
  auto r = p.Evaluate(view);
  EXPECT_FALSE(r.error.has_value());
  EXPECT_FALSE(r.matched);
}

TEST(Regex, BackReferenceNumbersNeverReachTheEngine) {
  EXPECT_THROW(Compile(R"(device.driver.matches("\\44444444444444444444"))"), CompileError);
  inventory::Attributes attrs{{"dra.net/ifName", std::string("a")}};
  auto p = Compile(R"(device.driver.matches(device.attributes["dra.net"].ifName + "\\4444444444444"))");
  auto r = p.Evaluate(DeviceView{"dra.net", &attrs, nullptr});
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(r.error->message.find("back-references"), std::string::npos) << r.error->message;
}

TEST(Programs, EvaluateManyDevicesFromOneCompile) {
  Program p = Compile(R"(device.attributes["dra.net"].numaNode == 1)");
  int matched = 0;
  for (int64_t numa = 0; numa < 4; ++numa) {
    Attributes a{{"dra.net/numaNode", numa}};
    if (p.Evaluate(DeviceView{"dra.net", &a, nullptr}).matched) ++matched;
  }
  EXPECT_EQ(matched, 1);
  // A device with no attribute map at all is a missing key, not a crash.
  EXPECT_TRUE(p.Evaluate(DeviceView{"dra.net", nullptr, nullptr}).error);
}

// An int list attribute (resource.kubernetes.io/numaNode under DRAListTypeAttributes) is a
// CEL list of ints.
TEST(ListAttributes, IntListIsACelListOfInts) {
  Attributes attrs{{"resource.kubernetes.io/numaNode", inventory::IntList{1, 0, 2}},
                   {"dra.net/numaNode", int64_t{1}}};
  auto eval = [&](const char* expr) { return Compile(expr).Evaluate(DeviceView{"dra.net", &attrs, nullptr}); };
  for (const char* expr : {
           R"(1 in device.attributes["resource.kubernetes.io"].numaNode)",
           R"(2 in device.attributes["resource.kubernetes.io"].numaNode)",
           R"(!(3 in device.attributes["resource.kubernetes.io"].numaNode))",
           R"(device.attributes["resource.kubernetes.io"].numaNode[0] == 1)",
           R"(device.attributes["resource.kubernetes.io"].numaNode == [1, 0, 2])",
           R"(size(device.attributes["resource.kubernetes.io"].numaNode) == 3)",
           R"(device.attributes["dra.net"].numaNode in device.attributes["resource.kubernetes.io"].numaNode)",
       }) {
    EvalResult r = eval(expr);
    EXPECT_TRUE(r.matched) << expr << (r.error ? " " + r.error->ToString() : "");
  }
  // Not an int: comparing it with one is unequal (heterogeneous equality), ordering is an error.
  EvalResult r = eval(R"(device.attributes["resource.kubernetes.io"].numaNode == 1)");
  EXPECT_FALSE(r.matched);
  EXPECT_FALSE(r.error);
  r = eval(R"(device.attributes["resource.kubernetes.io"].numaNode < 2)");
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("no matching overload"), std::string::npos) << r.error->ToString();
}

TEST(Programs, ConjunctsNameEachClauseWithItsText) {
  Program p = Compile(
      R"(device.attributes["dra.net"].rdma == true && device.attributes["dra.net"].ifName.startsWith("gpu") && )"
      R"((device.attributes["dra.net"].numaNode == 1 || false))");
  auto clauses = p.Conjuncts();
  ASSERT_EQ(clauses.size(), 3u);
  EXPECT_EQ(clauses[0].text, R"(device.attributes["dra.net"].rdma == true)");
  EXPECT_EQ(clauses[1].text, R"(device.attributes["dra.net"].ifName.startsWith("gpu"))");
  EXPECT_EQ(clauses[2].text, R"((device.attributes["dra.net"].numaNode == 1 || false))");
  EXPECT_EQ(clauses[1].position.column, 46u);
  Fixture f;
  EXPECT_TRUE(clauses[0].program.Evaluate(f.nic()).matched);
  EXPECT_TRUE(clauses[1].program.Evaluate(f.nic()).matched);
  EXPECT_FALSE(clauses[2].program.Evaluate(f.nic()).matched);
}

}  // namespace
}  // namespace dranet::cel
