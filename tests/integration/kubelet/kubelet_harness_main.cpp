// kubelet-harness — hosts KubeletPlugin over the real sockets, the way dranetd
// does, with the kill -9 fault points compiled in (DRANET_FAULT=<point>).
//
//   kubelet-harness --kubelet-root-dir D --state-dir S --host-root SNAPSHOT
//                   --api-server http://127.0.0.1:PORT --node-name NODE  (one command line)
//
// Serves until SIGTERM/SIGINT. Used by the kill -9 tests and the bench.
#include <signal.h>

#include <iostream>

#include <CLI/CLI.hpp>

#include "base/log.h"
#include "inventory/inventory.h"
#include "kube/api_client.h"
#include "kube/resource_claim.h"
#include "kubelet/kubelet_plugin.h"
#include "state/checkpoint_store.h"

int main(int argc, char** argv) {
  CLI::App app{"kubelet-harness — KubeletPlugin on real sockets, for tests"};
  std::string kubelet_root, state_dir, host_root = "/", procfs_root = "/proc", api_server, node_name;
  int verbosity = 0;
  app.add_option("--kubelet-root-dir", kubelet_root)->required();
  app.add_option("--state-dir", state_dir)->required();
  app.add_option("--host-root", host_root);
  app.add_option("--procfs-root", procfs_root);
  app.add_option("--api-server", api_server)->required();
  app.add_option("--node-name", node_name)->required();
  app.add_option("-v", verbosity);
  CLI11_PARSE(app, argc, argv);

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  dranet::Logger log(std::cerr, dranet::Logger::Format::kText, verbosity);
  try {
    dranet::state::CheckpointOptions state_options;
    state_options.state_dir = state_dir;
    state_options.procfs_root = procfs_root;
    dranet::state::CheckpointStore store(state_options, log);

    dranet::kube::ClusterConfig cluster;
    cluster.server = api_server;
    dranet::kube::ApiClient client(cluster, log);
    dranet::kube::ResourceClaimReader reader(client, log);

    dranet::inventory::DiscoveryOptions discovery;
    discovery.host_root = host_root;
    auto devices = std::make_shared<const std::vector<dranet::inventory::Device>>(
        dranet::inventory::Discover(discovery, log));

    dranet::kubelet::KubeletPluginOptions options;
    options.node_name = node_name;
    options.kubelet_root_dir = kubelet_root;
    options.host_root = host_root;
    options.socket_check_interval = std::chrono::milliseconds(200);
    dranet::kubelet::KubeletPlugin plugin(
        options, [devices] { return devices; }, dranet::kubelet::ClaimLookupFrom(reader), store, nullptr, log);
    plugin.Start();
    int sig = 0;
    sigwait(&set, &sig);
    plugin.Stop();
  } catch (const std::exception& e) {
    log.Error("kubelet-harness failed", {{"error", e.what()}});
    return 1;
  }
  return 0;
}
