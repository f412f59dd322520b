#include "inject/ethtool_socket.h"

#include <linux/ethtool_netlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <vector>

#include "inject/ethtool_feature_names.h"
#include "inject/pod_netns_applier.h"

namespace dranet::inject {
namespace {

using NlCbPtr = std::unique_ptr<nl_cb, NlRelease<nl_cb, nl_cb_put>>;

// Room for every feature of a netdev by name (about 64 kernel features of at
// most 32 bytes each, ~48 bytes per encoded bit).
constexpr std::size_t kRequestBytes = 16 * 1024;

// What the kernel answered to one request: 0 or an errno, and its extended
// ack text when it gave one.
struct KernelAnswer {
  int error = 0;
  std::string message;
};

// State shared with libnl's callbacks for one request. No exception may
// unwind through libnl, so a failing reply handler is kept and rethrown.
struct Exchange {
  const std::function<void(nlattr**)>* on_reply;
  int max_attr;
  bool acked = false;
  KernelAnswer answer;
  std::exception_ptr failure;
};

// The extended-ack text (NLMSGERR_ATTR_MSG) of an error answer, or "". The
// ack TLVs follow the echoed request unless the answer is NLM_F_CAPPED.
std::string ExtackMessage(const nlmsgerr* err) {
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(reinterpret_cast<const char*>(err) - NLMSG_HDRLEN);
  std::size_t offset = sizeof(nlmsgerr);
  if (!(hdr->nlmsg_flags & NLM_F_CAPPED)) offset += NLMSG_ALIGN(err->msg.nlmsg_len - NLMSG_HDRLEN);
  const std::size_t payload = hdr->nlmsg_len - NLMSG_HDRLEN;
  if (offset >= payload) return "";
  nlattr* tb[NLMSGERR_ATTR_MAX + 1] = {};
  auto* tlvs = reinterpret_cast<nlattr*>(const_cast<char*>(reinterpret_cast<const char*>(err)) + offset);
  if (nla_parse(tb, NLMSGERR_ATTR_MAX, tlvs, static_cast<int>(payload - offset), nullptr) < 0) return "";
  const nlattr* text = tb[NLMSGERR_ATTR_MSG];
  if (!text) return "";
  const char* data = static_cast<const char*>(nla_data(text));
  return std::string(data, ::strnlen(data, static_cast<std::size_t>(nla_len(text))));
}

int OnReply(nl_msg* msg, void* arg) {
  auto* exchange = static_cast<Exchange*>(arg);
  const nlmsghdr* hdr = nlmsg_hdr(msg);
  if (exchange->failure || !*exchange->on_reply) return NL_OK;
  try {
    std::vector<nlattr*> tb(static_cast<std::size_t>(exchange->max_attr) + 1, nullptr);
    if (genlmsg_parse(const_cast<nlmsghdr*>(hdr), 0, tb.data(), exchange->max_attr, nullptr) < 0) {
      throw InjectError("malformed ethtool netlink reply");
    }
    (*exchange->on_reply)(tb.data());
  } catch (...) {
    exchange->failure = std::current_exception();
  }
  return NL_OK;
}

int OnAck(nl_msg*, void* arg) {
  static_cast<Exchange*>(arg)->acked = true;
  return NL_STOP;
}

int OnError(sockaddr_nl*, nlmsgerr* err, void* arg) {
  auto* exchange = static_cast<Exchange*>(arg);
  exchange->acked = true;
  exchange->answer = {-err->error, ExtackMessage(err)};
  return NL_STOP;
}

[[noreturn]] void ThrowRefused(const std::string& what, const KernelAnswer& answer) {
  std::string text = what + " failed: " + std::strerror(answer.error);
  if (!answer.message.empty()) text += " (" + answer.message + ")";
  throw InjectError(text);
}

std::string OnOff(bool on) { return on ? "on" : "off"; }

// A request of `cmd` whose header (attribute `header_attr`) names `if_name`.
NlMsgPtr EthtoolRequest(int family, std::uint8_t cmd, int header_attr, const std::string& if_name) {
  NlMsgPtr msg(nlmsg_alloc_size(kRequestBytes));
  if (!msg || !genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST | NLM_F_ACK, cmd,
                           ETHTOOL_GENL_VERSION)) {
    throw InjectError("cannot build an ethtool netlink request for " + if_name);
  }
  nlattr* header = nla_nest_start(msg.get(), header_attr);
  if (!header || nla_put_string(msg.get(), ETHTOOL_A_HEADER_DEV_NAME, if_name.c_str()) < 0) {
    throw InjectError("cannot build an ethtool netlink request for " + if_name);
  }
  nla_nest_end(msg.get(), header);
  return msg;
}

// Sends `msg` and reads until the kernel's ack or error. `on_reply` sees the
// attributes (0..max_attr) of the reply, if any.
KernelAnswer Transact(nl_sock* sock, nl_msg* msg, const std::string& what, int max_attr = 0,
                      const std::function<void(nlattr**)>& on_reply = {}) {
  if (const int err = nl_send_auto(sock, msg); err < 0) throw InjectError(what + " failed: " + NlError(err));
  Exchange exchange{&on_reply, max_attr, false, {}, nullptr};
  NlCbPtr socket_cb(nl_socket_get_cb(sock));
  NlCbPtr cb(socket_cb ? nl_cb_clone(socket_cb.get()) : nullptr);
  if (!cb) throw InjectError(what + " failed: out of memory");
  nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, OnReply, &exchange);
  nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, OnAck, &exchange);
  nl_cb_err(cb.get(), NL_CB_CUSTOM, OnError, &exchange);
  while (!exchange.acked) {
    if (const int err = nl_recvmsgs(sock, cb.get()); err < 0 && !exchange.acked) {
      throw InjectError(what + " failed: " + NlError(err));
    }
  }
  if (exchange.failure && exchange.answer.error == 0) std::rethrow_exception(exchange.failure);
  return exchange.answer;
}

}  // namespace

// libnl marks every nest NLA_F_NESTED, which the ethtool family's strict
// validation requires.
void PutEthtoolBitset(nl_msg* msg, int attr_type, const std::map<std::string, bool>& bits) {
  nlattr* bitset = nla_nest_start(msg, attr_type);
  nlattr* list = bitset ? nla_nest_start(msg, ETHTOOL_A_BITSET_BITS) : nullptr;
  if (!list) throw InjectError("ethtool netlink request too large");
  for (const auto& [name, on] : bits) {
    nlattr* bit = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS_BIT);
    if (!bit || nla_put_string(msg, ETHTOOL_A_BITSET_BIT_NAME, name.c_str()) < 0 ||
        (on && nla_put_flag(msg, ETHTOOL_A_BITSET_BIT_VALUE) < 0)) {
      throw InjectError("ethtool netlink request too large (at bit " + name + ")");
    }
    nla_nest_end(msg, bit);
  }
  nla_nest_end(msg, list);
  nla_nest_end(msg, bitset);
}

std::map<std::string, bool> ParseEthtoolBitset(const nlattr* bitset) {
  nlattr* tb[ETHTOOL_A_BITSET_MAX + 1] = {};
  if (nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, const_cast<nlattr*>(bitset), nullptr) < 0) {
    throw InjectError("malformed ethtool bitset");
  }
  std::map<std::string, bool> bits;
  if (!tb[ETHTOOL_A_BITSET_BITS]) {
    if (tb[ETHTOOL_A_BITSET_VALUE]) throw InjectError("ethtool bitset in compact form where bit names were asked for");
    return bits;
  }
  const bool list_form = tb[ETHTOOL_A_BITSET_NOMASK] != nullptr;
  nlattr* bit = nullptr;
  int remaining = 0;
  nla_for_each_nested(bit, tb[ETHTOOL_A_BITSET_BITS], remaining) {
    if (nla_type(bit) != ETHTOOL_A_BITSET_BITS_BIT) continue;
    nlattr* fields[ETHTOOL_A_BITSET_BIT_MAX + 1] = {};
    if (nla_parse_nested(fields, ETHTOOL_A_BITSET_BIT_MAX, bit, nullptr) < 0) {
      throw InjectError("malformed bit in an ethtool bitset");
    }
    const nlattr* name = fields[ETHTOOL_A_BITSET_BIT_NAME];
    if (!name) continue;
    const char* data = static_cast<const char*>(nla_data(name));
    bits[std::string(data, ::strnlen(data, static_cast<std::size_t>(nla_len(name))))] =
        list_form || fields[ETHTOOL_A_BITSET_BIT_VALUE] != nullptr;
  }
  return bits;
}

EthtoolSocket::EthtoolSocket(const NetnsHandle& ns) : sock_(NetlinkSocketIn(ns, NETLINK_GENERIC)) {
  // The kernel's reason in error answers (best effort: older kernels lack it).
  const int on = 1;
  ::setsockopt(nl_socket_get_fd(sock_.get()), SOL_NETLINK, NETLINK_EXT_ACK, &on, sizeof on);
  family_ = genl_ctrl_resolve(sock_.get(), ETHTOOL_GENL_NAME);
  if (family_ < 0) {
    throw InjectError("the kernel has no \"" ETHTOOL_GENL_NAME "\" generic netlink family (" + NlError(family_) +
                      "); ethtool.features and ethtool.privateFlags need Linux 5.6 or later");
  }
}

EthtoolFeatures EthtoolSocket::ReadFeatures(const std::string& if_name) {
  const std::string what = "reading the ethtool features of " + if_name;
  auto msg = EthtoolRequest(family_, ETHTOOL_MSG_FEATURES_GET, ETHTOOL_A_FEATURES_HEADER, if_name);
  EthtoolFeatures features;
  bool replied = false;
  const auto answer = Transact(sock_.get(), msg.get(), what, ETHTOOL_A_FEATURES_MAX, [&](nlattr** tb) {
    const std::pair<int, std::set<std::string>*> sets[] = {{ETHTOOL_A_FEATURES_HW, &features.changeable},
                                                           {ETHTOOL_A_FEATURES_WANTED, &features.wanted},
                                                           {ETHTOOL_A_FEATURES_ACTIVE, &features.active}};
    for (const auto& [attr, names] : sets) {
      if (!tb[attr]) continue;
      for (const auto& [name, on] : ParseEthtoolBitset(tb[attr])) {
        if (on) names->insert(name);
        if (attr == ETHTOOL_A_FEATURES_HW) features.known.insert(name);
      }
    }
    replied = true;
  });
  if (answer.error != 0) ThrowRefused(what, answer);
  if (!replied) throw InjectError(what + " failed: the kernel sent no features");
  return features;
}

std::map<std::string, bool> EthtoolSocket::ReadPrivateFlags(const std::string& if_name) {
  const std::string what = "reading the ethtool private flags of " + if_name;
  auto msg = EthtoolRequest(family_, ETHTOOL_MSG_PRIVFLAGS_GET, ETHTOOL_A_PRIVFLAGS_HEADER, if_name);
  std::map<std::string, bool> flags;
  const auto answer = Transact(sock_.get(), msg.get(), what, ETHTOOL_A_PRIVFLAGS_MAX, [&](nlattr** tb) {
    if (tb[ETHTOOL_A_PRIVFLAGS_FLAGS]) flags = ParseEthtoolBitset(tb[ETHTOOL_A_PRIVFLAGS_FLAGS]);
  });
  if (answer.error == EOPNOTSUPP) return {};  // the driver has no private flags
  if (answer.error != 0) ThrowRefused(what, answer);
  return flags;
}

void EthtoolSocket::SetFeatures(const std::string& if_name, const std::map<std::string, bool>& features) {
  if (features.empty()) return;
  const std::string what = "setting the ethtool features of " + if_name;
  auto msg = EthtoolRequest(family_, ETHTOOL_MSG_FEATURES_SET, ETHTOOL_A_FEATURES_HEADER, if_name);
  PutEthtoolBitset(msg.get(), ETHTOOL_A_FEATURES_WANTED, features);
  // The reply's WANTED bitset holds the requested features that ended with
  // another value, each with the value that was asked for.
  std::map<std::string, bool> not_taken;
  const auto answer = Transact(sock_.get(), msg.get(), what, ETHTOOL_A_FEATURES_MAX, [&](nlattr** tb) {
    if (tb[ETHTOOL_A_FEATURES_WANTED]) not_taken = ParseEthtoolBitset(tb[ETHTOOL_A_FEATURES_WANTED]);
  });
  if (answer.error != 0) ThrowRefused(what, answer);
  if (not_taken.empty()) return;
  std::string text;
  for (const auto& [name, asked] : not_taken) {
    if (!text.empty()) text += ", ";
    text += name + " stayed " + OnOff(!asked) + " (asked " + OnOff(asked) + ")";
  }
  throw InjectError(what + " failed: " + text);
}

void EthtoolSocket::SetPrivateFlags(const std::string& if_name, const std::map<std::string, bool>& flags) {
  if (flags.empty()) return;
  CheckPrivateFlagNames(flags, ReadPrivateFlags(if_name), if_name);
  const std::string what = "setting the ethtool private flags of " + if_name;
  auto msg = EthtoolRequest(family_, ETHTOOL_MSG_PRIVFLAGS_SET, ETHTOOL_A_PRIVFLAGS_HEADER, if_name);
  PutEthtoolBitset(msg.get(), ETHTOOL_A_PRIVFLAGS_FLAGS, flags);
  if (const auto answer = Transact(sock_.get(), msg.get(), what); answer.error != 0) ThrowRefused(what, answer);
}

}  // namespace dranet::inject
