#include "cel/publish_filter.h"

namespace dranet::cel {

std::optional<Program> CompilePublishFilter(const std::string& flag_value) {
  if (flag_value.empty()) return std::nullopt;
  std::string_view source = flag_value == kDefaultFilterFlag ? kDranetDefaultFilter : std::string_view(flag_value);
  Environment env;
  env.dialect = Dialect::kDranetFilter;
  return Compile(source, env);
}

std::set<std::string> UnpublishedLinkKinds(const std::string& flag_value) {
  if (flag_value == kDefaultFilterFlag || flag_value == kDranetDefaultFilter) return {"veth"};
  return {};
}

std::vector<inventory::Device> ApplyPublishFilter(const std::optional<Program>& filter,
                                                  std::vector<inventory::Device> devices, Logger& logger) {
  if (!filter) return devices;
  std::vector<inventory::Device> kept;
  kept.reserve(devices.size());
  for (auto& d : devices) {
    if (FilterKeeps(*filter, d)) {
      kept.push_back(std::move(d));
    } else {
      logger.Verbose(2, "device not published: excluded by --filter", {{"device", d.name}});
    }
  }
  return kept;
}

}  // namespace dranet::cel
