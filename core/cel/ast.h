#pragma once
// core/cel/ast.h — the parsed form of an expression (internal to core/cel).
//
// Nodes live in one vector and refer to their children by index, so a
// Program is a shared pointer to this plus a root index; sub-programs (the
// top-level `&&` clauses) share the same vector.
#include <cstdint>
#include <memory>
#include "cel/regex.h"
#include <string>
#include <vector>

#include "cel/cel.h"
#include "cel/value.h"

namespace dranet::cel::detail {

enum class NodeKind : uint8_t {
  kLiteral,      // literal
  kIdent,        // name
  kSelect,       // children[0] . name
  kIndex,        // children[0] [ children[1] ]
  kCall,         // function(children...), or children[0].function(children[1..]) when is_method
  kList,         // [children...]
  kNot,          // !children[0]
  kNegate,       // -children[0]
  kBinary,       // children[0] op children[1]
  kAnd,          // children[0] && children[1]
  kOr,           // children[0] || children[1]
  kConditional,  // children[0] ? children[1] : children[2]
  kHas,          // has(children[0] . name)
};

enum class BinaryOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kAdd, kSub, kMul, kDiv, kMod };

enum class Function : uint8_t {
  kInt, kString, kBool, kSize, kSemver, kIsSemver, kQuantity, kIsQuantity,
  kMatches, kStartsWith, kEndsWith, kContains, kSubstring, kLowerAscii, kUpperAscii,
  kMajor, kMinor, kPatch, kCompareTo, kIsLessThan, kIsGreaterThan,
  kAsInteger, kIsInteger, kSign,
};

struct Node {
  NodeKind kind = NodeKind::kLiteral;
  BinaryOp op = BinaryOp::kEq;
  Function function = Function::kInt;
  bool is_method = false;
  uint32_t begin = 0, end = 0;  // source span [begin, end)
  uint32_t pos = 0;             // where errors about this node point
  std::string name;             // identifier, field or function name
  Value literal;
  std::vector<int> children;
  std::shared_ptr<const Regex> regex;  // pre-compiled literal pattern of matches()
};

// Parses source into nodes; returns the root index. Throws CompileError.
int Parse(std::string_view source, const Environment& env, std::vector<Node>& nodes);

// Error with line, column and excerpt for a byte offset of `source`.
Error MakeError(std::string_view source, uint32_t offset, std::string message);

}  // namespace dranet::cel::detail

namespace dranet::cel {
struct Program::Impl {
  std::string source;
  Environment env;
  std::vector<detail::Node> nodes;
};
}  // namespace dranet::cel
