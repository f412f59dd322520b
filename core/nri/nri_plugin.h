#pragma once
// core/nri/nri_plugin.h — dranet's NRI plugin: the front door of core/nri.
//
// Connects to the container runtime's NRI socket as plugin "dra.net" index
// "00", registers, and then answers the runtime's pod and container events
// (see plugin_service.h for what each does) with the prepared claims of
// this node. When the runtime goes away (restart, Shutdown, a hook that
// overran the runtime's deadline), the plugin reconnects forever with
// jittered exponential backoff; nothing here ever exits the process.
//
// Underneath: ttrpc_frame.h (ttRPC framing), mux_frame.h (the NRI
// multiplexer), ttrpc_session.h (one socket, both directions), with
// protobuf messages from proto/nri.proto and proto/ttrpc.proto.
//
// Threads: one named "nri-client" (connect/backoff loop), one reader per
// live connection ("nri-conn"), which runs the hooks, and "nri-netns" which
// returns netdevs from pod namespaces the runtime deleted silently
// (PluginService::ReleaseVanishedPods), connected or not: every
// netns_check_period while a pod's netdevs are kept, never while none are.
// All methods are thread-safe.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/log.h"
#include "base/metrics.h"
#include "inject/pod_netns_applier.h"
#include "nri/plugin_service.h"
#include "nri/ttrpc_session.h"
#include "state/prepared_claims.h"

namespace dranet::nri {

struct NriPluginOptions {
  std::string socket_path = "/var/run/nri/nri.sock";  // --nri-socket
  std::string plugin_name = "dra.net";                // [a-zA-Z0-9_.+-]+
  std::string plugin_index = "00";                    // two digits; order among plugins
  // Reconnect backoff: doubles from initial up to max, each wait jittered
  // to 50–100 % of its value; back to initial after a registered session.
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{10000};
  // How long RegisterPlugin may take (the runtime's own limit is 5 s).
  std::chrono::milliseconds registration_timeout{5000};
  // How often pods' kept network namespaces are checked: a namespace the
  // runtime deleted without StopPodSandbox gets its netdevs back home.
  std::chrono::milliseconds netns_check_period{2000};
  // Told about every request the runtime sends (PluginService::SetOperationObserver).
  OperationObserver observer;
  // Told about containers found running without their devices (Synchronize).
  BypassReporter bypass_reporter;
  // Told whether each pod's netdevs were moved (claim status, Events).
  PodNetworkReporter network_reporter;
  // Told when a pod's netdevs could not be restored at teardown (Events).
  PodNetworkReporter restore_failure_reporter;
  // Called (no lock held) whenever connected() or the service's
  // bypassed_containers() may have changed: readiness is event-driven.
  std::function<void()> on_state_change;
  // Called (no lock held) when pods may hold netdevs that were not held
  // before: one attached, or adopted at Synchronize after a restart.
  std::function<void()> on_pods_held;
};

// A live, registered connection to the runtime, passed from one dranetd to
// its successor on the node (a DaemonSet rollout): the runtime never sees it
// close, and only one process answers it at any time.
struct NriHandover {
  UniqueFd socket;
  TtrpcResumption session;
  std::map<std::string, std::string> pods;  // PluginService::KnownPods()
};

class NriPlugin {
 public:
  using Options = NriPluginOptions;

  // All references must outlive the plugin. Nothing happens until Start().
  NriPlugin(Options options, state::PreparedClaims& claims, inject::PodNetnsApplier& applier,
            Logger& log);
  ~NriPlugin();  // Stop()
  NriPlugin(const NriPlugin&) = delete;
  NriPlugin& operator=(const NriPlugin&) = delete;

  // Starts the connect loop. Idempotent.
  void Start();
  // Starts on a connection another instance handed over (HandOver()); the
  // connect loop takes over when it closes.
  void Start(NriHandover handed);
  // Stops (as Stop()) and gives up the live connection, still open, with
  // what the plugin knew, once every request read is answered. nullopt when
  // it was not registered on a live connection (then it is closed).
  std::optional<NriHandover> HandOver();
  // Closes the connection and joins the threads. Idempotent. Waits for a
  // hook that is running to finish.
  void Stop();
  // Registered and configured by a runtime on a live connection (readiness).
  bool connected() const;
  // Waits up to `timeout` for connected() (tests, startup readiness).
  bool WaitConnected(std::chrono::milliseconds timeout);
  // Registered connections so far (1 after the first, +1 per reconnect).
  std::uint64_t connections() const { return connections_.load(); }

  PluginService& service() { return service_; }

 private:
  void StartLoop(std::optional<NriHandover> handed);
  void RunLoop(std::optional<NriHandover> handed);
  // Waits while `session` is open; true when it was handed over.
  bool Serve(const std::shared_ptr<TtrpcSession>& session);
  void WatchNetns();
  bool ConnectedLocked() const;
  bool WaitBackoff(std::chrono::milliseconds delay);  // false when stopping

  Options options_;
  Logger& log_;
  PluginService service_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool registered_ = false;
  bool netns_wake_ = false;  // a pod may be held now (attached or adopted): WatchNetns looks again
  std::shared_ptr<TtrpcSession> session_;
  std::atomic<std::uint64_t> connections_{0};
  std::thread thread_;
  std::thread netns_thread_;
};

}  // namespace dranet::nri
