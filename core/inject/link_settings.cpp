#include "inject/link_settings.h"

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/route/link.h>
#include <netlink/route/link/vrf.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "inject/ethtool_socket.h"
#include "inject/netlink_socket.h"
#include "inject/pod_netns_applier.h"
#include "inventory/netlink_facts.h"

namespace dranet::inject {
namespace {

using LinkPtr = std::unique_ptr<rtnl_link, NlRelease<rtnl_link, rtnl_link_put>>;

// Sends `msg` and waits for the kernel's answer; a negative libnl code on
// failure.
int SendAndWait(nl_sock* sock, nl_msg* msg) {
  if (const int err = nl_send_auto(sock, msg); err < 0) return err;
  return nl_wait_for_ack(sock);
}

std::string ConfPath(const std::string& if_name, const std::string& key) {
  return "/proc/sys/net/ipv4/conf/" + if_name + "/" + key;
}

// Writes `value` to the sysctl file `path` of the calling thread's namespace.
void WriteSysctl(const std::string& path, int32_t value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  if (!out) throw InjectError("writing " + std::to_string(value) + " to " + path + ": " + std::strerror(errno));
}

std::vector<unsigned char> ParseMac(const std::string& mac, const std::string& if_name) {
  std::vector<unsigned char> bytes;
  std::istringstream in(mac);
  std::string octet;
  while (std::getline(in, octet, ':')) {
    if (octet.size() != 2) throw InjectError("invalid MAC \"" + mac + "\" for " + if_name);
    bytes.push_back(static_cast<unsigned char>(std::stoul(octet, nullptr, 16)));
  }
  if (bytes.empty()) throw InjectError("invalid MAC \"" + mac + "\" for " + if_name);
  return bytes;
}

}  // namespace

void SetLinkAttributes(nl_sock* sock, int ifindex, const LinkSettings& settings, const std::string& if_name) {
  const bool sizes = settings.gso_max_size || settings.gro_max_size || settings.gso_ipv4_max_size ||
                     settings.gro_ipv4_max_size;
  if (settings.mac.empty() && !sizes) return;
  NlMsgPtr msg(nlmsg_alloc_simple(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK));
  if (!msg) throw InjectError("out of memory configuring " + if_name);
  ifinfomsg header{};
  header.ifi_family = AF_UNSPEC;
  header.ifi_index = ifindex;
  bool ok = nlmsg_append(msg.get(), &header, sizeof(header), NLMSG_ALIGNTO) == 0;
  if (!settings.mac.empty()) {
    const auto mac = ParseMac(settings.mac, if_name);
    ok = ok && nla_put(msg.get(), IFLA_ADDRESS, static_cast<int>(mac.size()), mac.data()) == 0;
  }
  auto put = [&](int type, const std::optional<uint32_t>& value) {
    if (value) ok = ok && nla_put_u32(msg.get(), type, *value) == 0;
  };
  put(IFLA_GSO_MAX_SIZE, settings.gso_max_size);
  put(IFLA_GRO_MAX_SIZE, settings.gro_max_size);
  put(inventory::kIflaGsoIpv4MaxSize, settings.gso_ipv4_max_size);
  put(inventory::kIflaGroIpv4MaxSize, settings.gro_ipv4_max_size);
  if (!ok) throw InjectError("building the link change for " + if_name);
  if (const int err = SendAndWait(sock, msg.get()); err < 0) {
    std::string what;
    if (!settings.mac.empty()) what += "mac " + settings.mac;
    if (sizes) what += std::string(what.empty() ? "" : ", ") + "GSO/GRO sizes";
    throw InjectError("setting " + what + " on " + if_name + ": " + NlError(err));
  }
}

std::optional<int32_t> ReadIpv4Conf(const std::string& if_name, const std::string& key) {
  std::ifstream in(ConfPath(if_name, key));
  int32_t value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

void ApplyNamespaceSettings(const NetnsHandle& ns, const std::string& if_name, const LinkSettings& settings) {
  if (settings.arp_ignore || settings.arp_announce || settings.forwarding) {
    RunInNetns(ns, [&] {
      if (settings.arp_ignore) WriteSysctl(ConfPath(if_name, "arp_ignore"), *settings.arp_ignore);
      if (settings.arp_announce) WriteSysctl(ConfPath(if_name, "arp_announce"), *settings.arp_announce);
      if (settings.forwarding) {
        WriteSysctl(ConfPath(if_name, "forwarding"), *settings.forwarding ? 1 : 0);
        // IPv6 may be off in the namespace (no conf/ directory): nothing to forward then.
        const std::string ipv6 = "/proc/sys/net/ipv6/conf/" + if_name + "/forwarding";
        if (::access(ipv6.c_str(), F_OK) == 0) WriteSysctl(ipv6, *settings.forwarding ? 1 : 0);
      }
    });
  }
  if (settings.ethtool_features.empty() && settings.ethtool_private_flags.empty()) return;
  EthtoolSocket ethtool(ns);
  if (!settings.ethtool_features.empty()) ethtool.SetFeatures(if_name, settings.ethtool_features);
  if (!settings.ethtool_private_flags.empty()) ethtool.SetPrivateFlags(if_name, settings.ethtool_private_flags);
}

std::string VrfUnsupportedReason(nl_sock* sock) {
  NlMsgPtr msg(nlmsg_alloc_simple(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL));
  ifinfomsg header{};
  header.ifi_family = AF_UNSPEC;
  bool ok = msg && nlmsg_append(msg.get(), &header, sizeof(header), NLMSG_ALIGNTO) == 0 &&
            nla_put_string(msg.get(), IFLA_IFNAME, "dranet-vrfprobe") == 0;
  nlattr* info = ok ? nla_nest_start(msg.get(), IFLA_LINKINFO) : nullptr;
  ok = info != nullptr && nla_put_string(msg.get(), IFLA_INFO_KIND, "vrf") == 0;
  if (!ok) return "cannot build the VRF probe";
  nla_nest_end(msg.get(), info);
  const int err = SendAndWait(sock, msg.get());
  // A VRF without IFLA_VRF_TABLE: "VRF table id is missing" (EINVAL).
  if (err == -NLE_INVAL) return "";
  if (err == 0) {  // cannot happen with a kernel that validates; remove what was made
    LinkPtr probe(rtnl_link_alloc());
    rtnl_link_set_name(probe.get(), "dranet-vrfprobe");
    rtnl_link_delete(sock, probe.get());
    return "";
  }
  if (err == -NLE_OPNOTSUPP || err == -NLE_NOATTR)
    return "the kernel has no VRF support (CONFIG_NET_VRF, module vrf)";
  return "probing for VRF support failed: " + NlError(err);
}

uint32_t DefaultVrfTable(const std::string& name) {
  uint32_t hash = 2166136261U;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 16777619U;
  }
  return hash % 1000 + 1000;
}

void JoinVrf(const NetnsHandle& ns, nl_sock* sock, int ifindex, const std::string& vrf_name, uint32_t table,
             const std::string& if_name) {
  const std::string where = "VRF " + vrf_name + " (table " + std::to_string(table) + ") for " + if_name;
  rtnl_link* raw = nullptr;
  int err = rtnl_link_get_kernel(sock, 0, vrf_name.c_str(), &raw);
  LinkPtr vrf(raw);
  if (err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV) {
    LinkPtr wanted(rtnl_link_vrf_alloc());
    if (!wanted) throw InjectError(where + ": out of memory");
    rtnl_link_set_name(wanted.get(), vrf_name.c_str());
    rtnl_link_vrf_set_tableid(wanted.get(), table);
    rtnl_link_set_flags(wanted.get(), IFF_UP);
    if ((err = rtnl_link_add(sock, wanted.get(), NLM_F_CREATE | NLM_F_EXCL)) < 0)
      throw InjectError("creating " + where + ": " + NlError(err));
    raw = nullptr;
    if ((err = rtnl_link_get_kernel(sock, 0, vrf_name.c_str(), &raw)) < 0)
      throw InjectError("reading back " + where + ": " + NlError(err));
    vrf.reset(raw);
  } else if (err < 0) {
    throw InjectError("looking up " + where + ": " + NlError(err));
  } else {
    uint32_t existing = 0;
    const char* kind = rtnl_link_get_type(vrf.get());
    if (kind == nullptr || std::string(kind) != "vrf" || rtnl_link_vrf_get_tableid(vrf.get(), &existing) < 0)
      throw InjectError(where + ": the pod has a device of that name that is not a VRF");
    if (existing != table)
      throw InjectError(where + ": the pod's VRF of that name uses table " + std::to_string(existing));
  }
  LinkPtr link(rtnl_link_alloc());
  rtnl_link_set_ifindex(link.get(), ifindex);
  LinkPtr change(rtnl_link_alloc());
  rtnl_link_set_master(change.get(), rtnl_link_get_ifindex(vrf.get()));
  if ((err = rtnl_link_change(sock, link.get(), change.get(), 0)) < 0)
    throw InjectError("enslaving " + if_name + " to " + where + ": " + NlError(err));
  RunInNetns(ns, [] {
    WriteSysctl("/proc/sys/net/ipv4/tcp_l3mdev_accept", 1);
    WriteSysctl("/proc/sys/net/ipv4/udp_l3mdev_accept", 1);
  });
}

}  // namespace dranet::inject
