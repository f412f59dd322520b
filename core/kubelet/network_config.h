#pragma once
// core/kubelet/network_config.h — DRANET's opaque claim configuration
// (NetworkConfig, kubernetes-sigs/dranet pkg/apis/types.go), parsed strictly.
//
// A claim passes it as status.allocation.devices.config[].opaque.parameters
// with opaque.driver == "dra.net". Parsing rejects unknown fields, wrong
// types, out-of-range values and oversized input, with a message that names
// the JSON path ("interface.mtu: must be at least 68"). Callers prefix the
// claim and the config entry.
//
// Several configs can apply to one device (class configs, then claim
// configs, then what a profile provider resolved). MergeNetworkConfigs
// deep-merges them in that order: objects key by key, scalars replaced by
// the later config, lists appended and de-duplicated (addresses and rules by
// value, routes by destination + table, neighbours by destination; the later
// entry wins in the earlier one's place). The merged result is validated
// again (cross-field rules such as dhcp vs addresses). Errors name every
// problem found, not only the first.
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dranet::kubelet {

// Caps beyond the API server's own 10 KiB limit on opaque parameters.
inline constexpr std::size_t kMaxConfigBytes = 10 * 1024;
inline constexpr std::size_t kMaxConfigListItems = 64;  // routes, rules, neighbors, ethtool keys
inline constexpr std::size_t kMaxConfigAddresses = 16;  // as networkData.ips
inline constexpr std::size_t kMaxConfigStringBytes = 256;

// A config that cannot be used; what() names the field.
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct VrfConfig {
  std::string name;
  std::optional<int64_t> table;
};

struct InterfaceConfig {
  std::string name;                    // pod-side name; empty keeps the host name
  std::vector<std::string> addresses;  // CIDRs
  std::optional<bool> dhcp;
  std::optional<int32_t> mtu;
  std::optional<std::string> hardware_addr;
  std::optional<int32_t> gso_max_size, gro_max_size, gso_ipv4_max_size, gro_ipv4_max_size;
  std::optional<bool> disable_ebpf_programs;
  std::optional<bool> forwarding;
  std::optional<int32_t> arp_ignore, arp_announce;
  std::optional<VrfConfig> vrf;
  // How the device reaches the pod (DRANET's interface.type): "passthrough"
  // moves the netdev itself; "ipvlan" and "macvlan" leave it on the host and
  // give the pod a child interface of it (docs/sharing.md). Unset: a share
  // gets an IPVLAN child, a device held alone moves.
  std::optional<std::string> type;
  std::optional<std::string> ipvlan_mode;   // interface.ipvlan.mode: "l2" (default), "l3", "l3s"
  std::optional<std::string> macvlan_mode;  // interface.macvlan.mode: "bridge" (default), "private", "vepa"
  // interface.addressing: "static" (addresses as given, else the host's),
  // "dhcp" (as dhcp: true), "unnumbered" (no address at all).
  std::optional<std::string> addressing;
};

struct RouteConfig {
  std::string destination;  // CIDR
  std::string gateway;      // IP; empty only with scope link
  std::string source;       // IP; may be empty
  uint8_t scope = 0;        // 0 universe, 253 link
  int64_t table = 0;        // 0 = main
};

struct RuleConfig {
  int64_t priority = 0;
  std::string source, destination;  // CIDRs; may be empty
  int64_t table = 0;
};

struct NeighborConfig {
  std::string destination;    // IP
  std::string hardware_addr;  // MAC
};

struct EthtoolConfig {
  std::map<std::string, bool> features;
  std::map<std::string, bool> private_flags;
};

struct NetworkConfig {
  std::string profile;
  InterfaceConfig interface;
  std::vector<RouteConfig> routes;
  std::vector<RuleConfig> rules;
  std::vector<NeighborConfig> neighbors;
  std::optional<EthtoolConfig> ethtool;
  // JSON paths of the fields the config sets, e.g. "interface.mtu", "routes"
  // (used to tell a user which field an RDMA-only device cannot take).
  std::vector<std::string> set_fields;
};

// Parses and validates one NetworkConfig JSON object. Throws ConfigError.
NetworkConfig ParseNetworkConfig(std::string_view json);

// Deep-merges JSON objects in order (later wins; see above) and parses the
// result. Each input is validated on its own first, so an error names the
// input's index in `label_of`'s terms. Throws ConfigError.
NetworkConfig MergeNetworkConfigs(const std::vector<std::string>& json_objects,
                                  const std::vector<std::string>& labels);

struct MergedNetworkConfig {
  NetworkConfig config;
  std::string json;  // the merged object, as a profile provider is sent it
};
// MergeNetworkConfigs, also returning the merged JSON object.
MergedNetworkConfig MergeNetworkConfigsWithJson(const std::vector<std::string>& json_objects,
                                                const std::vector<std::string>& labels);

// The fields `config` sets, as a message names them: "routes", not every
// "routes[0].gateway"; "ethtool", not each key; the most specific field
// otherwise ("interface.vrf.name", not "interface" and "interface.vrf").
std::vector<std::string> FieldsSet(const NetworkConfig& config);

// Fields an RDMA-only device (no netdev) accepts: everything else set in
// `config` is returned, so the caller can reject the claim naming them.
std::vector<std::string> FieldsNotForRdmaOnly(const NetworkConfig& config);

// What `config` sets that a child interface of `child_type` ("ipvlan",
// "macvlan") cannot have, one sentence each: a MAC of its own (ipvlan),
// ethtool settings, BPF detaching, DHCP (macvlan: its MAC is the kernel's
// choice at pod start; an IPVLAN child's lease is asked for on its parent).
std::vector<std::string> ProblemsForChild(const NetworkConfig& config, const std::string& child_type);

}  // namespace dranet::kubelet
