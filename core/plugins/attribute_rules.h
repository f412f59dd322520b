#pragma once
// core/plugins/attribute_rules.h — what a plugin-supplied attribute must
// look like before the host accepts it (resource.k8s.io/v1 limits).
#include <optional>
#include <string>

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


}  // namespace dranet::plugins
