#pragma once
// core/daemon/daemon.h — dranetd's wiring: which components run, in which
// order, and what each reports to metrics and health.
//
// Start order: metrics/health endpoint → plugins → prepared-claims state →
// discovery monitor (first discovery) → ResourceSlice publisher → kubelet
// DRA plugin → NRI plugin. On SIGTERM: stop taking prepares (kubelet plugin
// sockets removed), stop NRI after in-flight hooks, stop discovery and the
// publisher; the state stays on disk for the next start.
// Stop order is the reverse. Every component is optional so the daemon runs
// on a snapshot without a cluster (`--publish=false`) as well as in one.
#include <chrono>
#include <string>
#include <vector>

#include "base/log.h"
#include "plugins/plugin_flags.h"

namespace dranet::daemon {

struct DaemonOptions {
  std::string host_root = "/";
  std::string node_name;
  std::string driver_name = "dra.net";
  std::string kubeconfig;  // empty: in-cluster configuration
  bool publish = true;     // publish ResourceSlices to the API server
  // The resource.k8s.io version spoken: "auto" (the newest the API server
  // serves of v1, v1beta2, v1beta1), or one of them.
  std::string resource_api_version = "auto";
  bool move_ib_interfaces = true;  // false: IPoIB netdevs skipped, HCAs published IB-only
  std::string filter{"<dranet default>"};  // publish filter (CEL, DRANET's dialect); "" = none
  // Devices several claims may hold at once (cel/share_policy.h): a CEL
  // device selector, "" for none; each has `device_shares` shares. Needs
  // Kubernetes 1.36+ and the shared RDMA netns mode.
  std::string shared_devices;
  int64_t device_shares = 8;
  std::string metrics_address = ":9177";
  // Kubelet DRA plugin (needs the API server to read claims).
  bool kubelet_plugin = true;
  std::string kubelet_root_dir = "/var/lib/kubelet";
  std::string state_dir = "/var/run/dranet";
  bool cdi = false;                      // CDI strategy: spec files + CDI ids for kubelet
  std::string cdi_dir = "/var/run/cdi";
  bool rdma_exclusive = false;  // RDMA netns mode exclusive: move HCA links with netdevs
  // A moved netdev takes its host routes, rules and permanent neighbours
  // into the pod (restored on the host at teardown either way).
  bool copy_host_routes = true;
  // Where prepare records a netdev's host state (what teardown restores):
  // "auto" — the snapshot's netlink.json under a snapshot --host-root, the
  // kernel otherwise; "live" — always the kernel (a snapshot with real
  // stand-in netdevs); "snapshot" — always the snapshot.
  std::string host_network_source = "auto";
  // Who resolves a claim config's "profile" (DRANET's flags): "cloud" (the
  // plugins with the ABI 1.2 profile capability), "webhook" (DRANET's
  // webhook protocol at webhook_url) or "none".
  std::string profile_provider = "cloud";
  std::string webhook_url;
  // Device health (core/health): the kubelet's health stream, /metrics.
  bool device_health = true;
  // An unhealthy device is published with a NoSchedule taint (needs
  // device_health and publish; left out on an API server that drops taints).
  bool device_taints = true;
  // NRI plugin (device nodes, env, netdev moves at pod start).
  bool nri = true;
  std::string nri_socket = "/var/run/nri/nri.sock";
  // Rediscovery pacing (DRANET's --inventory-*-poll-* flags): at least every
  // resync_period; events rediscover at most `poll_burst` times in a row,
  // then once per `min_poll_interval`.
  std::chrono::milliseconds resync_period{std::chrono::minutes(1)};
  std::chrono::milliseconds min_poll_interval{std::chrono::seconds(2)};
  int poll_burst = 5;
  // Feature gate PersistentResourceSliceAttributes: an allocated device keeps
  // publishing the attributes it had at prepare while its netdev sits in a
  // pod (instead of vanishing from the slice or losing ifName, MAC, …).
  bool persistent_slice_attributes = false;
  // Feature gate DRAListTypeAttributes: resource.kubernetes.io/numaNode is
  // published as an int list (inventory::DiscoveryOptions::numa_node_list).
  bool list_type_attributes = false;
  // This instance's pod UID (the DaemonSet pod's, from the downward API):
  // kubelet sockets named per instance, so that a rollout with surge runs
  // the old and the new dranetd side by side (kubelet 1.33+). Empty: one
  // instance per node, the fixed socket names.
  std::string pod_uid;
  // The node's live connections (NRI, the status port) passed from an old
  // instance to its successor over <state_dir>/handover.sock (handover.h).
  bool handover = true;
  bool once = false;  // discover, publish once (when enabled), print the device count, exit
  plugins::PluginFlags plugins;
};

// Runs until SIGTERM/SIGINT (or once). Returns the process exit code.
// The caller must have blocked SIGTERM and SIGINT in every thread.
int RunDaemon(const DaemonOptions& options, Logger& logger);

}  // namespace dranet::daemon
