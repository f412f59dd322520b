#pragma once
// core/plugins/network_edit_rules.h — what a plugin-supplied route or policy
// rule (ABI 1.1 add_route / add_rule) must look like before the host
// accepts it into a claim's InjectionEdits:
//  - it names one of the inject request's devices, and that device has a
//    netdev (a route on an IB-only device or on another claim's device
//    would be installed nowhere, or in the wrong pod);
//  - every address parses (inet_pton) and all of one entry are of one
//    family; CIDRs have their host bits clear (the kernel refuses others);
//  - route scope is universe (with a gateway) or link (without one);
//  - no entry touches the local table (255); a rule names a table.
// Pure functions: no I/O, no logging (the caller logs the reason).
#include <optional>
#include <string>
#include <vector>

#include <dranet/plugin.h>

#include "plugins/plugin_host.h"

namespace dranet::plugins {

// Returns the host's copy of `route` for device `device_name`, or nullopt
// with `why` naming the route, the device and the problem. `request` is the
// devices handed to the plugin's inject(). `plugin_name` is recorded.
std::optional<InjectionEdits::Route> AcceptRoute(const char* device_name, const dranet_route_t* route,
                                                 const std::vector<dranet_device_t>& request,
                                                 const std::string& plugin_name, std::string& why);

// The same for a policy rule.
std::optional<InjectionEdits::Rule> AcceptRule(const char* device_name, const dranet_rule_t* rule,
                                               const std::vector<dranet_device_t>& request,
                                               const std::string& plugin_name, std::string& why);

}  // namespace dranet::plugins
