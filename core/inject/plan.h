#pragma once
// core/inject/plan.h — what a prepared claim hands to its pods.
//
// A ClaimPlan is built at NodePrepareResources (all slow work happens
// there), persisted by core/state, and applied by the NRI hooks:
// RunPodSandbox moves the netdevs, CreateContainer adds device nodes, env
// and mounts, StopPodSandbox/RemovePodSandbox move netdevs back and restore
// their host configuration.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dranet::inject {

// A device node to create in every container of the pod.
struct DeviceNode {
  std::string container_path;  // "/dev/infiniband/uverbs0"
  std::string host_path;       // same path on the node (under the dev root)
  uint32_t major = 0;
  uint32_t minor = 0;
  std::string permissions = "rw";  // device-cgroup access
  uint32_t file_mode = 0666;       // permission bits of the node in the container
  friend bool operator==(const DeviceNode&, const DeviceNode&) = default;
};

struct Mount {
  std::string host_path, container_path;
  std::vector<std::string> options;
  friend bool operator==(const Mount&, const Mount&) = default;
};

struct Route {
  std::string destination;  // CIDR; "0.0.0.0/0" or "::/0" for default
  std::string gateway;      // empty for on-link
  std::string source;       // preferred source; may be empty
  int32_t table = 0;        // 0 = main
  uint32_t metric = 0;
  uint8_t scope = 0;        // RT_SCOPE_*: 0 universe, 253 link
  uint8_t protocol = 0;     // RTPROT_* to install with; 0 = "boot" (iproute2's default)
  friend bool operator==(const Route&, const Route&) = default;
};

// A policy-routing rule: "from <source> to <destination> lookup <table>".
struct Rule {
  uint32_t priority = 0;    // 0 = let the kernel choose
  std::string source;       // CIDR or empty (all)
  std::string destination;  // CIDR or empty (all)
  int32_t table = 0;
  int family = 0;           // AF_INET / AF_INET6; 0 = from source/destination (AF_INET if both empty)
  friend bool operator==(const Rule&, const Rule&) = default;
};

// A permanent neighbour entry on the netdev.
struct Neighbor {
  std::string destination;  // IP address
  std::string lladdr;       // MAC, colon-separated hex
  friend bool operator==(const Neighbor&, const Neighbor&) = default;
};

// Link settings beyond name, MTU and addresses that a claim's config may
// change (interface.hardwareAddr, the BIG TCP sizes, the ARP sysctls,
// ethtool). A NetdevPlan holds what the pod gets; its NetdevHostState holds
// the host's values of exactly those settings, so that teardown puts back
// what the pod changed. Unset = left as it is.
struct LinkSettings {
  std::string mac;  // lowercase colon-separated
  std::optional<uint32_t> gso_max_size, gro_max_size, gso_ipv4_max_size, gro_ipv4_max_size;
  // net.ipv4.conf.<if>.arp_ignore / arp_announce. The kernel resets both to
  // the namespace's defaults whenever the netdev changes namespace.
  std::optional<int32_t> arp_ignore, arp_announce;
  // net.ipv4.conf.<if>.forwarding and net.ipv6.conf.<if>.forwarding (reset
  // on a namespace change too).
  std::optional<bool> forwarding;
  std::map<std::string, bool> ethtool_features;       // kernel names ("tx-tcp-segmentation")
  std::map<std::string, bool> ethtool_private_flags;
  bool empty() const {
    return mac.empty() && !gso_max_size && !gro_max_size && !gso_ipv4_max_size && !gro_ipv4_max_size &&
           !arp_ignore && !arp_announce && !forwarding && ethtool_features.empty() && ethtool_private_flags.empty();
  }
  friend bool operator==(const LinkSettings&, const LinkSettings&) = default;
};

// A DHCP lease obtained at prepare (interface.dhcp): released at unprepare.
struct DhcpLeaseRecord {
  std::string address;     // "192.0.2.10/24"
  std::string server_id;   // the server that granted it
  std::string server_mac;  // where the RELEASE is framed to
  std::string client_mac;  // chaddr of the exchange
  std::string client_id = {};  // option 61 of the exchange (a child's lease); empty: none
  friend bool operator==(const DhcpLeaseRecord&, const DhcpLeaseRecord&) = default;
};

// The host-side state of a netdev, recorded at prepare so that teardown can
// restore exactly what was there.
struct NetdevHostState {
  std::string if_name;
  uint32_t mtu = 0;
  std::vector<std::string> addresses;  // CIDRs
  std::vector<Route> routes;        // harvested at prepare (see host_network.h)
  std::vector<Rule> rules;          // the rules that look up the tables of `routes`
  std::vector<Neighbor> neighbors;  // permanent entries
  bool up = true;  // administratively up on the host
  // The link's MAC at prepare (lowercase, colon-separated; 20 bytes for
  // IPoIB): how the netdev is recognised when its name cannot be trusted (a
  // pod interface of the same name, a kernel rename to devN). Empty in
  // checkpoints written before it was recorded.
  std::string mac;
  // The hardware's permanent address at prepare (IFLA_PERM_ADDRESS), which
  // neither the pod nor a rename changes: when recorded, teardown takes
  // only a link that has it. Empty for links without one (veth) and in
  // checkpoints written before it was recorded.
  std::string permanent_mac = {};
  // The host's values of the settings the plan changes (see LinkSettings).
  LinkSettings settings{};
  friend bool operator==(const NetdevHostState&, const NetdevHostState&) = default;
};

// A netdev to move into the pod's network namespace, with its config there.
struct NetdevPlan {
  std::string device_name;   // the published device, e.g. "pci-0000-8a-00-0"
  std::string host_if_name;  // name on the host, e.g. "gpu0rdma0"
  std::string pod_if_name;   // name inside the pod (default: host name)
  std::optional<uint32_t> mtu;
  std::vector<std::string> addresses;  // CIDRs to set in the pod
  std::vector<Route> routes;           // routes to add in the pod: host's, cloud's, claim's
  std::vector<Rule> rules;             // rules to add in the pod
  std::vector<Neighbor> neighbors;     // permanent neighbours to add in the pod
  LinkSettings settings{};              // MAC, BIG TCP sizes, ARP sysctls, ethtool in the pod
  // interface.vrf: a VRF device of this name and table in the pod holds the
  // netdev; its routes (already in `table` here) go into that table.
  std::string vrf_name;
  uint32_t vrf_table = 0;
  bool disable_ebpf_programs = false;  // detach tc and tcx BPF programs in the pod
  std::optional<DhcpLeaseRecord> dhcp_lease;  // released at unprepare
  std::string rdma_device;             // moved too when rdma_exclusive
  bool rdma_exclusive = false;         // RDMA netns mode exclusive: move the HCA link
  NetdevHostState host_state;          // what to restore on teardown
  // A child interface instead of the netdev (interface.type, and every share
  // of a netdev; docs/sharing.md): the netdev stays on the host, untouched,
  // and a child of it is created in the pod as pod_if_name with the settings
  // above, then deleted at teardown. Empty: the netdev itself moves.
  std::string child_type = {};  // "ipvlan" or "macvlan"
  std::string child_mode = {};  // ipvlan: "l2" "l3" "l3s"; macvlan: "bridge" "private" "vepa"
  friend bool operator==(const NetdevPlan&, const NetdevPlan&) = default;
};

// One allocated device of the claim (a DeviceRequestAllocationResult of ours).
struct AllocatedDevice {
  std::string request;  // request name in the claim
  std::string pool;
  std::string device;   // device name in our slices
  // adminAccess: read-only access beside the device's holder; nothing of the
  // device is moved, configured or opened (docs/operations.md, "Admin access").
  bool admin_access = false;
  // The allocation's shareID (a device allowing multiple allocations,
  // docs/sharing.md): the claim holds one share of the device beside other
  // claims; nothing of it is moved. Empty for a device held alone.
  std::string share_id = {};
  friend bool operator==(const AllocatedDevice&, const AllocatedDevice&) = default;
};

// A profile resolved at prepare (config "profile"): released at unprepare.
struct ProfileRecord {
  std::string device;       // the published device name
  std::string profile;
  std::string config_json;  // the config the provider was asked with
  std::string mac_address, pci_address;  // the device identifiers sent
  friend bool operator==(const ProfileRecord&, const ProfileRecord&) = default;
};

struct ClaimPlan {
  std::string claim_uid;
  std::string claim_namespace;
  std::string claim_name;
  std::vector<std::string> pod_uids;  // status.reservedFor pods on this node
  std::vector<AllocatedDevice> devices;
  std::vector<DeviceNode> device_nodes;
  std::map<std::string, std::string> env;
  std::vector<Mount> mounts;
  std::vector<NetdevPlan> netdevs;
  std::vector<std::string> cdi_device_ids;  // returned to kubelet when CDI is on
  std::vector<ProfileRecord> profiles;      // released at unprepare
  // Device name -> the attributes it published when the claim was prepared,
  // as the JSON object a slice carries (kube::AttributesToJson): published
  // again while the device's netdev sits in a pod (--feature-gates
  // PersistentResourceSliceAttributes).
  std::map<std::string, std::string> published_attributes;
  friend bool operator==(const ClaimPlan&, const ClaimPlan&) = default;
};

}  // namespace dranet::inject
