// core/cel/evaluator.cpp — evaluates a parsed expression against one device.
//
// Errors are values so that `&&`/`||` follow CEL's commutative rules; only
// running over the cost limit aborts the whole evaluation (by exception,
// caught in Program::Evaluate).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "cel/ast.h"

namespace dranet::cel {

std::string Error::ToString() const {
  return std::to_string(position.line) + ":" + std::to_string(position.column) + ": " + message +
         (excerpt.empty() ? "" : "\n" + excerpt);
}

CompileError::CompileError(Error error) : std::runtime_error(error.ToString()), error_(std::move(error)) {}

namespace detail {
namespace {

struct CostExceeded {
  uint32_t offset;
};

Value Err(uint32_t offset, std::string message) { return Value{ErrorValue{std::move(message), offset}}; }

// An `ints` attribute is a CEL list of ints.
Value IntListValue(const inventory::IntList& list) {
  auto items = std::make_shared<std::vector<Value>>();
  items->reserve(list.size());
  for (int64_t item : list) items->push_back(Value{item});
  return Value{List(std::move(items))};
}

// Attribute lookup: "domain/id", or the bare "id" in the driver's own domain.
const inventory::AttributeValue* FindAttribute(const DeviceView& dev, std::string_view domain, std::string_view id) {
  if (!dev.attributes) return nullptr;
  std::string key;
  key.reserve(domain.size() + 1 + id.size());
  key.append(domain).append("/").append(id);
  if (auto it = dev.attributes->find(key); it != dev.attributes->end()) return &it->second;
  if (domain == dev.driver) {
    if (auto it = dev.attributes->find(std::string(id)); it != dev.attributes->end()) return &it->second;
  }
  return nullptr;
}

template <typename MapT>
const typename MapT::mapped_type* FindQualified(const MapT* map, std::string_view driver, std::string_view domain,
                                                std::string_view id) {
  if (!map) return nullptr;
  if (auto it = map->find(std::string(domain) + "/" + std::string(id)); it != map->end()) return &it->second;
  if (domain == driver) {
    if (auto it = map->find(std::string(id)); it != map->end()) return &it->second;
  }
  return nullptr;
}

// Domain of a qualified key; bare keys belong to the driver.
std::string_view DomainOf(std::string_view key, std::string_view driver) {
  auto slash = key.find('/');
  return slash == std::string_view::npos ? driver : key.substr(0, slash);
}

template <typename MapT>
bool HasDomain(const MapT* map, std::string_view driver, std::string_view domain) {
  if (!map) return false;
  return std::any_of(map->begin(), map->end(),
                     [&](const auto& kv) { return DomainOf(kv.first, driver) == domain; });
}

template <typename MapT>
int64_t CountInDomain(const MapT* map, std::string_view driver, std::string_view domain) {
  if (!map) return 0;
  return std::count_if(map->begin(), map->end(),
                       [&](const auto& kv) { return DomainOf(kv.first, driver) == domain; });
}

template <typename MapT>
int64_t CountDomains(const MapT* map, std::string_view driver) {
  if (!map) return 0;
  std::vector<std::string_view> domains;
  for (const auto& kv : *map) domains.push_back(DomainOf(kv.first, driver));
  std::sort(domains.begin(), domains.end());
  return std::unique(domains.begin(), domains.end()) - domains.begin();
}

class Evaluator {
 public:
  Evaluator(const Program::Impl& impl, const DeviceView& dev) : impl_(impl), nodes_(impl.nodes), dev_(dev) {}

  Value Eval(int index) {
    const Node& n = nodes_[index];
    Charge(1, n.pos);
    switch (n.kind) {
      case NodeKind::kLiteral: return n.literal;
      case NodeKind::kIdent:
        if (n.name == "device") return Value{DeviceRef{}};
        return Value{MapRef{MapRef::Source::kFilterAttributes, {}}};
      case NodeKind::kSelect: return Select(Eval(n.children[0]), n.name, n.pos);
      case NodeKind::kHas: return Has(Eval(n.children[0]), n.name, n.pos);
      case NodeKind::kIndex: return Index(Eval(n.children[0]), Eval(n.children[1]), n.pos);
      case NodeKind::kList: {
        auto items = std::make_shared<std::vector<Value>>();
        items->reserve(n.children.size());
        for (int child : n.children) {
          Value v = Eval(child);
          if (v.IsError()) return v;
          items->push_back(std::move(v));
        }
        return Value{List(std::move(items))};
      }
      case NodeKind::kNot: {
        Value v = Eval(n.children[0]);
        if (v.IsError()) return v;
        if (!v.Is<bool>()) return NoOverload("!_", {&v}, n.pos);
        return Value{!v.As<bool>()};
      }
      case NodeKind::kNegate: {
        Value v = Eval(n.children[0]);
        if (v.IsError()) return v;
        if (!v.Is<int64_t>()) return NoOverload("-_", {&v}, n.pos);
        if (v.As<int64_t>() == std::numeric_limits<int64_t>::min()) return Err(n.pos, "integer overflow in negation");
        return Value{-v.As<int64_t>()};
      }
      case NodeKind::kAnd: return Logical(n, /*is_and=*/true);
      case NodeKind::kOr: return Logical(n, /*is_and=*/false);
      case NodeKind::kConditional: {
        Value cond = Eval(n.children[0]);
        if (cond.IsError()) return cond;
        if (!cond.Is<bool>()) return Err(n.pos, "condition of '?:' is " + std::string(TypeName(cond)) + ", not bool");
        return Eval(n.children[cond.As<bool>() ? 1 : 2]);
      }
      case NodeKind::kBinary: return Binary(n);
      case NodeKind::kCall: return Call(n);
    }
    return Err(n.pos, "internal error: unknown node");
  }

 private:
  void Charge(int64_t units, uint32_t offset) {
    cost_ += units;
    if (cost_ > impl_.env.cost_limit) throw CostExceeded{offset};
  }

  Value NoOverload(std::string_view op, std::initializer_list<const Value*> args, uint32_t pos) const {
    std::string types;
    for (const Value* a : args) {
      if (!types.empty()) types += ", ";
      types += TypeName(*a);
    }
    return Err(pos, "no matching overload for '" + std::string(op) + "' applied to (" + types + ")");
  }

  // CEL's commutative && and ||: the deciding value (false for &&, true
  // for ||) wins over an error on the other side.
  Value Logical(const Node& n, bool is_and) {
    const bool decisive = !is_and;
    Value lhs = Eval(n.children[0]);
    if (lhs.Is<bool>() && lhs.As<bool>() == decisive) return lhs;
    Value rhs = Eval(n.children[1]);
    if (rhs.Is<bool>() && rhs.As<bool>() == decisive) return rhs;
    const char* op = is_and ? "_&&_" : "_||_";
    if (lhs.IsError()) return lhs;
    if (!lhs.Is<bool>()) return NoOverload(op, {&lhs, &rhs}, n.pos);
    if (rhs.IsError()) return rhs;
    if (!rhs.Is<bool>()) return NoOverload(op, {&lhs, &rhs}, n.pos);
    return Value{!decisive};
  }

  Value AttributeToValue(const inventory::AttributeValue& attr, std::string_view name, uint32_t pos) const {
    struct Visitor {
      Value operator()(const std::string& s) const { return Value{s}; }
      Value operator()(int64_t i) const { return Value{i}; }
      Value operator()(bool b) const { return Value{b}; }
      Value operator()(const inventory::SemVer& v) const {
        if (auto parsed = ParseVersion(v.value)) return Value{std::move(*parsed)};
        return Err(pos, "attribute \"" + std::string(name) + "\" holds an invalid version \"" + v.value + "\"");
      }
      Value operator()(const inventory::IntList& list) const { return IntListValue(list); }
      std::string_view name;
      uint32_t pos;
    };
    return std::visit(Visitor{name, pos}, attr);
  }

  Value MapLookup(const MapRef& map, const std::string& key, uint32_t pos) {
    using S = MapRef::Source;
    switch (map.source) {
      case S::kAttributeDomains: return Value{MapRef{S::kAttributes, key}};
      case S::kCapacityDomains: return Value{MapRef{S::kCapacity, key}};
      case S::kAttributes: {
        if (const auto* attr = FindAttribute(dev_, map.domain, key)) {
          return AttributeToValue(*attr, map.domain + "/" + key, pos);
        }
        return Err(pos, "no such key: " + key + " (device has no attribute \"" + map.domain + "/" + key + "\")");
      }
      case S::kCapacity: {
        if (const auto* q = FindQualified(dev_.capacity, dev_.driver, map.domain, key)) {
          if (auto parsed = ParseQuantity(*q)) return Value{std::move(*parsed)};
          return Err(pos, "capacity \"" + map.domain + "/" + key + "\" holds an invalid quantity \"" + *q + "\"");
        }
        return Err(pos, "no such key: " + key + " (device has no capacity \"" + map.domain + "/" + key + "\")");
      }
      case S::kFilterAttributes: {
        if (dev_.attributes) {
          if (auto it = dev_.attributes->find(key); it != dev_.attributes->end()) {
            return Value{FilterAttribute{it->second}};
          }
        }
        return Err(pos, "no such key: " + key);
      }
    }
    return Err(pos, "internal error: unknown map");
  }

  bool MapContains(const MapRef& map, const std::string& key) const {
    using S = MapRef::Source;
    switch (map.source) {
      case S::kAttributeDomains: return HasDomain(dev_.attributes, dev_.driver, key);
      case S::kCapacityDomains: return HasDomain(dev_.capacity, dev_.driver, key);
      case S::kAttributes: return FindAttribute(dev_, map.domain, key) != nullptr;
      case S::kCapacity: return FindQualified(dev_.capacity, dev_.driver, map.domain, key) != nullptr;
      case S::kFilterAttributes: return dev_.attributes && dev_.attributes->count(key) > 0;
    }
    return false;
  }

  int64_t MapSize(const MapRef& map) const {
    using S = MapRef::Source;
    switch (map.source) {
      case S::kAttributeDomains: return CountDomains(dev_.attributes, dev_.driver);
      case S::kCapacityDomains: return CountDomains(dev_.capacity, dev_.driver);
      case S::kAttributes: return CountInDomain(dev_.attributes, dev_.driver, map.domain);
      case S::kCapacity: return CountInDomain(dev_.capacity, dev_.driver, map.domain);
      case S::kFilterAttributes: return dev_.attributes ? static_cast<int64_t>(dev_.attributes->size()) : 0;
    }
    return 0;
  }

  // DRANET's DeviceAttribute fields: a field of another kind reads as null
  // (the Go struct's nil pointer).
  static Value FilterField(const FilterAttribute& attr, const std::string& field, uint32_t pos) {
    const auto& v = attr.value;
    if (field == "StringValue") return std::holds_alternative<std::string>(v) ? Value{std::get<std::string>(v)} : Value{Null{}};
    if (field == "IntValue") return std::holds_alternative<int64_t>(v) ? Value{std::get<int64_t>(v)} : Value{Null{}};
    if (field == "BoolValue") return std::holds_alternative<bool>(v) ? Value{std::get<bool>(v)} : Value{Null{}};
    if (field == "VersionValue") {
      return std::holds_alternative<inventory::SemVer>(v) ? Value{std::get<inventory::SemVer>(v).value} : Value{Null{}};
    }
    if (field == "IntValues") {
      const auto* list = std::get_if<inventory::IntList>(&v);
      return list ? IntListValue(*list) : Value{Null{}};
    }
    return Err(pos, "DeviceAttribute has no field '" + field +
                        "' (it has StringValue, IntValue, BoolValue, VersionValue, IntValues)");
  }

  Value Select(const Value& target, const std::string& field, uint32_t pos) {
    if (target.IsError()) return target;
    if (target.Is<DeviceRef>()) {
      if (field == "driver") return Value{std::string(dev_.driver)};
      if (field == "attributes") return Value{MapRef{MapRef::Source::kAttributeDomains, {}}};
      if (field == "capacity") return Value{MapRef{MapRef::Source::kCapacityDomains, {}}};
      if (field == "allowMultipleAllocations") return Value{dev_.allow_multiple_allocations};
      return Err(pos, "device has no field '" + field + "'");
    }
    if (target.Is<MapRef>()) return MapLookup(target.As<MapRef>(), field, pos);
    if (target.Is<FilterAttribute>()) return FilterField(target.As<FilterAttribute>(), field, pos);
    return Err(pos, "type '" + std::string(TypeName(target)) + "' has no fields (selecting '" + field + "')");
  }

  Value Has(const Value& target, const std::string& field, uint32_t pos) {
    if (target.IsError()) return target;
    if (target.Is<MapRef>()) return Value{MapContains(target.As<MapRef>(), field)};
    if (target.Is<DeviceRef>())
      return Value{field == "driver" || field == "attributes" || field == "capacity" || field == "allowMultipleAllocations"};
    if (target.Is<FilterAttribute>()) {
      Value v = FilterField(target.As<FilterAttribute>(), field, pos);
      if (v.IsError()) return v;
      return Value{!v.Is<Null>()};
    }
    return Err(pos, "has() does not apply to type '" + std::string(TypeName(target)) + "'");
  }

  Value Index(const Value& target, const Value& key, uint32_t pos) {
    if (target.IsError()) return target;
    if (key.IsError()) return key;
    if (target.Is<MapRef>()) {
      if (!key.Is<std::string>()) return Err(pos, "map key must be a string, got " + std::string(TypeName(key)));
      return MapLookup(target.As<MapRef>(), key.As<std::string>(), pos);
    }
    if (target.Is<List>()) {
      if (!key.Is<int64_t>()) return Err(pos, "list index must be an int, got " + std::string(TypeName(key)));
      const auto& list = *target.As<List>();
      int64_t i = key.As<int64_t>();
      if (i < 0 || i >= static_cast<int64_t>(list.size())) return Err(pos, "index out of range: " + std::to_string(i));
      return list[static_cast<std::size_t>(i)];
    }
    return Err(pos, "type '" + std::string(TypeName(target)) + "' cannot be indexed");
  }

  // Heterogeneous equality: values of different types are unequal.
  Value Equal(const Value& a, const Value& b, uint32_t pos) {
    if (a.v.index() != b.v.index()) {
      bool comparable = !(a.Is<MapRef>() || a.Is<DeviceRef>() || a.Is<FilterAttribute>() || b.Is<MapRef>() ||
                          b.Is<DeviceRef>() || b.Is<FilterAttribute>());
      if (!comparable) return NoOverload("_==_", {&a, &b}, pos);
      return Value{false};
    }
    if (a.Is<Null>()) return Value{true};
    if (a.Is<bool>()) return Value{a.As<bool>() == b.As<bool>()};
    if (a.Is<int64_t>()) return Value{a.As<int64_t>() == b.As<int64_t>()};
    if (a.Is<std::string>()) {
      Charge(static_cast<int64_t>(std::min(a.As<std::string>().size(), b.As<std::string>().size()) / 10), pos);
      return Value{a.As<std::string>() == b.As<std::string>()};
    }
    if (a.Is<Version>()) return Value{CompareVersions(a.As<Version>(), b.As<Version>()) == 0};
    if (a.Is<Quantity>()) return Value{a.As<Quantity>().value == b.As<Quantity>().value};
    if (a.Is<List>()) {
      const auto& x = *a.As<List>();
      const auto& y = *b.As<List>();
      if (x.size() != y.size()) return Value{false};
      for (std::size_t i = 0; i < x.size(); ++i) {
        Value e = Equal(x[i], y[i], pos);
        if (e.IsError() || !e.As<bool>()) return e;
      }
      return Value{true};
    }
    return NoOverload("_==_", {&a, &b}, pos);
  }

  // <0, 0, >0 for ordered types of the same kind; nullopt otherwise.
  static std::optional<int> Order(const Value& a, const Value& b) {
    if (a.v.index() != b.v.index()) return std::nullopt;
    auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
    if (a.Is<int64_t>()) return sign(a.As<int64_t>(), b.As<int64_t>());
    if (a.Is<bool>()) return sign(a.As<bool>(), b.As<bool>());
    if (a.Is<std::string>()) return sign(a.As<std::string>(), b.As<std::string>());
    if (a.Is<Version>()) return CompareVersions(a.As<Version>(), b.As<Version>());
    if (a.Is<Quantity>()) return sign(a.As<Quantity>().value, b.As<Quantity>().value);
    return std::nullopt;
  }

  Value Binary(const Node& n) {
    Value a = Eval(n.children[0]);
    if (a.IsError()) return a;
    Value b = Eval(n.children[1]);
    if (b.IsError()) return b;
    switch (n.op) {
      case BinaryOp::kEq: return Equal(a, b, n.pos);
      case BinaryOp::kNe: {
        Value e = Equal(a, b, n.pos);
        return e.IsError() ? e : Value{!e.As<bool>()};
      }
      case BinaryOp::kLt: case BinaryOp::kLe: case BinaryOp::kGt: case BinaryOp::kGe: {
        static constexpr const char* kNames[] = {"_<_", "_<=_", "_>_", "_>=_"};
        auto order = Order(a, b);
        if (!order) return NoOverload(kNames[static_cast<int>(n.op) - static_cast<int>(BinaryOp::kLt)], {&a, &b}, n.pos);
        int c = *order;
        bool r = n.op == BinaryOp::kLt ? c < 0 : n.op == BinaryOp::kLe ? c <= 0 : n.op == BinaryOp::kGt ? c > 0 : c >= 0;
        return Value{r};
      }
      case BinaryOp::kIn: return In(a, b, n.pos);
      default: return Arithmetic(n, a, b);
    }
  }

  Value In(const Value& elem, const Value& container, uint32_t pos) {
    if (container.Is<List>()) {
      const auto& list = *container.As<List>();
      Charge(static_cast<int64_t>(list.size()), pos);
      for (const Value& item : list) {
        Value e = Equal(elem, item, pos);
        if (e.IsError()) return e;
        if (e.As<bool>()) return Value{true};
      }
      return Value{false};
    }
    if (container.Is<MapRef>()) {
      if (!elem.Is<std::string>()) return Value{false};
      return Value{MapContains(container.As<MapRef>(), elem.As<std::string>())};
    }
    return NoOverload("@in", {&elem, &container}, pos);
  }

  Value Arithmetic(const Node& n, const Value& a, const Value& b) {
    static constexpr const char* kNames[] = {"_+_", "_-_", "_*_", "_/_", "_%_"};
    const char* name = kNames[static_cast<int>(n.op) - static_cast<int>(BinaryOp::kAdd)];
    if (n.op == BinaryOp::kAdd && a.Is<std::string>() && b.Is<std::string>()) {
      Charge(static_cast<int64_t>((a.As<std::string>().size() + b.As<std::string>().size()) / 10), n.pos);
      return Value{a.As<std::string>() + b.As<std::string>()};
    }
    if (n.op == BinaryOp::kAdd && a.Is<List>() && b.Is<List>()) {
      auto items = std::make_shared<std::vector<Value>>(*a.As<List>());
      items->insert(items->end(), b.As<List>()->begin(), b.As<List>()->end());
      Charge(static_cast<int64_t>(items->size()), n.pos);
      return Value{List(std::move(items))};
    }
    if (!a.Is<int64_t>() || !b.Is<int64_t>()) return NoOverload(name, {&a, &b}, n.pos);
    int64_t x = a.As<int64_t>(), y = b.As<int64_t>(), r = 0;
    bool overflow = false;
    switch (n.op) {
      case BinaryOp::kAdd: overflow = __builtin_add_overflow(x, y, &r); break;
      case BinaryOp::kSub: overflow = __builtin_sub_overflow(x, y, &r); break;
      case BinaryOp::kMul: overflow = __builtin_mul_overflow(x, y, &r); break;
      case BinaryOp::kDiv: case BinaryOp::kMod:
        if (y == 0) return Err(n.pos, n.op == BinaryOp::kDiv ? "division by zero" : "modulus by zero");
        if (x == std::numeric_limits<int64_t>::min() && y == -1) {
          overflow = true;
        } else {
          r = n.op == BinaryOp::kDiv ? x / y : x % y;
        }
        break;
      default: break;
    }
    if (overflow) return Err(n.pos, "integer overflow in " + std::string(name));
    return Value{r};
  }

  Value Call(const Node& n) {
    std::vector<Value> args;
    args.reserve(n.children.size());
    for (int child : n.children) {
      args.push_back(Eval(child));
      if (args.back().IsError()) return args.back();
    }
    return Apply(n, args);
  }

  Value Apply(const Node& n, const std::vector<Value>& args) {
    const Value& a0 = args[0];
    auto bad = [&]() {
      std::string types;
      for (const auto& a : args) {
        if (!types.empty()) types += ", ";
        types += TypeName(a);
      }
      return Err(n.pos, "no matching overload for '" + n.name + "' applied to (" + types + ")");
    };
    auto str = [&](std::size_t i) -> const std::string* {
      return i < args.size() && args[i].Is<std::string>() ? &args[i].As<std::string>() : nullptr;
    };
    switch (n.function) {
      case Function::kInt: {
        if (a0.Is<int64_t>()) return a0;
        if (const std::string* s = str(0)) return ParseInt(*s, n.pos);
        return bad();
      }
      case Function::kString: {
        if (a0.Is<std::string>()) return a0;
        if (a0.Is<int64_t>()) return Value{std::to_string(a0.As<int64_t>())};
        if (a0.Is<bool>()) return Value{std::string(a0.As<bool>() ? "true" : "false")};
        if (a0.Is<Version>()) return Value{a0.As<Version>().text};
        if (a0.Is<Quantity>()) return Value{a0.As<Quantity>().text};
        return bad();
      }
      case Function::kBool: {
        if (a0.Is<bool>()) return a0;
        if (const std::string* s = str(0)) {
          static constexpr std::string_view kTrue[] = {"1", "t", "true", "TRUE", "True"};
          static constexpr std::string_view kFalse[] = {"0", "f", "false", "FALSE", "False"};
          for (auto t : kTrue) if (*s == t) return Value{true};
          for (auto f : kFalse) if (*s == f) return Value{false};
          return Err(n.pos, "cannot convert \"" + *s + "\" to bool");
        }
        return bad();
      }
      case Function::kSize: {
        if (const std::string* s = str(0)) {
          Charge(static_cast<int64_t>(s->size() / 10), n.pos);
          return Value{static_cast<int64_t>(CodePointCount(*s))};
        }
        if (a0.Is<List>()) return Value{static_cast<int64_t>(a0.As<List>()->size())};
        if (a0.Is<MapRef>()) return Value{MapSize(a0.As<MapRef>())};
        return bad();
      }
      case Function::kSemver: case Function::kIsSemver:
        if (const std::string* s = str(0)) {
          return ParseOrCheck(*s, ParseVersion(*s), n.function == Function::kIsSemver, n.pos, "semantic version");
        }
        return bad();
      case Function::kQuantity: case Function::kIsQuantity:
        if (const std::string* s = str(0)) {
          return ParseOrCheck(*s, ParseQuantity(*s), n.function == Function::kIsQuantity, n.pos, "quantity");
        }
        return bad();
      case Function::kMatches: return Matches(n, args);
      case Function::kStartsWith: case Function::kEndsWith: case Function::kContains: {
        const std::string* s = str(0);
        const std::string* t = str(1);
        if (!s || !t) return bad();
        Charge(static_cast<int64_t>(s->size() / 10), n.pos);
        std::string_view sv = *s;
        if (n.function == Function::kStartsWith) return Value{sv.substr(0, t->size()) == *t};
        if (n.function == Function::kEndsWith) return Value{sv.size() >= t->size() && sv.substr(sv.size() - t->size()) == *t};
        return Value{sv.find(*t) != std::string_view::npos};
      }
      case Function::kSubstring: return Substring(n, args);
      case Function::kLowerAscii: case Function::kUpperAscii: {
        const std::string* s = str(0);
        if (!s) return bad();
        std::string out = *s;
        for (char& c : out) {
          c = static_cast<char>(n.function == Function::kLowerAscii ? std::tolower(static_cast<unsigned char>(c))
                                                                    : std::toupper(static_cast<unsigned char>(c)));
        }
        return Value{std::move(out)};
      }
      case Function::kMajor: case Function::kMinor: case Function::kPatch: {
        if (!a0.Is<Version>()) return bad();
        const Version& v = a0.As<Version>();
        uint64_t part = n.function == Function::kMajor ? v.major : n.function == Function::kMinor ? v.minor : v.patch;
        if (part > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Err(n.pos, "version part out of int range");
        return Value{static_cast<int64_t>(part)};
      }
      case Function::kCompareTo: case Function::kIsLessThan: case Function::kIsGreaterThan: {
        bool both_versions = a0.Is<Version>() && args[1].Is<Version>();
        bool both_quantities = a0.Is<Quantity>() && args[1].Is<Quantity>();
        if (!both_versions && !both_quantities) return bad();
        int c = *Order(a0, args[1]);
        if (n.function == Function::kCompareTo) return Value{static_cast<int64_t>(c)};
        return Value{n.function == Function::kIsLessThan ? c < 0 : c > 0};
      }
      case Function::kAsInteger: case Function::kIsInteger: case Function::kSign: {
        if (!a0.Is<Quantity>()) return bad();
        long double q = a0.As<Quantity>().value;
        if (n.function == Function::kSign) return Value{static_cast<int64_t>(q < 0 ? -1 : (q > 0 ? 1 : 0))};
        bool integral = std::floor(q) == q && q >= -9.2233720368547758e18L && q < 9.2233720368547758e18L;
        if (n.function == Function::kIsInteger) return Value{integral};
        if (!integral) return Err(n.pos, "quantity \"" + a0.As<Quantity>().text + "\" is not an integer in int range");
        return Value{static_cast<int64_t>(q)};
      }
    }
    return bad();
  }

  // semver()/quantity() give the parsed value; isSemver()/isQuantity() whether it parsed.
  template <typename T>
  static Value ParseOrCheck(const std::string& text, std::optional<T> parsed, bool check_only, uint32_t pos,
                            const char* what) {
    if (check_only) return Value{parsed.has_value()};
    if (!parsed) return Err(pos, std::string("invalid ") + what + " \"" + text + "\"");
    return Value{std::move(*parsed)};
  }

  static Value ParseInt(const std::string& s, uint32_t pos) {
    std::string_view digits = s;
    bool negative = false;
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty()) return Err(pos, "cannot convert \"" + s + "\" to int");
    uint64_t magnitude = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return Err(pos, "cannot convert \"" + s + "\" to int");
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (magnitude > ((uint64_t{1} << 63) - d) / 10) return Err(pos, "int(\"" + s + "\") is out of range");
      magnitude = magnitude * 10 + d;
    }
    if (!negative && magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Err(pos, "int(\"" + s + "\") is out of range");
    }
    if (negative && magnitude == (uint64_t{1} << 63)) return Value{std::numeric_limits<int64_t>::min()};
    int64_t v = static_cast<int64_t>(magnitude);
    return Value{negative ? -v : v};
  }

  Value Substring(const Node& n, const std::vector<Value>& args) {
    if (!args[0].Is<std::string>() || !args[1].Is<int64_t>() || (args.size() == 3 && !args[2].Is<int64_t>())) {
      return Err(n.pos, "substring() takes (int) or (int, int) on a string");
    }
    const std::string& s = args[0].As<std::string>();
    int64_t len = static_cast<int64_t>(CodePointCount(s));
    int64_t start = args[1].As<int64_t>();
    int64_t end = args.size() == 3 ? args[2].As<int64_t>() : len;
    if (start < 0 || start > len) return Err(n.pos, "index out of range: " + std::to_string(start));
    if (end < 0 || end > len) return Err(n.pos, "index out of range: " + std::to_string(end));
    if (start > end) {
      return Err(n.pos, "invalid substring range. start: " + std::to_string(start) + ", end: " + std::to_string(end));
    }
    std::size_t b = CodePointOffset(s, static_cast<std::size_t>(start));
    std::size_t e = CodePointOffset(s, static_cast<std::size_t>(end));
    return Value{s.substr(b, e - b)};
  }

  Value Matches(const Node& n, const std::vector<Value>& args) {
    if (!args[0].Is<std::string>() || !args[1].Is<std::string>()) {
      return Err(n.pos, "matches() takes a string and a pattern string");
    }
    const std::string& text = args[0].As<std::string>();
    constexpr std::size_t kMaxSubject = 4096;
    if (text.size() > kMaxSubject) return Err(n.pos, "matches(): string longer than 4096 bytes");
    Charge(static_cast<int64_t>(text.size() + args[1].As<std::string>().size()), n.pos);
    std::shared_ptr<const Regex> re = n.regex;
    if (!re) {
      try {
        re = CompileRegex(args[1].As<std::string>());
      } catch (const RegexError& e) {
        return Err(n.pos, std::string("invalid regular expression: ") + e.what());
      }
    }
    return Value{re->Search(text)};
  }

  const Program::Impl& impl_;
  const std::vector<Node>& nodes_;
  const DeviceView& dev_;
  int64_t cost_ = 0;
};

std::string Trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

void CollectConjuncts(const std::vector<Node>& nodes, int index, std::vector<int>& out) {
  const Node& n = nodes[index];
  // A parenthesised `&&` keeps its span wider than its operands; it is
  // still a top-level conjunction in CEL's sense, so split it too.
  if (n.kind == NodeKind::kAnd) {
    CollectConjuncts(nodes, n.children[0], out);
    CollectConjuncts(nodes, n.children[1], out);
  } else {
    out.push_back(index);
  }
}

}  // namespace
}  // namespace detail

std::string StringLiteral(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\x";
          out += kHex[(c >> 4) & 0xF];
          out += kHex[c & 0xF];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::optional<long double> QuantityValue(std::string_view text) {
  const auto quantity = detail::ParseQuantity(text);
  if (!quantity) return std::nullopt;
  return quantity->value;
}

DeviceView ViewOf(const inventory::Device& device, std::string_view driver) {
  return DeviceView{driver, &device.attributes, nullptr, device.allow_multiple_allocations};
}

Program Compile(std::string_view source, const Environment& env) {
  auto impl = std::make_shared<Program::Impl>();
  impl->source = std::string(source);
  impl->env = env;
  int root = detail::Parse(impl->source, env, impl->nodes);
  return Program(std::move(impl), root);
}

const std::string& Program::source() const { return impl_->source; }

EvalResult Program::Evaluate(const DeviceView& device) const {
  EvalResult result;
  detail::Value v;
  try {
    detail::Evaluator evaluator(*impl_, device);
    v = evaluator.Eval(root_);
  } catch (const detail::CostExceeded& e) {
    result.error = detail::MakeError(impl_->source, e.offset,
                                     "evaluation cost over the limit of " + std::to_string(impl_->env.cost_limit));
    return result;
  }
  if (v.IsError()) {
    const auto& err = v.As<detail::ErrorValue>();
    result.error = detail::MakeError(impl_->source, err.offset, err.message);
  } else if (v.Is<bool>()) {
    result.matched = v.As<bool>();
  } else {
    result.not_bool = true;
    result.error = detail::MakeError(impl_->source, impl_->nodes[root_].begin,
                                     "expression evaluated to " + std::string(detail::TypeName(v)) + " " +
                                         detail::Describe(v) + ", expected bool");
  }
  return result;
}

std::vector<Clause> Program::Conjuncts() const {
  std::vector<int> roots;
  detail::CollectConjuncts(impl_->nodes, root_, roots);
  std::vector<Clause> clauses;
  for (int r : roots) {
    const auto& n = impl_->nodes[r];
    Clause c{detail::Trimmed(std::string_view(impl_->source).substr(n.begin, n.end - n.begin)),
             detail::MakeError(impl_->source, n.begin, "").position, Program(impl_, r)};
    clauses.push_back(std::move(c));
  }
  return clauses;
}

bool FilterKeeps(const Program& filter, const inventory::Device& device) {
  EvalResult r = filter.Evaluate(ViewOf(device));
  if (r.matched) return true;
  if (r.not_bool) return false;
  return r.error.has_value();  // an evaluation error keeps the device (DRANET)
}

}  // namespace dranet::cel
