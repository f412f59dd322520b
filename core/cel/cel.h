#pragma once
// core/cel/cel.h — the CEL subset that DRA device selectors and dranetd's
// publish filter are written in.
//
// Why hand-written: no C++ implementation of CEL is packaged in Debian
// (cel-cpp needs Abseil + ANTLR builds we do not ship), and the part of the
// language that device selectors use is small. This module is a lexer, a
// recursive-descent parser to a flat AST, and a tree-walking evaluator over
// one device at a time. docs/cel.md lists what is supported and where it
// differs from Kubernetes' CEL (cel-go).
//
// Use:
//   cel::Program p = cel::Compile(R"(device.attributes["dra.net"].rdma == true)");
//   cel::EvalResult r = p.Evaluate(cel::ViewOf(device));
//   if (r.matched) ...; else if (r.error) log(r.error->ToString());
//
// Compile once, evaluate many times: a Program is immutable, cheap to copy
// (it shares its AST) and safe to evaluate from several threads at once.
//
// Two dialects (Environment::dialect):
//   kDeviceSelector  what Kubernetes DRA offers: one variable `device` with
//                    `driver`, `attributes[domain].id`, `capacity[domain].id`.
//   kDranetFilter    DRANET's `--filter`: one variable `attributes`, a map
//                    from qualified name to a DeviceAttribute object with Go
//                    field names (.StringValue .IntValue .BoolValue
//                    .VersionValue); a field of another kind reads as null.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "inventory/device.h"

namespace dranet::cel {

enum class Dialect {
  kDeviceSelector,  // `device.…` (resource.k8s.io/v1 selectors)
  kDranetFilter,    // `attributes[…].StringValue …` (dranetd --filter)
};

// Limits. The defaults follow the Kubernetes API's limits for selectors
// (10 KiB of source, 1,000,000 cost units per expression).
struct Environment {
  Dialect dialect = Dialect::kDeviceSelector;
  // Evaluation steps allowed per Evaluate(); each AST node visited costs 1,
  // string and list work adds its length / 10. Over the limit the evaluation
  // stops with an error (never a wrong answer).
  int64_t cost_limit = 1'000'000;
  std::size_t max_source_bytes = 10 * 1024;
  int max_nesting_depth = 64;  // nested parentheses, lists, calls, operators
};

// A place in the expression source, 1-based.
struct SourcePosition {
  uint32_t offset = 0;  // byte offset, 0-based
  uint32_t line = 1;
  uint32_t column = 1;  // in code points
};

// A compile or evaluation error. ToString() gives
//   "1:31: no such key: rdmaDevice\n | device.attributes[...]...\n | ....^"
struct Error {
  std::string message;
  SourcePosition position;
  std::string excerpt;  // the source line and a caret line, each prefixed " | "
  std::string ToString() const;
};

class CompileError : public std::runtime_error {
 public:
  explicit CompileError(Error error);
  const Error& error() const { return error_; }

 private:
  Error error_;
};

// Quantities of a device's capacity (resource.k8s.io Quantity strings such as
// "284208Mi"), keyed by qualified name like attributes.
using Capacity = std::map<std::string, std::string>;

// The device an expression is evaluated against. Borrowed: the pointed-to
// maps must outlive the Evaluate() call. Attribute keys are qualified
// ("dra.net/rdma"); a bare key ("rdma") belongs to `driver`'s domain.
struct DeviceView {
  std::string_view driver;
  const inventory::Attributes* attributes = nullptr;  // null = none
  const Capacity* capacity = nullptr;                 // null = none
  bool allow_multiple_allocations = false;            // device.allowMultipleAllocations
};

// The value of a resource.k8s.io Quantity ("800", "1500m", "10Gi"): exact
// for integers and milli-values; nullopt when `text` is not one.
std::optional<long double> QuantityValue(std::string_view text);

// A view of one of our devices (driver "dra.net", no capacities; its
// allowMultipleAllocations as set).
DeviceView ViewOf(const inventory::Device& device, std::string_view driver = "dra.net");

struct EvalResult {
  bool matched = false;        // true only for a bool result `true`
  std::optional<Error> error;  // evaluation error, or a non-bool result
  bool not_bool = false;       // the expression produced a non-bool value
};

struct Clause;  // one top-level `&&` operand, for explaining failures

class Program {
 public:
  // Evaluates against one device. Never throws for data-dependent problems
  // (missing attributes, type mismatches, overflow, cost limit): those come
  // back in EvalResult::error with their position.
  EvalResult Evaluate(const DeviceView& device) const;

  // The source this program was compiled from.
  const std::string& source() const;

  // The operands of the top-level `&&` chain, left to right (the whole
  // expression when it is not an `&&`). Each is a Program of its own over
  // the same source, so a failing clause can be named with its text.
  std::vector<Clause> Conjuncts() const;

  struct Impl;  // opaque: the AST and limits

 private:
  friend Program Compile(std::string_view, const Environment&);
  Program(std::shared_ptr<const Impl> impl, int root) : impl_(std::move(impl)), root_(root) {}
  std::shared_ptr<const Impl> impl_;
  int root_ = 0;
};

struct Clause {
  std::string text;  // the clause's source text, trimmed
  SourcePosition position;
  Program program;
};

// Parses and checks `source` (identifiers, function names and arities,
// literal regexes and semvers). Throws CompileError with the position.
Program Compile(std::string_view source, const Environment& env = {});

// `text` as a CEL string literal ("..." with \\, \", \n, \r, \t and other
// control bytes escaped), for building selectors from values.
std::string StringLiteral(std::string_view text);

// DRANET's default --filter expression: publish everything except veths.
inline constexpr std::string_view kDranetDefaultFilter =
    R"(!("dra.net/type" in attributes) || attributes["dra.net/type"].StringValue != "veth")";

// The publish-filter decision with DRANET's semantics: a device is kept when
// the expression is true or fails to evaluate (an error must not hide a
// device), and dropped when it is false or not a bool.
bool FilterKeeps(const Program& filter, const inventory::Device& device);

}  // namespace dranet::cel
