#include "inject/bpf_detach.h"

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/errno.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "inject/netlink_socket.h"
#include "inject/pod_netns_applier.h"

namespace dranet::inject {
namespace {

using inventory::AttachedBpfProgram;
using inventory::BpfHook;

// Why a detach failed; empty when it succeeded or the program was already gone.
struct DetachOutcome {
  bool detached = false;
  std::string error;
};

DetachOutcome Failed(const std::string& what) { return {false, what}; }
DetachOutcome FailedErrno(const std::string& what) { return Failed(what + ": " + std::strerror(errno)); }

// RTM_DELTFILTER of exactly the dumped filter: same parent, priority,
// protocol, chain and handle (a handle of 0 would delete every filter of
// that priority).
DetachOutcome DeleteTcFilter(nl_sock* socket, int ifindex, const AttachedBpfProgram& filter) {
  NlMsgPtr message(nlmsg_alloc_simple(RTM_DELTFILTER, NLM_F_REQUEST | NLM_F_ACK));
  if (!message) return Failed("cannot allocate a netlink message");
  tcmsg header{};
  header.tcm_family = AF_UNSPEC;
  header.tcm_ifindex = ifindex;
  header.tcm_parent = filter.tc_parent;
  header.tcm_info = filter.tc_info;
  header.tcm_handle = filter.tc_handle;
  if (nlmsg_append(message.get(), &header, sizeof(header), NLMSG_ALIGNTO) < 0 ||
      nla_put_string(message.get(), TCA_KIND, "bpf") < 0 || nla_put_u32(message.get(), TCA_CHAIN, filter.tc_chain) < 0) {
    return Failed("cannot build the RTM_DELTFILTER request");
  }
  int error = nl_send_auto(socket, message.get());
  if (error >= 0) error = nl_wait_for_ack(socket);
  if (error == -NLE_OBJ_NOTFOUND) return {};  // deleted by someone else meanwhile
  if (error < 0) return Failed("RTM_DELTFILTER: " + NlError(error));
  return {true, {}};
}

// A tcx program held by a bpf_link: detaching the link takes the program off
// the hook (the link object itself lives on while something holds it).
DetachOutcome DetachTcxLink(const AttachedBpfProgram& program) {
  inventory::BpfObjectFd link = inventory::OpenBpfLinkById(program.tcx_link_id);
  if (!link.valid()) return errno == ENOENT ? DetachOutcome{} : FailedErrno("BPF_LINK_GET_FD_BY_ID");
  union bpf_attr attr {};
  attr.link_detach.link_fd = static_cast<uint32_t>(link.get());
  if (inventory::BpfSyscall(BPF_LINK_DETACH, &attr, sizeof(attr)) < 0) {
    return errno == ENOLINK ? DetachOutcome{} : FailedErrno("BPF_LINK_DETACH");  // ENOLINK: already detached
  }
  return {true, {}};
}

// A tcx program attached with BPF_PROG_ATTACH.
DetachOutcome DetachTcxProgram(int ifindex, const AttachedBpfProgram& program) {
  inventory::BpfObjectFd fd = inventory::OpenBpfProgramById(program.program_id);
  if (!fd.valid()) return errno == ENOENT ? DetachOutcome{} : FailedErrno("BPF_PROG_GET_FD_BY_ID");
  union bpf_attr attr {};
  attr.target_fd = static_cast<uint32_t>(ifindex);  // target_ifindex for tcx
  attr.attach_bpf_fd = static_cast<uint32_t>(fd.get());
  attr.attach_type = inventory::TcxAttachType(program.hook);
  if (inventory::BpfSyscall(BPF_PROG_DETACH, &attr, sizeof(attr)) < 0) {
    return errno == ENOENT ? DetachOutcome{} : FailedErrno("BPF_PROG_DETACH");  // ENOENT: no longer attached
  }
  return {true, {}};
}

}  // namespace

std::vector<AttachedBpfProgram> DetachBpfPrograms(const std::string& if_name) {
  const int ifindex = static_cast<int>(::if_nametoindex(if_name.c_str()));
  if (ifindex == 0) {
    throw InjectError("cannot detach BPF programs from " + if_name + ": " + std::strerror(errno));
  }
  NlSockPtr socket(nl_socket_alloc());
  if (!socket) throw InjectError("cannot detach BPF programs from " + if_name + ": cannot allocate a netlink socket");
  if (const int error = nl_connect(socket.get(), NETLINK_ROUTE); error < 0) {
    throw InjectError("cannot detach BPF programs from " + if_name + ": cannot connect to rtnetlink: " +
                      NlError(error));
  }
  std::vector<AttachedBpfProgram> attached;
  try {
    attached = inventory::ListAttachedBpfPrograms(socket.get(), ifindex);
  } catch (const std::exception& error) {
    throw InjectError("cannot detach BPF programs from " + if_name + ": " + error.what());
  }
  std::vector<AttachedBpfProgram> detached;
  std::string failures;
  for (const auto& program : attached) {
    DetachOutcome outcome;
    switch (program.hook) {
      case BpfHook::kTcIngress:
      case BpfHook::kTcEgress:
        outcome = DeleteTcFilter(socket.get(), ifindex, program);
        break;
      case BpfHook::kTcxIngress:
      case BpfHook::kTcxEgress:
        outcome = program.tcx_link_id != 0 ? DetachTcxLink(program) : DetachTcxProgram(ifindex, program);
        break;
    }
    if (outcome.detached) detached.push_back(program);
    if (!outcome.error.empty()) {
      failures += (failures.empty() ? "" : "; ") + inventory::Describe(program) + ": " + outcome.error;
    }
  }
  if (!failures.empty()) {
    throw InjectError("cannot detach every BPF program from " + if_name + " (" + std::to_string(detached.size()) +
                      " detached): " + failures);
  }
  return detached;
}

}  // namespace dranet::inject
