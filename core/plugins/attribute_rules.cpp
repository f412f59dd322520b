#include "plugins/attribute_rules.h"

#include <algorithm>

#include "base/k8s_names.h"

namespace dranet::plugins {
namespace {
constexpr std::size_t kMaxDomain = 63;
constexpr std::size_t kMaxValue = 64;
}  // namespace

namespace {
constexpr std::string_view kPluginDomainSuffix = ".dra.net";

std::string DomainOf(const std::string& qualified_name) {
  auto slash = qualified_name.find('/');
  return slash == std::string::npos ? "" : qualified_name.substr(0, slash);
}

std::string Joined(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return s;
}

// "x" for "x.dra.net", "" for any other domain.
std::string PluginNamedBy(const std::string& domain) {
  if (domain.size() <= kPluginDomainSuffix.size() ||
      domain.compare(domain.size() - kPluginDomainSuffix.size(), kPluginDomainSuffix.size(), kPluginDomainSuffix) != 0)
    return "";
  return domain.substr(0, domain.size() - kPluginDomainSuffix.size());
}
}  // namespace

bool IsCoreDomain(const std::string& qualified_name) {
  const std::string domain = DomainOf(qualified_name);
  return domain == "dra.net" || domain == "resource.kubernetes.io";
}

AttributeDomains::AttributeDomains(const std::vector<Plugin>& loaded, const std::set<std::string>& present) {
  std::map<std::string, std::vector<std::string>> declarers;
  for (const auto& p : loaded) {
    owner_[p.name + std::string(kPluginDomainSuffix)] = p.name;
    abi_[p.name] = p.abi_version;
  }
  for (const auto& p : loaded)
    for (const auto& domain : p.declared)
      if (domain != p.name + std::string(kPluginDomainSuffix)) declarers[domain].push_back(p.name);
  for (auto& [domain, names] : declarers) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::string why;
    if (auto it = owner_.find(domain); it != owner_.end()) {
      why = "declared domain " + domain + " belongs to plugin " + it->second;
    } else if (const std::string named = PluginNamedBy(domain); !named.empty() && present.count(named)) {
      why = "declared domain " + domain + " is reserved for plugin " + named + " (present in the plugin directories)";
    } else if (names.size() > 1) {
      contested_[domain] = names;
      why = "declared domain " + domain + " is declared by " + Joined(names) + ", so it belongs to neither";
    } else {
      owner_[domain] = names.front();
      continue;
    }
    for (const auto& name : names) refused_[name].push_back(why);
  }
}

std::vector<std::string> AttributeDomains::OwnedBy(const std::string& plugin) const {
  std::vector<std::string> domains;
  for (const auto& [domain, owner] : owner_)
    if (owner == plugin) domains.push_back(domain);
  return domains;
}

std::vector<std::string> AttributeDomains::RefusedDeclarations(const std::string& plugin) const {
  auto it = refused_.find(plugin);
  return it == refused_.end() ? std::vector<std::string>{} : it->second;
}

std::string AttributeDomains::Refusal(const std::string& plugin, const std::string& qualified_name) const {
  const std::string domain = DomainOf(qualified_name);
  const std::string attribute = "attribute \"" + qualified_name + "\": ";
  if (IsCoreDomain(qualified_name)) return attribute + "domain " + domain + " is reserved for the core";
  if (auto it = owner_.find(domain); it != owner_.end())
    return it->second == plugin ? "" : attribute + "domain " + domain + " belongs to plugin " + it->second;
  if (auto it = contested_.find(domain); it != contested_.end())
    return attribute + "domain " + domain + " is declared by " + Joined(it->second) + ", so it belongs to neither";
  auto abi = abi_.find(plugin);
  const bool legacy = abi != abi_.end() && DRANET_ABI_MINOR_OF(abi->second) < 3;
  if (legacy && PluginNamedBy(domain).empty()) return "";
  return attribute + "domain " + domain + " is not plugin " + plugin + "'s (its own is " + plugin +
         std::string(kPluginDomainSuffix) + "; declare others in attribute_domains)";
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
