#pragma once
// core/nri/adjustment.h — ContainerEdits (core/inject) as an NRI
// ContainerAdjustment: one LinuxDevice (type c, uid/gid 0) plus one
// device-cgroup allow rule per device node, env as KeyValues, bind mounts.
#include "inject/container_edits.h"
#include "nri/proto/nri.pb.h"

namespace dranet::nri {

namespace api = ::nri::pkg::api::v1alpha1;

void FillAdjustment(const inject::ContainerEdits& edits, api::ContainerAdjustment* adjust);

}  // namespace dranet::nri
