#pragma once
// core/cel/value.h — runtime values of the CEL subset (internal to core/cel).
//
// Errors are values (CEL semantics): `&&`, `||` and `?:` look at both sides
// and an error only wins when the other side cannot decide the result.
// Maps are never materialised: a MapRef names which of the device's maps it
// stands for, and lookups read the DeviceView directly.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "inventory/device.h"

namespace dranet::cel::detail {

// A parsed semantic version (semver 2.0.0). Ordering ignores build metadata.
struct Version {
  uint64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> prerelease;  // dot-separated identifiers
  std::string text;                     // as written
};
std::optional<Version> ParseVersion(std::string_view text);
int CompareVersions(const Version& a, const Version& b);  // <0, 0, >0

// A resource.k8s.io Quantity ("10Gi", "1500m", "2e3"). `value` is exact for
// the integers and milli-values devices publish; comparisons use it.
struct Quantity {
  long double value = 0;
  std::string text;
};
std::optional<Quantity> ParseQuantity(std::string_view text);

struct Null {};
struct ErrorValue {
  std::string message;
  uint32_t offset = 0;  // where in the source it arose
};
// `device` in the selector dialect.
struct DeviceRef {};
// Which map of the device a value stands for.
struct MapRef {
  enum class Source : uint8_t {
    kAttributeDomains,  // device.attributes        (domain -> map)
    kAttributes,        // device.attributes[domain] (id -> value)
    kCapacityDomains,   // device.capacity
    kCapacity,          // device.capacity[domain]
    kFilterAttributes,  // `attributes` in the DRANET filter (qualified name -> object)
  };
  Source source;
  std::string domain;  // for kAttributes / kCapacity
};
// DRANET's v1.DeviceAttribute object: `.StringValue` etc.
struct FilterAttribute {
  inventory::AttributeValue value;
};

struct Value;
using List = std::shared_ptr<const std::vector<Value>>;

struct Value {
  std::variant<Null, bool, int64_t, std::string, Version, Quantity, List, MapRef, DeviceRef,
               FilterAttribute, ErrorValue>
      v;

  bool IsError() const { return std::holds_alternative<ErrorValue>(v); }
  template <typename T> bool Is() const { return std::holds_alternative<T>(v); }
  template <typename T> const T& As() const { return std::get<T>(v); }
};

// CEL type name of a value, for messages: "int", "string", "map", …
std::string_view TypeName(const Value& value);
// A short rendering for messages ("\"veth\"", "3", "semver(1.2.3)").
std::string Describe(const Value& value);

// Number of Unicode code points in UTF-8 text (CEL sizes and indices count
// code points, not bytes).
std::size_t CodePointCount(std::string_view text);
// Byte offset of code point `index` (index <= CodePointCount).
std::size_t CodePointOffset(std::string_view text, std::size_t index);

}  // namespace dranet::cel::detail
