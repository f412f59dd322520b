#pragma once
// core/inventory/bpf_programs.h — the BPF programs attached to a netdev's
// traffic-control hooks. Discovery publishes their names as DRANET does
// (dra.net/ebpf, dra.net/tcFilterNames, dra.net/tcxProgramNames);
// inject/bpf_detach.h removes them for interface.disableEbpfPrograms.
//
// Two kinds of attachment are read, both in the calling thread's network
// namespace:
//   * classic tc filters of kind "bpf" on the clsact (or ingress) qdisc's
//     ingress and egress hooks, from an rtnetlink RTM_GETTFILTER dump;
//   * tcx programs (Linux 6.6+), from bpf(2) BPF_PROG_QUERY with the
//     BPF_TCX_INGRESS / BPF_TCX_EGRESS attach types. A kernel without tcx
//     simply has none.
// XDP and netkit programs are not looked at.
//
// The bpf(2) system call is made in bpf_programs.cpp only: BpfSyscall()
// below is what inject/bpf_detach.h and the tests use too, so that no
// libbpf is needed.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/unique_fd.h"

struct nl_sock;  // libnl

namespace dranet::inventory {

enum class BpfHook { kTcIngress, kTcEgress, kTcxIngress, kTcxEgress };

// "tc ingress", "tc egress", "tcx ingress", "tcx egress".
const char* BpfHookName(BpfHook hook);

// One program on one hook of one netdev.
struct AttachedBpfProgram {
  BpfHook hook = BpfHook::kTcIngress;
  // tc: the filter's name (TCA_BPF_NAME) as its loader set it, e.g.
  // "prog.o:[tc]" for `tc filter add ... bpf obj prog.o sec tc`; empty when
  // the loader set none. tcx: the program's kernel name (bpf_prog_info.name,
  // at most 15 bytes).
  std::string name;
  // The kernel's program id (TCA_BPF_ID for tc filters); 0 when a tc filter
  // reports none.
  uint32_t program_id = 0;
  // tc filters only: what identifies the filter on its hook, as dumped
  // (RTM_DELTFILTER takes the same values).
  uint32_t tc_parent = 0;  // TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS / TC_H_MIN_EGRESS)
  uint32_t tc_info = 0;    // tcm_info: priority << 16 | protocol (network byte order)
  uint32_t tc_handle = 0;
  uint32_t tc_chain = 0;
  // tcx only: the bpf_link holding the program; 0 when it was attached
  // without one (BPF_PROG_ATTACH) or the kernel does not say (before 6.6).
  uint32_t tcx_link_id = 0;
  friend bool operator==(const AttachedBpfProgram&, const AttachedBpfProgram&) = default;
};

// For logs and errors: `tc egress filter "prog.o:[tc]" (program id 42)`,
// `tcx ingress program "handle_ingress" (program id 43, link id 7)`.
std::string Describe(const AttachedBpfProgram& program);

// Every BPF program on the hooks of the netdev `ifindex`: tc filters of the
// ingress hook, then of the egress hook (dump order), then tcx ingress and
// egress programs (run order). `rtnetlink` is a connected NETLINK_ROUTE
// socket in the calling thread's network namespace; its NL_CB_VALID
// callback is used during the call and reset to the default after. A netdev
// without a clsact qdisc has no tc filters; an ifindex that does not exist
// yields an empty list. Throws std::runtime_error naming the ifindex and what
// failed (the tc dump, a bpf(2) command and its errno: EPERM without
// CAP_SYS_ADMIN).
std::vector<AttachedBpfProgram> ListAttachedBpfPrograms(nl_sock* rtnetlink, int ifindex);

// The same with an rtnetlink socket of its own.
std::vector<AttachedBpfProgram> ListAttachedBpfPrograms(int ifindex);

// The ifindexes of the links that have tc filter hooks (a clsact or ingress
// qdisc), from one RTM_GETQDISC dump of the calling thread's namespace: a
// scan of every link dumps filters only where there can be some. Throws
// std::runtime_error.
std::set<int> LinksWithTcHooks(nl_sock* rtnetlink);
// ListAttachedBpfPrograms without the tc filter dumps when `has_tc_hooks`
// is false (see LinksWithTcHooks).
std::vector<AttachedBpfProgram> ListAttachedBpfPrograms(nl_sock* rtnetlink, int ifindex, bool has_tc_hooks);

// What discovery publishes for a netdev, DRANET's way: the set of tc filter
// names (an unnamed filter counts, as ""), and the set of tcx program names.
struct BpfProgramNames {
  std::vector<std::string> tc_filters;    // sorted, unique
  std::vector<std::string> tcx_programs;  // sorted, unique
  // dra.net/ebpf: any tc BPF filter or tcx program.
  bool any() const { return !tc_filters.empty() || !tcx_programs.empty(); }
  friend bool operator==(const BpfProgramNames&, const BpfProgramNames&) = default;
};
BpfProgramNames NamesOf(const std::vector<AttachedBpfProgram>& programs);

// ---------------------------------------------------------------------------
// bpf(2), for this module, inject/bpf_detach.h and tests.

// enum bpf_attach_type values of Linux 6.6+, newer than the build host's
// uapi headers may be, so spelled out with the kernel's values.
inline constexpr uint32_t kBpfTcxIngress = 46;
inline constexpr uint32_t kBpfTcxEgress = 47;

// The tcx attach type of a tcx hook (kBpfTcxIngress / kBpfTcxEgress).
uint32_t TcxAttachType(BpfHook hook);

// syscall(SYS_bpf, command, attr, size): >= 0 on success, -1 with errno set.
// `attr` is a union bpf_attr or a prefix of it laid out as the running
// kernel expects; it lives for the call.
long BpfSyscall(int command, void* attr, std::size_t size);

// A file descriptor of a BPF object (program, link), closed on destruction.
using BpfObjectFd = UniqueFd;

// BPF_PROG_GET_FD_BY_ID / BPF_LINK_GET_FD_BY_ID. An invalid fd with errno
// set on failure (ENOENT: the object is gone).
BpfObjectFd OpenBpfProgramById(uint32_t id);
BpfObjectFd OpenBpfLinkById(uint32_t id);

}  // namespace dranet::inventory
