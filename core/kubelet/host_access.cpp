#include "kubelet/host_access.h"

#include "inject/link_settings.h"
#include "inject/netlink_socket.h"
#include "inject/netns.h"

namespace dranet::kubelet {

HostAccess LiveHostAccess(HostNetworkReader reader, std::shared_ptr<ProfileProvider> profiles) {
  HostAccess host(std::move(reader));
  host.profiles = std::move(profiles);
  host.read_ethtool = [](const std::string& if_name) {
    inject::EthtoolSocket ethtool(inject::OpenNetns("/proc/self/ns/net"));
    return EthtoolState{ethtool.ReadFeatures(if_name), ethtool.ReadPrivateFlags(if_name)};
  };
  host.read_ipv4_conf = [](const std::string& if_name, const std::string& key) {
    return inject::ReadIpv4Conf(if_name, key);
  };
  host.vrf_unsupported = [] {
    const auto ns = inject::OpenNetns("/proc/self/ns/net");
    const auto sock = inject::NetlinkSocketIn(ns, NETLINK_ROUTE);
    return inject::VrfUnsupportedReason(sock.get());
  };
  host.request_dhcp = [](const std::string& if_name, std::stop_token stop, const std::string& client_id) {
    return inject::RequestDhcpLease(if_name, kDhcpTimeout, stop, client_id);
  };
  host.release_dhcp = [](const std::string& if_name, const inject::DhcpLease& lease, std::stop_token stop) {
    inject::ReleaseDhcpLease(if_name, lease, stop);
  };
  return host;
}

}  // namespace dranet::kubelet
