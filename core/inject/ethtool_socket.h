#pragma once
// core/inject/ethtool_socket.h — reading and changing a netdev's ethtool
// features and private flags over the "ethtool" generic netlink family, as
// `ethtool -k/-K` and `ethtool --show-priv-flags/--set-priv-flags` do: the
// claim fields ethtool.features and ethtool.privateFlags.
//
// Messages are ETHTOOL_MSG_FEATURES_GET/SET and ETHTOOL_MSG_PRIVFLAGS_GET/SET
// (Linux include/uapi/linux/ethtool_netlink.h, Documentation/networking/
// ethtool-netlink.rst), built on libnl-genl. Bitsets travel in the verbose
// form, by bit name, so no kernel's bit numbering is assumed. Errors carry the
// kernel's extended-ack text ("no device matches name").
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <map>
#include <set>
#include <string>

#include "inject/netlink_socket.h"
#include "inject/netns.h"

namespace dranet::inject {

// A netdev's features, by kernel name (ETHTOOL_MSG_FEATURES_GET).
struct EthtoolFeatures {
  std::set<std::string> known;       // every feature the kernel names for the netdev (HW's mask)
  std::set<std::string> changeable;  // ETHTOOL_A_FEATURES_HW: those `ethtool -K` may toggle
  std::set<std::string> wanted;      // ETHTOOL_A_FEATURES_WANTED: on as requested (what to restore)
  std::set<std::string> active;      // ETHTOOL_A_FEATURES_ACTIVE: on now (dependencies may differ from wanted)
};

// A generic netlink socket bound to the ethtool family inside one network
// namespace; interfaces are named as that namespace knows them. One thread at
// a time; each call is one request and its answer.
class EthtoolSocket {
 public:
  // Opens the socket inside `ns` (borrowed for the call) and resolves the
  // family. Throws InjectError when the kernel has no ethtool netlink.
  explicit EthtoolSocket(const NetnsHandle& ns);

  EthtoolFeatures ReadFeatures(const std::string& if_name);

  // Private flag name -> on. Empty for a netdev whose driver has none (the
  // kernel answers EOPNOTSUPP then).
  std::map<std::string, bool> ReadPrivateFlags(const std::string& if_name);

  // Sets the kernel-named `features` (see ResolveFeatureNames). Throws
  // InjectError naming the interface when the kernel refuses the request, and
  // when a feature does not end with the value asked for (the driver or a
  // dependency kept it: tx-tcp-segmentation cannot be on without checksum
  // offload).
  void SetFeatures(const std::string& if_name, const std::map<std::string, bool>& features);

  // Sets private flags. Reads them first, so that a name the netdev lacks is
  // refused with the list of those it has (CheckPrivateFlagNames). Throws
  // InjectError naming the interface.
  void SetPrivateFlags(const std::string& if_name, const std::map<std::string, bool>& flags);

 private:
  NlSockPtr sock_;
  int family_ = 0;
};

// Verbose-form bitset codec, exposed for tests.
// Appends nested attribute `attr_type` holding `bits` by name, each with its
// value, under a mask (only these bits are touched). Throws InjectError when
// `msg` has no room.
void PutEthtoolBitset(nl_msg* msg, int attr_type, const std::map<std::string, bool>& bits);
// Bit name -> value of a bitset attribute; in a list-form bitset
// (ETHTOOL_A_BITSET_NOMASK) every listed bit is on. Throws InjectError on a
// compact bitset or a malformed one.
std::map<std::string, bool> ParseEthtoolBitset(const nlattr* bitset);

}  // namespace dranet::inject
