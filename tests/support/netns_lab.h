#pragma once
// tests/support/netns_lab.h — real network namespaces standing in for a
// node and its pods (dranet-demo, the kill -9 matrix on A4).
//
// As root with `ip` available, dranet-demo plays a node with real netdevs:
//   * a private "node" network namespace (dranet-demo-node-<pid>) holding,
//     for every netdev of the snapshot that the claims can allocate, a veth
//     named like the snapshot's netdev (gpu0rdma0; peer p-<n>) with the
//     snapshot's MAC, MTU, addresses, routes (link-scope first), the rules
//     that look those routes' tables up, and permanent neighbours;
//   * the demo's main thread enters the node namespace before the fakes and
//     dranetd start, so the fake API server's loopback socket and dranetd
//     (a child) live there, and dranetd's moves act on the stand-ins;
//   * one network namespace per pod (dranet-demo-pod-<pid>-<n>), handed to
//     the fake runtime as /var/run/netns/<name>.
// Everything is removed at the end, on exceptions (RAII), on SIGINT/SIGTERM
// (a signal thread) and, for namespaces of a demo that was killed outright,
// at the next start (RemoveStaleNamespaces). Deleting a namespace destroys
// the veths in it (both ends), so nothing is left on the host.
#include <sys/types.h>

#include <string>
#include <vector>

#include "base/log.h"
#include "inventory/netlink_facts.h"

namespace dranet::netlab {

struct CommandResult {
  int rc = -1;
  std::string output;  // stdout and stderr
};
// Runs argv[0] (searched on PATH) with argv, waits, captures its output.
CommandResult RunCommand(const std::vector<std::string>& argv);

// Without root: moves the (still single-threaded) process into a user
// namespace and a network namespace of its own, where it is root with every
// capability but can change nothing on the host — as rootless containers do.
// dranetd, a child, shares both, so its capability check passes and it can
// open its "host" network namespace; the fake API server's loopback is
// brought up there. Returns "" on success, else why not (unprivileged user
// namespaces disabled, ...). Call before any thread exists.
std::string EnterRootlessNamespaces();
// True after EnterRootlessNamespaces() succeeded.
bool Rootless();

// Why the netns part cannot run here ("not root", "no `ip` command");
// empty when it can.
std::string NetnsUnavailableReason();

// Deletes dranet-demo-* network namespaces whose demo process is gone;
// returns their names.
std::vector<std::string> RemoveStaleNamespaces();

// Termination signals: BlockTerminationSignals() first thing in main (before
// any thread exists), then StartSignalCleanup(): on SIGINT/SIGTERM/SIGHUP a
// thread stops dranetd and deletes every namespace still tracked, then exits.
void BlockTerminationSignals();
void StartSignalCleanup();
void TrackDaemon(pid_t pid);  // -1: none

// The netdev facts of the network namespace at `netns_path` (a thread enters
// it and dumps rtnetlink there).
inventory::NetlinkFacts ReadFactsIn(const std::string& netns_path, Logger& log);

// The routes of `ifindex` that dranetd carries along with a netdev (the
// rule of inject/host_network.h): every table but local, unicast, no default
// routes, no IPv6 link-local destinations or IPv6 `proto kernel` routes. Each
// returned route keeps only its next hop through `ifindex`. Only used to give
// a stand-in the snapshot's routes; what a pod must receive comes from the
// hand-written expected results (demo_expected.h), never from this rule.
std::vector<inventory::RouteFacts> CarriedRoutes(const inventory::NetlinkFacts& facts, int ifindex);

// "192.168.1.0/24 via 192.168.1.1 dev gpu0rdma0 proto dhcp metric 100", as
// `ip route` prints it (table, scope, src when not the defaults).
std::string FormatRoute(const inventory::RouteFacts& route, const std::string& dev);

class NetnsLab {
 public:
  // Creates the node namespace (loopback up). Throws std::runtime_error
  // with `ip`'s message when it cannot.
  NetnsLab();
  // Returns the calling thread (the main thread) to the namespace it came
  // from, then deletes the pod namespaces and the node namespace.
  ~NetnsLab();
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  const std::string& node_netns() const { return node_; }
  // A veth standing in for the snapshot's netdev `if_name` in the node
  // namespace. Throws std::runtime_error naming the failing `ip` command.
  void AddStandIn(const inventory::NetlinkFacts& snapshot, const std::string& if_name);
  // Moves the calling thread into the node namespace (for the rest of the
  // run: the destructor brings it back).
  void EnterNode();
  // A fresh pod namespace (loopback up); returns its name.
  std::string AddPod();
  void RemovePod(const std::string& name);
  static std::string PathOf(const std::string& name);

 private:
  std::string prefix_;
  std::string node_;
  std::vector<std::string> pods_;
  int pod_counter_ = 0;
  int peer_counter_ = 0;
  int original_netns_fd_ = -1;
};

}  // namespace dranet::netlab
