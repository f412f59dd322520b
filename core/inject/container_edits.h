#pragma once
// core/inject/container_edits.h — what CreateContainer adds to a container
// of a pod that has prepared claims: the char devices of every plan (each
// with its device-cgroup rule), the plans' env and mounts.
//
// Pure function of the plans and the container's own env; the NRI plugin
// turns the result into a ContainerAdjustment.
#include <string>
#include <utility>
#include <vector>

#include "inject/plan.h"

namespace dranet::inject {

struct ContainerEdits {
  // Every plan's device nodes, once per container path, in claim-UID order.
  std::vector<DeviceNode> device_nodes;
  // Env entries the container does not set itself, sorted by key; when two
  // claims set the same key, the claim with the smaller UID wins.
  std::vector<std::pair<std::string, std::string>> env;
  // Mounts, once per container path.
  std::vector<Mount> mounts;

  bool empty() const { return device_nodes.empty() && env.empty() && mounts.empty(); }
};

// `container_env` is the container's env as "KEY=VALUE" strings (as NRI
// reports it); keys present there are never overridden.
ContainerEdits BuildContainerEdits(const std::vector<ClaimPlan>& plans,
                                   const std::vector<std::string>& container_env);

}  // namespace dranet::inject
