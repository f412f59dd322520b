#include "plugins/attribute_rules.h"

#include "base/k8s_names.h"

namespace dranet::plugins {
namespace {
constexpr std::size_t kMaxDomain = 63;
constexpr std::size_t kMaxValue = 64;
}  // namespace

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
  if (!IsAttributeId(id)) {
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
      if (!IsSemVer(value)) {
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
