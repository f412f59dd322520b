#include "inventory/netlink_event_filter.h"

#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <cstring>

#include "inventory/netlink_facts.h"

namespace dranet::inventory {
namespace {

std::string StringAttr(const nlattr* attr) {
  if (!attr) return {};
  const auto* data = static_cast<const char*>(nla_data(attr));
  return std::string(data, strnlen(data, static_cast<std::size_t>(nla_len(attr))));
}

std::string BytesAttr(const nlattr* attr) {
  if (!attr) return {};
  return std::string(static_cast<const char*>(nla_data(attr)), static_cast<std::size_t>(nla_len(attr)));
}

template <typename T>
T ScalarAttr(const nlattr* attr) {
  if (!attr || nla_len(attr) < static_cast<int>(sizeof(T))) return T{};
  T value;
  std::memcpy(&value, nla_data(attr), sizeof(T));
  return value;
}

// The link's kind from IFLA_LINKINFO/IFLA_INFO_KIND; empty for hardware.
std::string KindOf(nlattr* linkinfo) {
  if (!linkinfo) return {};
  nlattr* info[IFLA_INFO_MAX + 1] = {};
  if (nla_parse_nested(info, IFLA_INFO_MAX, linkinfo, nullptr) < 0) return {};
  return StringAttr(info[IFLA_INFO_KIND]);
}

}  // namespace

NetlinkEventFilter::NetlinkEventFilter(std::set<std::string> ignored_link_kinds)
    : ignored_link_kinds_(std::move(ignored_link_kinds)) {}

bool NetlinkEventFilter::Relevant(const nlmsghdr* message) {
  switch (message->nlmsg_type) {
    case RTM_NEWLINK: return LinkChanged(message);
    case RTM_DELLINK: return LinkDeleted(message);
    case RTM_NEWADDR:
    case RTM_DELADDR: return AddressChanged(message);
    case RTM_NEWROUTE:
    case RTM_DELROUTE: return RouteChanged(message);
    case NLMSG_DONE: return false;  // end of the start-up link dump
    default: last_reason_ = "rtnetlink message type " + std::to_string(message->nlmsg_type); return true;
  }
}

bool NetlinkEventFilter::LinkChanged(const nlmsghdr* message) {
  auto* header = const_cast<nlmsghdr*>(message);
  if (!nlmsg_valid_hdr(header, sizeof(ifinfomsg))) return true;
  const auto* info = static_cast<const ifinfomsg*>(nlmsg_data(header));
  if (info->ifi_family == AF_BRIDGE) return false;  // bridge-port state, not the link's facts
  nlattr* attrs[IFLA_MAX + 1] = {};
  if (nlmsg_parse(header, sizeof(ifinfomsg), attrs, IFLA_MAX, nullptr) < 0) return true;

  LinkFacts facts;
  facts.name = StringAttr(attrs[IFLA_IFNAME]);
  facts.kind = KindOf(attrs[IFLA_LINKINFO]);
  facts.mac = BytesAttr(attrs[IFLA_ADDRESS]);
  facts.alias = StringAttr(attrs[IFLA_IFALIAS]);
  facts.mtu = ScalarAttr<std::uint32_t>(attrs[IFLA_MTU]);
  facts.flags = info->ifi_flags & (IFF_UP | IFF_LOOPBACK);
  facts.arp_type = info->ifi_type;
  facts.operstate = ScalarAttr<std::uint8_t>(attrs[IFLA_OPERSTATE]);
  facts.master = ScalarAttr<int>(attrs[IFLA_MASTER]);
  facts.parent = ScalarAttr<int>(attrs[IFLA_LINK]);

  const int ifindex = info->ifi_index;
  if (!facts.kind.empty() && ignored_link_kinds_.count(facts.kind)) {
    ignored_.insert(ifindex);
    links_[ifindex] = std::move(facts);
    return false;
  }
  ignored_.erase(ifindex);
  auto [it, inserted] = links_.try_emplace(ifindex, facts);
  if (!inserted && it->second == facts) return false;
  last_reason_ = "link " + std::to_string(ifindex) + " " + facts.name + (inserted ? " appeared" : " changed");
  it->second = std::move(facts);
  return true;
}

bool NetlinkEventFilter::LinkDeleted(const nlmsghdr* message) {
  auto* header = const_cast<nlmsghdr*>(message);
  if (!nlmsg_valid_hdr(header, sizeof(ifinfomsg))) return true;
  const auto* info = static_cast<const ifinfomsg*>(nlmsg_data(header));
  if (info->ifi_family == AF_BRIDGE) return false;  // a port left a bridge; the link stays
  const int ifindex = info->ifi_index;
  const bool ignored = ignored_.erase(ifindex) > 0;
  links_.erase(ifindex);
  if (!ignored) last_reason_ = "link " + std::to_string(ifindex) + " removed";
  return !ignored;
}

bool NetlinkEventFilter::AddressChanged(const nlmsghdr* message) {
  auto* header = const_cast<nlmsghdr*>(message);
  if (!nlmsg_valid_hdr(header, sizeof(ifaddrmsg))) return true;
  const auto* info = static_cast<const ifaddrmsg*>(nlmsg_data(header));
  if (ignored_.count(static_cast<int>(info->ifa_index))) return false;
  nlattr* attrs[IFA_MAX + 1] = {};
  if (nlmsg_parse(header, sizeof(ifaddrmsg), attrs, IFA_MAX, nullptr) < 0) return true;
  // IFA_LOCAL is the interface's own address on point-to-point links.
  const nlattr* address = attrs[IFA_LOCAL] ? attrs[IFA_LOCAL] : attrs[IFA_ADDRESS];
  const int expected = info->ifa_family == AF_INET ? 4 : info->ifa_family == AF_INET6 ? 16 : 0;
  if (!address || expected == 0 || nla_len(address) != expected) return true;
  if (!IsGlobalUnicast(info->ifa_family, static_cast<const unsigned char*>(nla_data(address)))) return false;
  last_reason_ = "global address on link " + std::to_string(info->ifa_index);
  return true;
}

bool NetlinkEventFilter::RouteChanged(const nlmsghdr* message) {
  auto* header = const_cast<nlmsghdr*>(message);
  if (!nlmsg_valid_hdr(header, sizeof(rtmsg))) return true;
  const auto* route = static_cast<const rtmsg*>(nlmsg_data(header));
  if (route->rtm_dst_len != 0) return false;
  nlattr* attrs[RTA_MAX + 1] = {};
  if (nlmsg_parse(header, sizeof(rtmsg), attrs, RTA_MAX, nullptr) < 0) return true;
  const std::uint32_t table = attrs[RTA_TABLE] ? ScalarAttr<std::uint32_t>(attrs[RTA_TABLE]) : route->rtm_table;
  if (table != RT_TABLE_MAIN) return false;
  last_reason_ = "default route";
  return true;
}

}  // namespace dranet::inventory
