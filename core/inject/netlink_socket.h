#pragma once
// core/inject/netlink_socket.h — owned libnl objects and a netlink socket
// bound to a chosen network namespace. Internal to core/inject.
#include <netlink/addr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <memory>
#include <string>

#include "inject/netns.h"

namespace dranet::inject {

// unique_ptr deleter calling a libnl release function.
template <typename T, auto Release>
struct NlRelease {
  void operator()(T* p) const { Release(p); }
};
using NlSockPtr = std::unique_ptr<nl_sock, NlRelease<nl_sock, nl_socket_free>>;
using NlMsgPtr = std::unique_ptr<nl_msg, NlRelease<nl_msg, nlmsg_free>>;
using NlAddrPtr = std::unique_ptr<nl_addr, NlRelease<nl_addr, nl_addr_put>>;

// A connected libnl socket of `protocol` (NETLINK_ROUTE, NETLINK_RDMA)
// created inside `ns`. Throws InjectError.
NlSockPtr NetlinkSocketIn(const NetnsHandle& ns, int protocol);

// libnl error text for a negative libnl return code.
std::string NlError(int err);

}  // namespace dranet::inject
