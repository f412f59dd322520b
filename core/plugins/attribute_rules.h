#pragma once
// core/plugins/attribute_rules.h — what a plugin-supplied attribute must
// look like before the host accepts it (resource.k8s.io/v1 limits), and
// which plugin owns which attribute domain (ABI 1.3).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <dranet/plugin.h>

#include "inventory/device.h"

namespace dranet::plugins {

// Converts a plugin attribute into the inventory form. An unqualified name
// gets the plugin's domain "<plugin>.dra.net". Returns nullopt and sets
// `why` when the name or value breaks the API's rules.
std::optional<std::pair<std::string, inventory::AttributeValue>> AcceptAttribute(
    const dranet_attr_t& attr, const std::string& plugin_name, std::string& why);

// True for the domains only the core may write (dra.net, resource.kubernetes.io).
bool IsCoreDomain(const std::string& qualified_name);

// Who may write which attribute domain. Fixed once every plugin has loaded,
// from the whole set, so that load order (file names) never decides:
//  - "<name>.dra.net" belongs to the plugin called <name>;
//  - a domain in a plugin's attribute_domains belongs to it, unless another
//    plugin declares it too (then to neither), it is a loaded plugin's own
//    domain, or it is "<other>.dra.net" for a plugin <other> found in the
//    plugin directories (loaded or not);
//  - the core's domains belong to no plugin;
//  - a domain nobody owns may be written only by plugins built for ABI
//    1.0-1.2 (which could not declare it), and never under ".dra.net".
class AttributeDomains {
 public:
  struct Plugin {
    std::string name;
    uint32_t abi_version = 0;
    std::vector<std::string> declared;
  };
  AttributeDomains() = default;
  // `loaded`: the plugins that may publish; `present`: every plugin name
  // found in the plugin directories, which reserves "<name>.dra.net".
  AttributeDomains(const std::vector<Plugin>& loaded, const std::set<std::string>& present);

  // The domains `plugin` owns, sorted.
  std::vector<std::string> OwnedBy(const std::string& plugin) const;
  // Why each of `plugin`'s declarations was not granted, one line each.
  std::vector<std::string> RefusedDeclarations(const std::string& plugin) const;
  // "" when `plugin` may write the attribute `qualified_name` ("domain/id");
  // otherwise why not, naming the attribute, the domain and its owner.
  std::string Refusal(const std::string& plugin, const std::string& qualified_name) const;

 private:
  std::map<std::string, std::string> owner_;                   // domain -> plugin
  std::map<std::string, std::vector<std::string>> contested_;  // domain -> its declarers
  std::map<std::string, uint32_t> abi_;                        // plugin -> ABI version
  std::map<std::string, std::vector<std::string>> refused_;    // plugin -> reasons
};


}  // namespace dranet::plugins
