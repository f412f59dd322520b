#include "inject/netlink_socket.h"

#include <netlink/errno.h>

#include "inject/pod_netns_applier.h"

namespace dranet::inject {

std::string NlError(int err) { return nl_geterror(err); }

NlSockPtr NetlinkSocketIn(const NetnsHandle& ns, int protocol) {
  NlSockPtr sock;
  RunInNetns(ns, [&] {
    NlSockPtr s(nl_socket_alloc());
    if (!s) throw InjectError("cannot allocate a netlink socket");
    if (const int err = nl_connect(s.get(), protocol); err < 0) {
      throw InjectError("cannot open netlink socket (protocol " + std::to_string(protocol) +
                        "): " + NlError(err));
    }
    sock = std::move(s);
  });
  return sock;
}

}  // namespace dranet::inject
