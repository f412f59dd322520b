#pragma once
// core/cel/publish_filter.h — dranetd's --filter: which discovered devices
// are published, with DRANET's flag semantics. Shared by dranetd and
// `dranetctl inspect` so both show the same devices.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/log.h"
#include "cel/cel.h"
#include "inventory/device.h"

namespace dranet::cel {

// The flag's value meaning "DRANET's default filter" (which drops veths).
inline constexpr std::string_view kDefaultFilterFlag = "<dranet default>";

// nullopt for "" (publish everything); throws CompileError naming the
// position for an invalid expression.
std::optional<Program> CompilePublishFilter(const std::string& flag_value);

// Link kinds whose netdevs the filter certainly drops ({"veth"} for DRANET's
// default; none for any other expression, which is not analysed): the
// discovery monitor ignores their events.
std::set<std::string> UnpublishedLinkKinds(const std::string& flag_value);

// The devices the filter keeps; each dropped device gets a verbose log line.
std::vector<inventory::Device> ApplyPublishFilter(const std::optional<Program>& filter,
                                                  std::vector<inventory::Device> devices, Logger& logger);

}  // namespace dranet::cel
