#include "inject/container_edits.h"

#include <algorithm>
#include <map>
#include <set>

namespace dranet::inject {

ContainerEdits BuildContainerEdits(const std::vector<ClaimPlan>& plans,
                                   const std::vector<std::string>& container_env) {
  std::vector<const ClaimPlan*> ordered;
  ordered.reserve(plans.size());
  for (const auto& p : plans) ordered.push_back(&p);
  std::sort(ordered.begin(), ordered.end(),
            [](const ClaimPlan* a, const ClaimPlan* b) { return a->claim_uid < b->claim_uid; });

  std::set<std::string, std::less<>> own_keys;
  for (const auto& kv : container_env) own_keys.insert(kv.substr(0, kv.find('=')));

  ContainerEdits edits;
  std::set<std::string, std::less<>> device_paths, mount_paths;
  std::map<std::string, std::string> env;
  for (const ClaimPlan* plan : ordered) {
    for (const auto& node : plan->device_nodes) {
      if (device_paths.insert(node.container_path).second) edits.device_nodes.push_back(node);
    }
    for (const auto& mount : plan->mounts) {
      if (mount_paths.insert(mount.container_path).second) edits.mounts.push_back(mount);
    }
    for (const auto& [key, value] : plan->env) {
      if (!own_keys.contains(key)) env.emplace(key, value);  // first claim wins
    }
  }
  edits.env.assign(env.begin(), env.end());
  return edits;
}

}  // namespace dranet::inject
