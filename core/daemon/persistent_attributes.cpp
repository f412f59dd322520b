#include "daemon/persistent_attributes.h"

#include <map>

#include "kube/resource_slice.h"

namespace dranet::daemon {

std::set<std::string> MergePublishedAttributes(std::vector<inventory::Device>& devices,
                                               const std::vector<inject::ClaimPlan>& plans, Logger& log) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < devices.size(); ++i) index.emplace(devices[i].name, i);
  std::set<std::string> recorded_only;
  for (const auto& plan : plans) {
    for (const auto& [name, json] : plan.published_attributes) {
      inventory::Attributes recorded;
      try {
        recorded = kube::AttributesFromJson(json);
      } catch (const std::exception& e) {
        log.Warning("cannot read the attributes an allocated device published",
                    {{"device", name}, {"claim", plan.claim_namespace + "/" + plan.claim_name}, {"error", e.what()}});
        continue;
      }
      auto it = index.find(name);
      if (it == index.end()) {
        inventory::Device device;
        device.name = name;
        device.attributes = std::move(recorded);
        index.emplace(name, devices.size());
        devices.push_back(std::move(device));
        recorded_only.insert(name);
        continue;
      }
      auto& live = devices[it->second].attributes;
      for (auto& [key, value] : recorded) live.emplace(key, std::move(value));  // live values win
    }
  }
  return recorded_only;
}

}  // namespace dranet::daemon
