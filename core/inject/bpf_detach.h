#pragma once
// core/inject/bpf_detach.h — interface.disableEbpfPrograms: taking every BPF
// program off a netdev's traffic-control hooks once it is in the pod, so
// that programs the host attached (a CNI's, a monitoring agent's) do not
// keep acting on the pod's traffic.
#include <string>
#include <vector>

#include "inventory/bpf_programs.h"

namespace dranet::inject {

// Detaches every BPF program on the hooks of the netdev `if_name` in the
// calling thread's network namespace (callers enter a pod's namespace with
// RunInNetns, inject/netns.h):
//   * each tc filter of kind "bpf" on the clsact ingress and egress hooks is
//     deleted (RTM_DELTFILTER); other filters and the qdisc stay;
//   * each tcx program is detached: through BPF_LINK_DETACH when a bpf_link
//     holds it, else BPF_PROG_DETACH.
// Returns the programs detached, in inventory::ListAttachedBpfPrograms
// order, for the caller's log (inventory::Describe); a program that went
// away by itself meanwhile is not in it. Throws InjectError
// (inject/pod_netns_applier.h) naming the interface when it does not exist
// or its programs cannot be listed, and, after trying every program, naming
// the interface and each program that could not be detached.
std::vector<inventory::AttachedBpfProgram> DetachBpfPrograms(const std::string& if_name);

}  // namespace dranet::inject
