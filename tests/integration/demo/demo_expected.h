#pragma once
// tests/integration/demo/demo_expected.h — the oracle of `dranet-demo --check`.
//
// What each pod must receive on a node is written by hand, per example
// directory, in packaging/examples/<node>/expected.yaml, from the snapshot's
// own files (sysfs, netlink.json, metadata). The check compares what the pods
// really got against that file only: never against the demo's in-process
// discovery, which is the daemon's own code and would agree with any bug in
// it. The file (Kubernetes-shaped, as every YAML file under packaging/ is,
// read with PyYAML by the packaging tests; no anchors):
//
//   apiVersion: demo.dra.net/v1
//   kind: ExpectedResults
//   metadata: {name: <example directory>}
//   spec:
//     node: <the snapshot's node name>
//     netdevs:                           # the netdevs the claims name
//       <name>: {mac: …, mtu: …, up: <bool>, addresses: [<ip/len>, …], routes: [<`ip route` line>, …]}
//     claims:
//       - template: <ResourceClaimTemplate name>
//         devices: {<path>: "c <major>:<minor>", …}  # exactly the container's device nodes
//         env: {<key>: <value>, …}                    # exactly the container's env adjustments
//         netdevs: [<name>, …]                        # exactly the pod's netdevs (loopback aside)
//         alignment:                                   # optional without GPUs
//           gpus: {<GPU slice device>: <NUMA node>, …}
//           nics: {<rdmaDevice, else ifName>: <NUMA node>, …}
//           aligned: <bool>         # required with gpus: GPUs and NICs cover the same NUMA nodes
//           pcieRoot: <pciDDDD:BB>  # optional: every GPU and NIC is published under it
//
// Unknown keys are errors, so that a misspelt expectation cannot pass by
// being ignored.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inventory/netlink_facts.h"

namespace dranet::demo {

struct ExpectedNetdev {
  std::string name;
  std::string mac;  // lowercase, colon-separated; empty: not checked
  uint32_t mtu = 0;
  bool up = true;
  std::vector<std::string> addresses;  // every address but IPv6 link-local
  std::vector<std::string> routes;     // every route through the netdev but the kernel's own (RoutesThrough)
};

struct ExpectedAlignment {
  std::map<std::string, int64_t> gpus;
  std::map<std::string, int64_t> nics;
  std::optional<bool> aligned;
  std::string pcie_root;
};

struct ExpectedClaim {
  std::string template_name;
  std::map<std::string, std::string> devices;  // "/dev/infiniband/rdma_cm" -> "c 10:58"
  std::map<std::string, std::string> env;
  std::map<std::string, ExpectedNetdev> netdevs;
  std::optional<ExpectedAlignment> alignment;
};

struct ExpectedResults {
  std::filesystem::path source;
  std::string node;
  std::vector<ExpectedClaim> claims;
  const ExpectedClaim* Find(const std::string& template_name) const;
};

// Throws std::runtime_error naming the file and the offending key.
ExpectedResults ReadExpectedResults(const std::filesystem::path& file);

// Every route through `ifindex` as `ip route` prints it, one next hop each,
// except the kernel's own: table local and IPv6 `proto kernel` routes.
std::vector<std::string> RoutesThrough(const inventory::NetlinkFacts& facts, int ifindex, const std::string& name);

// How netdev `e.name` in `facts` differs from `e` (empty when it does not).
std::vector<std::string> NetdevDifferences(const inventory::NetlinkFacts& facts, const ExpectedNetdev& e);

// How `got` differs from `want`, one line per key ("missing K (V)",
// "unexpected K (V)", "K is V, expected W"), each prefixed with `what`.
std::vector<std::string> MapDifferences(const std::string& what, const std::map<std::string, std::string>& want,
                                        const std::map<std::string, std::string>& got);

}  // namespace dranet::demo
