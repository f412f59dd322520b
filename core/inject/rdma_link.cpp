#include "inject/rdma_link.h"

#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include <vector>

#include "inject/netlink_socket.h"
#include "inject/pod_netns_applier.h"

namespace dranet::inject {
namespace {

NlMsgPtr SetNetnsMessage(std::uint32_t dev_index, std::uint32_t netns_fd) {
  NlMsgPtr msg(nlmsg_alloc_simple(RdmaNldevType(RDMA_NLDEV_CMD_SET), NLM_F_REQUEST | NLM_F_ACK));
  if (!msg || nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_DEV_INDEX, dev_index) < 0 ||
      nla_put_u32(msg.get(), RDMA_NLDEV_NET_NS_FD, netns_fd) < 0) {
    throw InjectError("cannot build the RDMA netns request", /*rdma=*/true);
  }
  return msg;
}

struct DumpMatch {
  const std::string* name;
  std::optional<std::uint32_t> index;
};

int OnDevice(nl_msg* msg, void* arg) {
  auto* match = static_cast<DumpMatch*>(arg);
  std::vector<nlattr*> tb(RDMA_NLDEV_ATTR_MAX, nullptr);
  if (nlmsg_parse(nlmsg_hdr(msg), 0, tb.data(), RDMA_NLDEV_ATTR_MAX - 1, nullptr) < 0) return NL_SKIP;
  const nlattr* name = tb[RDMA_NLDEV_ATTR_DEV_NAME];
  const nlattr* index = tb[RDMA_NLDEV_ATTR_DEV_INDEX];
  if (name && index && *match->name == nla_get_string(const_cast<nlattr*>(name))) {
    match->index = nla_get_u32(const_cast<nlattr*>(index));
  }
  return NL_OK;
}

int OnSystem(nl_msg* msg, void* arg) {
  auto* mode = static_cast<std::optional<bool>*>(arg);
  std::vector<nlattr*> tb(RDMA_NLDEV_ATTR_MAX, nullptr);
  if (nlmsg_parse(nlmsg_hdr(msg), 0, tb.data(), RDMA_NLDEV_ATTR_MAX - 1, nullptr) < 0) return NL_SKIP;
  if (const nlattr* netns_mode = tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE])
    *mode = nla_get_u8(const_cast<nlattr*>(netns_mode)) == 0;
  return NL_OK;
}

}  // namespace

std::optional<bool> RdmaNetnsModeExclusive() {
  NlSockPtr sock(nl_socket_alloc());
  if (!sock || nl_connect(sock.get(), NETLINK_RDMA) < 0) return std::nullopt;
  NlMsgPtr msg(nlmsg_alloc_simple(RdmaNldevType(RDMA_NLDEV_CMD_SYS_GET), NLM_F_REQUEST));
  if (!msg || nl_send_auto(sock.get(), msg.get()) < 0) return std::nullopt;
  std::optional<bool> mode;
  nl_socket_modify_cb(sock.get(), NL_CB_VALID, NL_CB_CUSTOM, OnSystem, &mode);
  if (nl_recvmsgs_default(sock.get()) < 0) return std::nullopt;
  return mode;
}

std::uint16_t RdmaNldevType(std::uint16_t op) {
  return static_cast<std::uint16_t>((RDMA_NL_NLDEV << 10) | op);
}

std::string EncodeRdmaSetNetns(std::uint32_t dev_index, std::uint32_t netns_fd) {
  const auto msg = SetNetnsMessage(dev_index, netns_fd);
  const nlmsghdr* hdr = nlmsg_hdr(msg.get());
  return std::string(reinterpret_cast<const char*>(hdr), hdr->nlmsg_len);
}

std::optional<std::uint32_t> FindRdmaDevice(const NetnsHandle& ns, const std::string& name) {
  auto sock = NetlinkSocketIn(ns, NETLINK_RDMA);
  NlMsgPtr msg(nlmsg_alloc_simple(RdmaNldevType(RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_DUMP));
  if (!msg) throw InjectError("cannot build the RDMA device dump request", /*rdma=*/true);
  if (const int err = nl_send_auto(sock.get(), msg.get()); err < 0) {
    throw InjectError("RDMA device dump failed: " + NlError(err), /*rdma=*/true);
  }
  DumpMatch match{&name, std::nullopt};
  nl_socket_modify_cb(sock.get(), NL_CB_VALID, NL_CB_CUSTOM, OnDevice, &match);
  if (const int err = nl_recvmsgs_default(sock.get()); err < 0) {
    throw InjectError("RDMA device dump failed: " + NlError(err), /*rdma=*/true);
  }
  return match.index;
}

bool MoveRdmaDevice(const NetnsHandle& from, const std::string& name, const NetnsHandle& target) {
  const auto index = FindRdmaDevice(from, name);
  if (!index) return false;
  auto sock = NetlinkSocketIn(from, NETLINK_RDMA);
  const auto msg = SetNetnsMessage(*index, static_cast<std::uint32_t>(target.fd()));
  int err = nl_send_auto(sock.get(), msg.get());
  if (err >= 0) err = nl_wait_for_ack(sock.get());
  if (err < 0) {
    throw InjectError("moving RDMA device " + name + " to another network namespace failed: " +
                      NlError(err) + " (is the RDMA subsystem in exclusive netns mode?)",
                      /*rdma=*/true);
  }
  return true;
}

}  // namespace dranet::inject
