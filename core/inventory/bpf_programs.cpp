#include "inventory/bpf_programs.h"

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

namespace dranet::inventory {
namespace {

// bpf_attr.query as Linux 6.6 lays it out: target_ifindex (a union with
// target_fd) and link_ids are newer than the build host's uapi headers may be.
struct TcxQueryAttr {
  uint32_t target_ifindex;
  uint32_t attach_type;
  uint32_t query_flags;
  uint32_t attach_flags;
  alignas(8) uint64_t prog_ids;
  uint32_t count;  // in: capacity of prog_ids/link_ids; out: programs attached
  uint32_t padding;
  alignas(8) uint64_t prog_attach_flags;
  alignas(8) uint64_t link_ids;
  alignas(8) uint64_t link_attach_flags;
  alignas(8) uint64_t revision;
};
static_assert(sizeof(TcxQueryAttr) == 64);

// A tc dump or a query racing with changes is retried from scratch.
constexpr int kAttempts = 5;

std::string OnIfindex(int ifindex) { return " on ifindex " + std::to_string(ifindex); }

[[noreturn]] void ThrowErrno(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

struct TcDump {
  BpfHook hook;
  uint32_t parent;
  std::vector<AttachedBpfProgram> filters;
};

// One RTM_NEWTFILTER of the dump. Each priority's chain of filters starts
// with a message that names the classifier kind but carries no TCA_OPTIONS:
// it is no filter and is skipped (DRANET's netlink library does the same).
int OnFilterMessage(nl_msg* message, void* dump_arg) {
  auto* dump = static_cast<TcDump*>(dump_arg);
  nlmsghdr* header = nlmsg_hdr(message);
  if (header->nlmsg_type != RTM_NEWTFILTER || !nlmsg_valid_hdr(header, sizeof(tcmsg))) return NL_OK;
  nlattr* attrs[TCA_MAX + 1] = {};
  if (nlmsg_parse(header, sizeof(tcmsg), attrs, TCA_MAX, nullptr) < 0) return NL_OK;
  if (attrs[TCA_KIND] == nullptr || nla_strcmp(attrs[TCA_KIND], "bpf") != 0) return NL_OK;
  if (attrs[TCA_OPTIONS] == nullptr) return NL_OK;
  nlattr* options[TCA_BPF_MAX + 1] = {};
  if (nla_parse_nested(options, TCA_BPF_MAX, attrs[TCA_OPTIONS], nullptr) < 0) return NL_OK;
  const auto* filter = static_cast<const tcmsg*>(nlmsg_data(header));
  AttachedBpfProgram program;
  program.hook = dump->hook;
  if (nlattr* name = options[TCA_BPF_NAME]) {
    const auto* text = static_cast<const char*>(nla_data(name));
    program.name.assign(text, strnlen(text, static_cast<std::size_t>(nla_len(name))));
  }
  if (options[TCA_BPF_ID] && nla_len(options[TCA_BPF_ID]) >= 4) program.program_id = nla_get_u32(options[TCA_BPF_ID]);
  program.tc_parent = dump->parent;
  program.tc_info = filter->tcm_info;
  program.tc_handle = filter->tcm_handle;
  if (attrs[TCA_CHAIN] && nla_len(attrs[TCA_CHAIN]) >= 4) program.tc_chain = nla_get_u32(attrs[TCA_CHAIN]);
  dump->filters.push_back(std::move(program));
  return NL_OK;
}

// The BPF filters of one clsact hook (every chain, every priority).
std::vector<AttachedBpfProgram> DumpTcFilters(nl_sock* socket, int ifindex, BpfHook hook) {
  const uint32_t parent =
      TC_H_MAKE(TC_H_CLSACT, hook == BpfHook::kTcIngress ? TC_H_MIN_INGRESS : TC_H_MIN_EGRESS);
  tcmsg request{};
  request.tcm_family = AF_UNSPEC;
  request.tcm_ifindex = ifindex;
  request.tcm_parent = parent;
  for (int attempt = 1;; ++attempt) {
    TcDump dump{hook, parent, {}};
    int error = nl_send_simple(socket, RTM_GETTFILTER, NLM_F_DUMP, &request, sizeof(request));
    if (error >= 0) {
      nl_socket_modify_cb(socket, NL_CB_VALID, NL_CB_CUSTOM, OnFilterMessage, &dump);
      error = nl_recvmsgs_default(socket);
      nl_socket_modify_cb(socket, NL_CB_VALID, NL_CB_DEFAULT, nullptr, nullptr);
    }
    if (error >= 0) return std::move(dump.filters);
    if (error != -NLE_DUMP_INTR || attempt == kAttempts) {
      throw std::runtime_error(std::string("tc filter dump of the ") + BpfHookName(hook) + " hook" +
                               OnIfindex(ifindex) + " failed: " + nl_geterror(error));
    }
  }
}

// The kernel name of program `id`; nullopt when the program is gone.
std::optional<std::string> ProgramName(uint32_t id, int ifindex) {
  BpfObjectFd program = OpenBpfProgramById(id);
  if (!program.valid()) {
    if (errno == ENOENT) return std::nullopt;
    ThrowErrno("BPF_PROG_GET_FD_BY_ID for program id " + std::to_string(id) + OnIfindex(ifindex));
  }
  bpf_prog_info info{};
  union bpf_attr attr {};
  attr.info.bpf_fd = static_cast<uint32_t>(program.get());
  attr.info.info_len = sizeof(info);
  attr.info.info = reinterpret_cast<uintptr_t>(&info);
  if (BpfSyscall(BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) < 0) {
    ThrowErrno("BPF_OBJ_GET_INFO_BY_FD for program id " + std::to_string(id) + OnIfindex(ifindex));
  }
  return std::string(info.name, strnlen(info.name, sizeof(info.name)));
}

// The programs of one tcx hook, in run order.
std::vector<AttachedBpfProgram> QueryTcxPrograms(int ifindex, BpfHook hook) {
  std::vector<uint32_t> program_ids(8), link_ids(8);
  TcxQueryAttr query{};
  for (int attempt = 1;; ++attempt) {
    query = TcxQueryAttr{};
    query.target_ifindex = static_cast<uint32_t>(ifindex);
    query.attach_type = TcxAttachType(hook);
    query.prog_ids = reinterpret_cast<uintptr_t>(program_ids.data());
    query.link_ids = reinterpret_cast<uintptr_t>(link_ids.data());
    query.count = static_cast<uint32_t>(program_ids.size());
    if (BpfSyscall(BPF_PROG_QUERY, &query, sizeof(query)) == 0) break;
    // EINVAL: a kernel without tcx (an unknown attach type). ENODEV: the
    // netdev went away.
    if (errno == EINVAL || errno == ENODEV) return {};
    if (errno != ENOSPC || attempt == kAttempts) {
      ThrowErrno(std::string("BPF_PROG_QUERY of the ") + BpfHookName(hook) + " hook" + OnIfindex(ifindex));
    }
    // More programs than room: the kernel said how many; ask again.
    program_ids.resize(query.count + 8);
    link_ids.resize(query.count + 8);
  }
  std::vector<AttachedBpfProgram> programs;
  for (uint32_t i = 0; i < query.count && i < program_ids.size(); ++i) {
    auto name = ProgramName(program_ids[i], ifindex);
    if (!name) continue;  // detached since the query
    AttachedBpfProgram program;
    program.hook = hook;
    program.name = std::move(*name);
    program.program_id = program_ids[i];
    program.tcx_link_id = link_ids[i];
    programs.push_back(std::move(program));
  }
  return programs;
}

struct SocketDeleter {
  void operator()(nl_sock* socket) const { nl_socket_free(socket); }
};

}  // namespace

const char* BpfHookName(BpfHook hook) {
  switch (hook) {
    case BpfHook::kTcIngress:
      return "tc ingress";
    case BpfHook::kTcEgress:
      return "tc egress";
    case BpfHook::kTcxIngress:
      return "tcx ingress";
    case BpfHook::kTcxEgress:
      return "tcx egress";
  }
  return "unknown";
}

std::string Describe(const AttachedBpfProgram& program) {
  bool tcx = program.hook == BpfHook::kTcxIngress || program.hook == BpfHook::kTcxEgress;
  std::string text = std::string(BpfHookName(program.hook)) + (tcx ? " program \"" : " filter \"") + program.name +
                     "\" (program id " + std::to_string(program.program_id);
  if (program.tcx_link_id != 0) text += ", link id " + std::to_string(program.tcx_link_id);
  return text + ")";
}

std::set<int> LinksWithTcHooks(nl_sock* rtnetlink) {
  tcmsg request{};
  request.tcm_family = AF_UNSPEC;
  for (int attempt = 1;; ++attempt) {
    std::set<int> links;
    int error = nl_send_simple(rtnetlink, RTM_GETQDISC, NLM_F_DUMP, &request, sizeof(request));
    if (error >= 0) {
      auto on_qdisc = [](nl_msg* message, void* links_arg) -> int {
        nlmsghdr* header = nlmsg_hdr(message);
        if (header->nlmsg_type != RTM_NEWQDISC || !nlmsg_valid_hdr(header, sizeof(tcmsg))) return NL_OK;
        nlattr* attrs[TCA_MAX + 1] = {};
        if (nlmsg_parse(header, sizeof(tcmsg), attrs, TCA_MAX, nullptr) < 0 || attrs[TCA_KIND] == nullptr) return NL_OK;
        if (nla_strcmp(attrs[TCA_KIND], "clsact") == 0 || nla_strcmp(attrs[TCA_KIND], "ingress") == 0)
          static_cast<std::set<int>*>(links_arg)->insert(static_cast<const tcmsg*>(nlmsg_data(header))->tcm_ifindex);
        return NL_OK;
      };
      nl_socket_modify_cb(rtnetlink, NL_CB_VALID, NL_CB_CUSTOM, on_qdisc, &links);
      error = nl_recvmsgs_default(rtnetlink);
      nl_socket_modify_cb(rtnetlink, NL_CB_VALID, NL_CB_DEFAULT, nullptr, nullptr);
    }
    if (error >= 0) return links;
    if (error != -NLE_DUMP_INTR || attempt == kAttempts)
      throw std::runtime_error(std::string("qdisc dump failed: ") + nl_geterror(error));
  }
}

std::vector<AttachedBpfProgram> ListAttachedBpfPrograms(nl_sock* rtnetlink, int ifindex) {
  return ListAttachedBpfPrograms(rtnetlink, ifindex, /*has_tc_hooks=*/true);
}

std::vector<AttachedBpfProgram> ListAttachedBpfPrograms(nl_sock* rtnetlink, int ifindex, bool has_tc_hooks) {
  std::vector<AttachedBpfProgram> programs;
  for (BpfHook hook : {BpfHook::kTcIngress, BpfHook::kTcEgress}) {
    if (!has_tc_hooks) break;
    auto filters = DumpTcFilters(rtnetlink, ifindex, hook);
    programs.insert(programs.end(), filters.begin(), filters.end());
  }
  for (BpfHook hook : {BpfHook::kTcxIngress, BpfHook::kTcxEgress}) {
    auto tcx = QueryTcxPrograms(ifindex, hook);
    programs.insert(programs.end(), tcx.begin(), tcx.end());
  }
  return programs;
}

std::vector<AttachedBpfProgram> ListAttachedBpfPrograms(int ifindex) {
  std::unique_ptr<nl_sock, SocketDeleter> socket(nl_socket_alloc());
  if (!socket) throw std::runtime_error("cannot allocate a netlink socket to list BPF programs" + OnIfindex(ifindex));
  if (int error = nl_connect(socket.get(), NETLINK_ROUTE); error < 0) {
    throw std::runtime_error("cannot connect to rtnetlink to list BPF programs" + OnIfindex(ifindex) + ": " +
                             nl_geterror(error));
  }
  return ListAttachedBpfPrograms(socket.get(), ifindex);
}

BpfProgramNames NamesOf(const std::vector<AttachedBpfProgram>& programs) {
  std::set<std::string> tc, tcx;
  for (const auto& program : programs) {
    bool is_tcx = program.hook == BpfHook::kTcxIngress || program.hook == BpfHook::kTcxEgress;
    (is_tcx ? tcx : tc).insert(program.name);
  }
  return {{tc.begin(), tc.end()}, {tcx.begin(), tcx.end()}};
}

uint32_t TcxAttachType(BpfHook hook) { return hook == BpfHook::kTcxEgress ? kBpfTcxEgress : kBpfTcxIngress; }

long BpfSyscall(int command, void* attr, std::size_t size) { return ::syscall(SYS_bpf, command, attr, size); }

BpfObjectFd OpenBpfProgramById(uint32_t id) {
  union bpf_attr attr {};
  attr.prog_id = id;
  return BpfObjectFd(static_cast<int>(BpfSyscall(BPF_PROG_GET_FD_BY_ID, &attr, sizeof(attr))));
}

BpfObjectFd OpenBpfLinkById(uint32_t id) {
  union bpf_attr attr {};
  attr.link_id = id;
  return BpfObjectFd(static_cast<int>(BpfSyscall(BPF_LINK_GET_FD_BY_ID, &attr, sizeof(attr))));
}

}  // namespace dranet::inventory
