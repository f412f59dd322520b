#include "plugins/attribute_rules.h"

#include <cctype>
#include <regex>

namespace dranet::plugins {
namespace {
constexpr std::size_t kMaxIdentifier = 32;
constexpr std::size_t kMaxDomain = 63;
constexpr std::size_t kMaxValue = 64;
}  // namespace

bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '-'))
      return false;
  return s.front() != '-' && s.back() != '-';
}

bool IsDnsSubdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  for (;;) {
    auto dot = s.find('.', start);
    if (!IsDnsLabel(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start)))
      return false;
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

bool IsCIdentifier(const std::string& s, std::size_t max_length) {
  if (s.empty() || s.size() > max_length) return false;
  if (std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

bool IsCoreDomain(const std::string& qualified_name) {
  auto slash = qualified_name.find('/');
  std::string domain = slash == std::string::npos ? "" : qualified_name.substr(0, slash);
  return domain == "dra.net" || domain == "resource.kubernetes.io";
}

std::optional<std::pair<std::string, inventory::AttributeValue>> AcceptAttribute(
    const dranet_attr_t& attr, const std::string& plugin_name, std::string& why) {
  if (attr.name == nullptr) {
    why = "attribute without a name";
    return std::nullopt;
  }
  std::string name(attr.name);
  auto slash = name.find('/');
  std::string domain = slash == std::string::npos ? plugin_name + ".dra.net" : name.substr(0, slash);
  std::string id = slash == std::string::npos ? name : name.substr(slash + 1);
  if (domain.size() > kMaxDomain || !IsDnsSubdomain(domain)) {
    why = "attribute \"" + name + "\": domain must be a DNS subdomain of at most 63 characters";
    return std::nullopt;
  }
  if (!IsCIdentifier(id, kMaxIdentifier)) {
    why = "attribute \"" + name + "\": identifier must be a C identifier of at most 32 characters";
    return std::nullopt;
  }
  std::string qualified = domain + "/" + id;
  switch (attr.type) {
    case DRANET_ATTR_STRING:
    case DRANET_ATTR_VERSION: {
      if (attr.str_value == nullptr) {
        why = "attribute \"" + qualified + "\": string value is NULL";
        return std::nullopt;
      }
      std::string value(attr.str_value);
      if (value.size() > kMaxValue) {
        why = "attribute \"" + qualified + "\": value longer than 64 bytes";
        return std::nullopt;
      }
      if (attr.type == DRANET_ATTR_STRING) return std::make_pair(qualified, inventory::AttributeValue(value));
      static const std::regex kSemVer(
          R"(^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$)");
      if (!std::regex_match(value, kSemVer)) {
        why = "attribute \"" + qualified + "\": \"" + value + "\" is not a semantic version";
        return std::nullopt;
      }
      return std::make_pair(qualified, inventory::AttributeValue(inventory::SemVer{value}));
    }
    case DRANET_ATTR_INT:
      return std::make_pair(qualified, inventory::AttributeValue(static_cast<int64_t>(attr.int_value)));
    case DRANET_ATTR_BOOL:
      if (attr.int_value != 0 && attr.int_value != 1) {
        why = "attribute \"" + qualified + "\": bool value must be 0 or 1";
        return std::nullopt;
      }
      return std::make_pair(qualified, inventory::AttributeValue(attr.int_value == 1));
    default:
      why = "attribute \"" + qualified + "\": unknown type " + std::to_string(attr.type);
      return std::nullopt;
  }
}

}  // namespace dranet::plugins
