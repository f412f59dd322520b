// core/cel/parser.cpp — lexer and recursive-descent parser for the CEL subset.
//
// Grammar (CEL's, minus maps literals, macros other than has(), floats and
// uints):
//   expr     = or ["?" or ":" expr]
//   or       = and {"||" and}
//   and      = relation {"&&" relation}
//   relation = sum {("=="|"!="|"<"|"<="|">"|">="|"in") sum}
//   sum      = product {("+"|"-") product}
//   product  = unary {("*"|"/"|"%") unary}
//   unary    = "!" unary | "-" unary | member
//   member   = primary {"." IDENT ["(" args ")"] | "[" expr "]"}
//   primary  = IDENT ["(" args ")"] | "(" expr ")" | "[" [args] "]" | literal
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "cel/ast.h"

namespace dranet::cel::detail {
namespace {

enum class TokenKind { kEnd, kIdent, kInt, kString, kPunct };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  uint32_t begin = 0, end = 0;
  std::string text;     // identifier / punctuation / decoded string
  uint64_t number = 0;  // kInt
};

struct FunctionInfo {
  std::string_view name;
  Function function;
  bool method;  // called as receiver.name(...)
  int min_args, max_args;
};

// Functions and methods the evaluator implements, with their arities
// (arguments besides the receiver).
constexpr std::array<FunctionInfo, 26> kFunctions{{
    {"int", Function::kInt, false, 1, 1},
    {"string", Function::kString, false, 1, 1},
    {"bool", Function::kBool, false, 1, 1},
    {"size", Function::kSize, false, 1, 1},
    {"size", Function::kSize, true, 0, 0},
    {"semver", Function::kSemver, false, 1, 1},
    {"isSemver", Function::kIsSemver, false, 1, 1},
    {"quantity", Function::kQuantity, false, 1, 1},
    {"isQuantity", Function::kIsQuantity, false, 1, 1},
    {"matches", Function::kMatches, false, 2, 2},
    {"matches", Function::kMatches, true, 1, 1},
    {"startsWith", Function::kStartsWith, true, 1, 1},
    {"endsWith", Function::kEndsWith, true, 1, 1},
    {"contains", Function::kContains, true, 1, 1},
    {"substring", Function::kSubstring, true, 1, 2},
    {"lowerAscii", Function::kLowerAscii, true, 0, 0},
    {"upperAscii", Function::kUpperAscii, true, 0, 0},
    {"major", Function::kMajor, true, 0, 0},
    {"minor", Function::kMinor, true, 0, 0},
    {"patch", Function::kPatch, true, 0, 0},
    {"compareTo", Function::kCompareTo, true, 1, 1},
    {"isLessThan", Function::kIsLessThan, true, 1, 1},
    {"isGreaterThan", Function::kIsGreaterThan, true, 1, 1},
    {"asInteger", Function::kAsInteger, true, 0, 0},
    {"isInteger", Function::kIsInteger, true, 0, 0},
    {"sign", Function::kSign, true, 0, 0},
}};

// CEL's comprehension macros; named in the error instead of failing on
// their bound variable.
constexpr std::string_view kUnsupportedMacros[] = {"exists", "exists_one", "all", "map", "filter"};

bool IsIdentStart(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  return (c | 0x20) - 'a' + 10;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token Next() {
    SkipSpaceAndComments();
    Token t;
    t.begin = static_cast<uint32_t>(i_);
    if (i_ >= src_.size()) {
      t.end = t.begin;
      return t;
    }
    char c = src_[i_];
    if ((c == 'r' || c == 'R') && i_ + 1 < src_.size() && (src_[i_ + 1] == '"' || src_[i_ + 1] == '\'')) {
      ++i_;
      t.kind = TokenKind::kString;
      t.text = LexString(/*raw=*/true, t.begin);
    } else if (IsIdentStart(c)) {
      t.kind = TokenKind::kIdent;
      while (i_ < src_.size() && (IsIdentStart(src_[i_]) || IsDigit(src_[i_]))) ++i_;
      t.text = std::string(src_.substr(t.begin, i_ - t.begin));
    } else if (IsDigit(c)) {
      t.kind = TokenKind::kInt;
      t.number = LexNumber(t.begin);
    } else if (c == '"' || c == '\'') {
      t.kind = TokenKind::kString;
      t.text = LexString(/*raw=*/false, t.begin);
    } else {
      t.kind = TokenKind::kPunct;
      static constexpr std::string_view kTwo[] = {"&&", "||", "==", "!=", "<=", ">="};
      std::string_view two = src_.substr(i_, 2);
      if (std::find(std::begin(kTwo), std::end(kTwo), two) != std::end(kTwo)) {
        t.text = std::string(two);
        i_ += 2;
      } else if (std::string_view("()[]{}.,?:!<>+-*/%").find(c) != std::string_view::npos) {
        t.text = std::string(1, c);
        ++i_;
      } else if (c == '=' || c == '&' || c == '|') {
        Fail(t.begin, std::string("unexpected '") + c + "' (did you mean '" + c + c + "'?)");
      } else {
        Fail(t.begin, "unexpected character '" + std::string(1, c) + "'");
      }
    }
    t.end = static_cast<uint32_t>(i_);
    return t;
  }

  [[noreturn]] void Fail(uint32_t offset, std::string message) const {
    throw CompileError(MakeError(src_, offset, std::move(message)));
  }

 private:
  void SkipSpaceAndComments() {
    while (i_ < src_.size()) {
      char c = src_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++i_;
      } else if (c == '/' && i_ + 1 < src_.size() && src_[i_ + 1] == '/') {
        while (i_ < src_.size() && src_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  uint64_t LexNumber(uint32_t begin) {
    uint64_t n = 0;
    bool overflow = false;
    if (src_[i_] == '0' && i_ + 1 < src_.size() && (src_[i_ + 1] == 'x' || src_[i_ + 1] == 'X')) {
      i_ += 2;
      std::size_t start = i_;
      while (i_ < src_.size() && IsHex(src_[i_])) {
        if (n > (std::numeric_limits<uint64_t>::max() >> 4)) overflow = true;
        n = n * 16 + static_cast<uint64_t>(HexValue(src_[i_++]));
      }
      if (i_ == start) Fail(begin, "hexadecimal literal without digits");
    } else {
      while (i_ < src_.size() && IsDigit(src_[i_])) {
        uint64_t d = static_cast<uint64_t>(src_[i_++] - '0');
        if (n > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
        n = n * 10 + d;
      }
    }
    if (i_ < src_.size() && (src_[i_] == '.' || src_[i_] == 'e' || src_[i_] == 'E') &&
        !(src_[i_] == '.' && i_ + 1 < src_.size() && IsIdentStart(src_[i_ + 1]))) {
      Fail(begin, "floating-point literals are not supported (DRA attributes are int, string, bool or version)");
    }
    if (i_ < src_.size() && (src_[i_] == 'u' || src_[i_] == 'U')) {
      Fail(begin, "unsigned literals are not supported; write a plain int");
    }
    if (overflow) Fail(begin, "integer literal out of range");
    return n;
  }

  std::string LexString(bool raw, uint32_t begin) {
    char quote = src_[i_++];
    std::string out;
    while (true) {
      if (i_ >= src_.size() || src_[i_] == '\n') Fail(begin, "unterminated string literal");
      char c = src_[i_++];
      if (c == quote) return out;
      if (c != '\\' || raw) {
        out += c;
        continue;
      }
      if (i_ >= src_.size()) Fail(begin, "unterminated string literal");
      uint32_t escape_at = static_cast<uint32_t>(i_ - 1);
      char e = src_[i_++];
      switch (e) {
        case '\\': case '"': case '\'': case '`': case '?': out += e; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x': case 'u': case 'U': {
          int digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
          uint32_t cp = 0;
          for (int k = 0; k < digits; ++k) {
            if (i_ >= src_.size() || !IsHex(src_[i_])) Fail(escape_at, "invalid \\" + std::string(1, e) + " escape");
            cp = cp * 16 + static_cast<uint32_t>(HexValue(src_[i_++]));
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) Fail(escape_at, "invalid code point in escape");
          AppendUtf8(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '3') {
            uint32_t v = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2; ++k) {
              if (i_ >= src_.size() || src_[i_] < '0' || src_[i_] > '7') Fail(escape_at, "invalid octal escape");
              v = v * 8 + static_cast<uint32_t>(src_[i_++] - '0');
            }
            AppendUtf8(out, v);
          } else {
            Fail(escape_at, "invalid escape sequence '\\" + std::string(1, e) + "'");
          }
      }
    }
  }

  std::string_view src_;
  std::size_t i_ = 0;
};

class Parser {
 public:
  Parser(std::string_view src, const Environment& env, std::vector<Node>& nodes)
      : src_(src), env_(env), nodes_(nodes), lexer_(src) {
    Advance();
  }

  int ParseAll() {
    int root = ParseExpr();
    if (tok_.kind != TokenKind::kEnd) Fail(tok_.begin, "unexpected " + Describe(tok_) + " after the expression");
    return root;
  }

 private:
  // Counts nesting; the parser recurses once per level.
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : parser(p) {
      if (++parser.depth_ > parser.env_.max_nesting_depth) {
        parser.Fail(parser.tok_.begin, "expression nested deeper than " +
                                           std::to_string(parser.env_.max_nesting_depth) + " levels");
      }
    }
    ~DepthGuard() { --parser.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    Parser& parser;
  };

  [[noreturn]] void Fail(uint32_t offset, std::string message) const { lexer_.Fail(offset, std::move(message)); }

  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::kEnd: return "end of input";
      case TokenKind::kInt: return "number";
      case TokenKind::kString: return "string";
      case TokenKind::kIdent: return "'" + t.text + "'";
      case TokenKind::kPunct: return "'" + t.text + "'";
    }
    return "token";
  }

  void Advance() { tok_ = lexer_.Next(); }
  bool IsPunct(std::string_view p) const { return tok_.kind == TokenKind::kPunct && tok_.text == p; }
  bool IsIdent(std::string_view name) const { return tok_.kind == TokenKind::kIdent && tok_.text == name; }
  void Expect(std::string_view p, std::string_view what) {
    if (!IsPunct(p)) Fail(tok_.begin, "expected '" + std::string(p) + "' " + std::string(what) + ", found " + Describe(tok_));
    Advance();
  }

  int Add(Node node) {
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size() - 1);
  }
  int AddBinary(NodeKind kind, BinaryOp op, int lhs, int rhs, uint32_t pos) {
    Node n;
    n.kind = kind;
    n.op = op;
    n.pos = pos;
    n.begin = nodes_[lhs].begin;
    n.end = nodes_[rhs].end;
    n.children = {lhs, rhs};
    return Add(std::move(n));
  }

  int ParseExpr() {
    DepthGuard guard(*this);
    int cond = ParseOr();
    if (!IsPunct("?")) return cond;
    uint32_t pos = tok_.begin;
    Advance();
    int then_branch = ParseOr();
    Expect(":", "in conditional expression");
    int else_branch = ParseExpr();
    Node n;
    n.kind = NodeKind::kConditional;
    n.pos = pos;
    n.begin = nodes_[cond].begin;
    n.end = nodes_[else_branch].end;
    n.children = {cond, then_branch, else_branch};
    return Add(std::move(n));
  }

  int ParseOr() { return ParseChain("||", NodeKind::kOr, &Parser::ParseAnd); }
  int ParseAnd() { return ParseChain("&&", NodeKind::kAnd, &Parser::ParseRelation); }

  // operand {op operand}, left-associative.
  int ParseChain(std::string_view op, NodeKind kind, int (Parser::*operand)()) {
    int lhs = (this->*operand)();
    while (IsPunct(op)) {
      uint32_t pos = tok_.begin;
      Advance();
      lhs = AddBinary(kind, BinaryOp::kEq, lhs, (this->*operand)(), pos);
    }
    return lhs;
  }

  int ParseRelation() {
    int lhs = ParseSum();
    while (true) {
      std::optional<BinaryOp> op;
      if (IsPunct("==")) op = BinaryOp::kEq;
      else if (IsPunct("!=")) op = BinaryOp::kNe;
      else if (IsPunct("<")) op = BinaryOp::kLt;
      else if (IsPunct("<=")) op = BinaryOp::kLe;
      else if (IsPunct(">")) op = BinaryOp::kGt;
      else if (IsPunct(">=")) op = BinaryOp::kGe;
      else if (IsIdent("in")) op = BinaryOp::kIn;
      if (!op) return lhs;
      uint32_t pos = tok_.begin;
      Advance();
      lhs = AddBinary(NodeKind::kBinary, *op, lhs, ParseSum(), pos);
    }
  }

  int ParseSum() {
    int lhs = ParseProduct();
    while (IsPunct("+") || IsPunct("-")) {
      BinaryOp op = tok_.text == "+" ? BinaryOp::kAdd : BinaryOp::kSub;
      uint32_t pos = tok_.begin;
      Advance();
      lhs = AddBinary(NodeKind::kBinary, op, lhs, ParseProduct(), pos);
    }
    return lhs;
  }

  int ParseProduct() {
    int lhs = ParseUnary();
    while (IsPunct("*") || IsPunct("/") || IsPunct("%")) {
      BinaryOp op = tok_.text == "*" ? BinaryOp::kMul : (tok_.text == "/" ? BinaryOp::kDiv : BinaryOp::kMod);
      uint32_t pos = tok_.begin;
      Advance();
      lhs = AddBinary(NodeKind::kBinary, op, lhs, ParseUnary(), pos);
    }
    return lhs;
  }

  int ParseUnary() {
    DepthGuard guard(*this);
    if (!IsPunct("!") && !IsPunct("-")) return ParseMember();
    bool is_not = tok_.text == "!";
    uint32_t pos = tok_.begin;
    Advance();
    // "-9223372036854775808" is only expressible with the sign folded in.
    if (!is_not && tok_.kind == TokenKind::kInt) {
      uint64_t magnitude = tok_.number;
      if (magnitude > uint64_t{1} << 63) Fail(tok_.begin, "integer literal out of range");
      Node lit;
      lit.kind = NodeKind::kLiteral;
      lit.begin = lit.pos = pos;
      lit.end = tok_.end;
      lit.literal.v = magnitude == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min()
                                                       : -static_cast<int64_t>(magnitude);
      Advance();
      return ParseMemberSuffix(Add(std::move(lit)));
    }
    int operand = ParseUnary();
    Node n;
    n.kind = is_not ? NodeKind::kNot : NodeKind::kNegate;
    n.begin = n.pos = pos;
    n.end = nodes_[operand].end;
    n.children = {operand};
    return Add(std::move(n));
  }

  int ParseMember() { return ParseMemberSuffix(ParsePrimary()); }

  int ParseMemberSuffix(int operand) {
    while (true) {
      if (IsPunct(".")) {
        uint32_t dot = tok_.begin;
        Advance();
        if (tok_.kind != TokenKind::kIdent) Fail(tok_.begin, "expected a field or method name after '.', found " + Describe(tok_));
        Token name = tok_;
        Advance();
        if (IsPunct("(")) {
          operand = ParseCall(name, operand);
        } else {
          CheckField(operand, name);
          Node n;
          n.kind = NodeKind::kSelect;
          n.pos = dot;
          n.begin = nodes_[operand].begin;
          n.end = name.end;
          n.name = name.text;
          n.children = {operand};
          operand = Add(std::move(n));
        }
      } else if (IsPunct("[")) {
        DepthGuard guard(*this);
        uint32_t bracket = tok_.begin;
        Advance();
        int index = ParseExpr();
        uint32_t end = tok_.end;
        Expect("]", "to close the index");
        Node n;
        n.kind = NodeKind::kIndex;
        n.pos = bracket;
        n.begin = nodes_[operand].begin;
        n.end = end;
        n.children = {operand, index};
        operand = Add(std::move(n));
      } else {
        return operand;
      }
    }
  }

  // Fields of `device` are known at compile time; catch typos there.
  void CheckField(int operand, const Token& name) const {
    const Node& recv = nodes_[operand];
    if (recv.kind == NodeKind::kIdent && recv.name == "device" && name.text != "driver" &&
        name.text != "attributes" && name.text != "capacity" && name.text != "allowMultipleAllocations") {
      Fail(name.begin, "device has no field '" + name.text +
                           "' (it has driver, attributes, capacity, allowMultipleAllocations)");
    }
  }

  int ParsePrimary() {
    DepthGuard guard(*this);
    Token t = tok_;
    switch (t.kind) {
      case TokenKind::kEnd:
        Fail(t.begin, "unexpected end of input, expected an operand");
      case TokenKind::kInt: {
        Advance();
        if (t.number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          Fail(t.begin, "integer literal out of range");
        }
        return Literal(t, Value{static_cast<int64_t>(t.number)});
      }
      case TokenKind::kString:
        Advance();
        return Literal(t, Value{t.text});
      case TokenKind::kIdent: {
        Advance();
        if (t.text == "true" || t.text == "false") return Literal(t, Value{t.text == "true"});
        if (t.text == "null") return Literal(t, Value{Null{}});
        if (IsPunct("(")) {
          if (t.text == "has") return ParseHas(t);
          return ParseCall(t, -1);
        }
        CheckIdent(t);
        Node n;
        n.kind = NodeKind::kIdent;
        n.begin = n.pos = t.begin;
        n.end = t.end;
        n.name = t.text;
        return Add(std::move(n));
      }
      case TokenKind::kPunct:
        break;
    }
    if (t.text == "(") {
      Advance();
      int inner = ParseExpr();
      uint32_t end = tok_.end;
      Expect(")", "to close the parenthesis");
      nodes_[inner].begin = t.begin;  // keep the parentheses in the clause text
      nodes_[inner].end = end;
      return inner;
    }
    if (t.text == "[") {
      Advance();
      Node n;
      n.kind = NodeKind::kList;
      n.begin = n.pos = t.begin;
      if (!IsPunct("]")) {
        while (true) {
          n.children.push_back(ParseExpr());
          if (!IsPunct(",")) break;
          Advance();
          if (IsPunct("]")) break;  // trailing comma
        }
      }
      n.end = tok_.end;
      Expect("]", "to close the list");
      return Add(std::move(n));
    }
    if (t.text == "{") Fail(t.begin, "map literals are not supported");
    if (t.text == ".") Fail(t.begin, "qualified identifiers ('.name') are not supported");
    Fail(t.begin, "unexpected " + Describe(t) + ", expected an operand");
  }

  int Literal(const Token& t, Value v) {
    Node n;
    n.kind = NodeKind::kLiteral;
    n.begin = n.pos = t.begin;
    n.end = t.end;
    n.literal = std::move(v);
    return Add(std::move(n));
  }

  void CheckIdent(const Token& t) const {
    std::string_view expected = env_.dialect == Dialect::kDeviceSelector ? "device" : "attributes";
    if (t.text == expected) return;
    std::string hint = "undeclared reference to '" + t.text + "' (the only variable is '" + std::string(expected) + "'";
    if (env_.dialect == Dialect::kDeviceSelector && t.text == "attributes") hint += "; write device.attributes";
    if (env_.dialect == Dialect::kDranetFilter && t.text == "device") hint += "; the filter dialect uses attributes[\"dra.net/...\"]";
    Fail(t.begin, hint + ")");
  }

  std::vector<int> ParseArgs() {
    DepthGuard guard(*this);
    Expect("(", "to start the arguments");
    std::vector<int> args;
    if (!IsPunct(")")) {
      while (true) {
        args.push_back(ParseExpr());
        if (!IsPunct(",")) break;
        Advance();
      }
    }
    return args;
  }

  // name(args) when receiver < 0, receiver.name(args) otherwise.
  int ParseCall(const Token& name, int receiver) {
    if (std::find(std::begin(kUnsupportedMacros), std::end(kUnsupportedMacros), name.text) !=
        std::end(kUnsupportedMacros)) {
      Fail(name.begin, "the '" + name.text + "' macro is not supported by this evaluator (see docs/cel.md)");
    }
    std::vector<int> args = ParseArgs();
    uint32_t end = tok_.end;
    Expect(")", "to close the argument list");
    bool method = receiver >= 0;
    const FunctionInfo* found = nullptr;
    bool other_form = false;
    for (const auto& f : kFunctions) {
      if (f.name != name.text) continue;
      if (f.method == method) found = &f;
      else other_form = true;
    }
    if (!found) {
      if (other_form) {
        Fail(name.begin, "'" + name.text + "' must be called as " +
                             (method ? name.text + "(x)" : "x." + name.text + "(...)"));
      }
      Fail(name.begin, "unknown function '" + name.text + "'");
    }
    int n_args = static_cast<int>(args.size());
    if (n_args < found->min_args || n_args > found->max_args) {
      std::string want = found->min_args == found->max_args
                             ? std::to_string(found->min_args)
                             : std::to_string(found->min_args) + " or " + std::to_string(found->max_args);
      Fail(name.begin, "'" + name.text + "' takes " + want + " argument(s), got " + std::to_string(n_args));
    }
    Node n;
    n.kind = NodeKind::kCall;
    n.function = found->function;
    n.is_method = method;
    n.name = name.text;
    n.pos = name.begin;
    n.begin = method ? nodes_[receiver].begin : name.begin;
    n.end = end;
    if (method) n.children.push_back(receiver);
    n.children.insert(n.children.end(), args.begin(), args.end());
    // A literal pattern is compiled once, here; a bad one is a compile error.
    if (found->function == Function::kMatches) {
      const Node& pattern = nodes_[n.children.back()];
      if (pattern.kind == NodeKind::kLiteral && pattern.literal.Is<std::string>()) {
        try {
          n.regex = CompileRegex(pattern.literal.As<std::string>());
        } catch (const RegexError& e) {
          Fail(pattern.begin, std::string("invalid regular expression: ") + e.what());
        }
      }
    }
    if (found->function == Function::kSemver && !args.empty()) {
      const Node& arg = nodes_[args[0]];
      if (arg.kind == NodeKind::kLiteral && arg.literal.Is<std::string>() &&
          !ParseVersion(arg.literal.As<std::string>())) {
        Fail(arg.begin, "invalid semantic version \"" + arg.literal.As<std::string>() + "\"");
      }
    }
    return Add(std::move(n));
  }

  int ParseHas(const Token& name) {
    std::vector<int> args = ParseArgs();
    uint32_t end = tok_.end;
    Expect(")", "to close has()");
    if (args.size() != 1 || nodes_[args[0]].kind != NodeKind::kSelect) {
      Fail(name.begin, "has() takes one field selection, e.g. has(device.attributes[\"dra.net\"].ifName)");
    }
    const Node& select = nodes_[args[0]];
    Node n;
    n.kind = NodeKind::kHas;
    n.name = select.name;
    n.pos = select.pos;
    n.begin = name.begin;
    n.end = end;
    n.children = {select.children[0]};
    return Add(std::move(n));
  }

  std::string_view src_;
  const Environment& env_;
  std::vector<Node>& nodes_;
  Lexer lexer_;
  Token tok_;
  int depth_ = 0;
};

}  // namespace

Error MakeError(std::string_view source, uint32_t offset, std::string message) {
  Error e;
  e.message = std::move(message);
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(source.size()));
  std::size_t line_start = 0;
  uint32_t line = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  std::size_t line_end = source.find('\n', line_start);
  if (line_end == std::string_view::npos) line_end = source.size();
  std::string_view text = source.substr(line_start, line_end - line_start);
  uint32_t column = static_cast<uint32_t>(CodePointCount(source.substr(line_start, offset - line_start))) + 1;
  e.position = SourcePosition{offset, line, column};
  e.excerpt = " | " + std::string(text) + "\n | " + std::string(column - 1, '.') + "^";
  return e;
}

int Parse(std::string_view source, const Environment& env, std::vector<Node>& nodes) {
  if (source.size() > env.max_source_bytes) {
    throw CompileError(MakeError(source.substr(0, 0), 0,
                                 "expression is " + std::to_string(source.size()) + " bytes, over the limit of " +
                                     std::to_string(env.max_source_bytes)));
  }
  Parser parser(source, env, nodes);
  return parser.ParseAll();
}

}  // namespace dranet::cel::detail
