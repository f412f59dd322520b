// cel_fuzz: compiles fuzzer bytes as a CEL expression (either dialect) and
// evaluates it, and each of its top-level clauses, against a fixed device.
//   byte 0   bit 0: dialect (0 device selector, 1 dranet --filter)
//            bit 1: a tight cost limit (1000) instead of the default
//   rest     the expression source
// Contract checked (core/cel/cel.h): Compile throws only CompileError;
// Evaluate and FilterKeeps never throw; an error result is never `matched`.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cel/cel.h"
#include "fuzz_support.h"

namespace {

using dranet::inventory::Attributes;
using dranet::inventory::Device;
using dranet::inventory::SemVer;

const Device& FixedDevice() {
  static const Device device = [] {
    Device d;
    d.name = "pci-0000-8a-00-0";
    d.pci_address = "0000:8a:00.0";
    d.if_name = "gpu0rdma0";
    d.rdma_device = "mlx5_0";
    d.attributes = Attributes{
        {"dra.net/ifName", std::string("gpu0rdma0")},
        {"dra.net/rdma", true},
        {"dra.net/rdmaDevice", std::string("mlx5_0")},
        {"dra.net/mtu", int64_t{9000}},
        {"dra.net/numaNode", int64_t{-1}},
        {"dra.net/type", std::string("device")},
        {"dra.net/virtual", false},
        {"dra.net/ipv4", std::string("192.168.1.4")},
        {"dra.net/pciVendor", std::string("Mellanox Technologies")},
        {"dra.net/kernelVersion", SemVer{"6.8.0-rc1+build.5"}},
        {"resource.kubernetes.io/pciBusID", std::string("0000:8a:00.0")},
        {"resource.kubernetes.io/pcieRoot", std::string("pci0000:80")},
        {"gce.dra.net/networkName", std::string("")},
        {"bigint", int64_t{INT64_MAX}},
        {"smallint", int64_t{INT64_MIN}},
    };
    return d;
  }();
  return device;
}

const dranet::cel::Capacity& FixedCapacity() {
  static const dranet::cel::Capacity capacity{{"dra.net/bandwidth", "400Gi"},
                                              {"dra.net/queues", "64"},
                                              {"dra.net/odd", "1.5e3m"}};
  return capacity;
}

void EvaluateChecked(const dranet::cel::Program& program, const dranet::cel::DeviceView& view) {
  const dranet::cel::EvalResult result = program.Evaluate(view);
  dranet::fuzz::Check(!(result.matched && result.error), "Evaluate: matched together with an error");
  if (result.error) (void)result.error->ToString();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  dranet::cel::Environment env;
  env.dialect = (data[0] & 1) ? dranet::cel::Dialect::kDranetFilter : dranet::cel::Dialect::kDeviceSelector;
  if (data[0] & 2) env.cost_limit = 1000;
  const std::string_view source(reinterpret_cast<const char*>(data + 1), size - 1);

  std::optional<dranet::cel::Program> program;
  try {
    program = dranet::cel::Compile(source, env);
  } catch (const dranet::cel::CompileError& e) {
    (void)e.error().ToString();
    return 0;
  }
  dranet::fuzz::Check(program->source() == source, "Program::source differs from the input");

  dranet::cel::DeviceView view = dranet::cel::ViewOf(FixedDevice());
  view.capacity = &FixedCapacity();
  EvaluateChecked(*program, view);
  // The same device without attribute or capacity maps (null is allowed).
  EvaluateChecked(*program, dranet::cel::DeviceView{"other.example.com", nullptr, nullptr});
  for (const auto& clause : program->Conjuncts()) EvaluateChecked(clause.program, view);
  if (env.dialect == dranet::cel::Dialect::kDranetFilter) {
    (void)dranet::cel::FilterKeeps(*program, FixedDevice());
  }

  // StringLiteral must produce a literal that compiles for any bytes.
  const std::string literal = dranet::cel::StringLiteral(source);
  try {
    (void)dranet::cel::Compile(literal);
  } catch (const dranet::cel::CompileError& e) {
    if (literal.size() <= dranet::cel::Environment{}.max_source_bytes) {
      dranet::fuzz::Fail("StringLiteral output does not compile: " + e.error().ToString());
    }
  }
  return 0;
}
