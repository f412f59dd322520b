#pragma once
// tests/fakes/nri-runtime/fake_nri_runtime.h — containerd's side of NRI over
// a real unix socket, for tests, benchmarks and the end-to-end demo.
//
// Listens on a socket path, accepts one plugin at a time, serves the Runtime
// service (RegisterPlugin) on multiplexer connection 2, and calls the
// plugin on connection 1: Configure (checking the event mask against the
// runtime's valid events), Synchronize (optionally in chunks, checking the
// `more` echo), then whatever pod and container events the test sends.
// Like containerd, every request has a deadline (2 s by default); a plugin
// that misses it, or breaks the protocol, is disconnected and the event
// proceeds without it. `state_change_only` plays a runtime with NRI <= 0.11
// (pod events only as StateChange, events mask limited to 0x7FF); otherwise
// it plays NRI 0.12 (dedicated RPCs, StateChange when those are
// UNIMPLEMENTED). Restart() closes everything and listens again.
// Thread-safe; event calls are meant to come from one test thread.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nri/proto/nri.pb.h"
#include "nri/ttrpc_session.h"
#include "nri/unix_socket.h"

namespace dranet::testing {

namespace api = ::nri::pkg::api::v1alpha1;

class FakeNriRuntime {
 public:
  struct Options {
    std::string socket_path;
    std::chrono::milliseconds request_timeout{2000};
    std::chrono::milliseconds registration_timeout{5000};
    bool state_change_only = false;
    std::string runtime_name = "containerd";
    std::string runtime_version = "2.1.0";
    std::size_t sync_chunk_pods = 0;  // pods per Synchronize chunk; 0 = one chunk
  };

  explicit FakeNriRuntime(Options options);
  ~FakeNriRuntime();

  // Binds and listens. Throws std::system_error.
  void Listen();
  // Accepts a plugin and runs the handshake (RegisterPlugin, Configure,
  // Synchronize). False on timeout or a failed handshake (see last_error()).
  bool AcceptPlugin(std::chrono::milliseconds timeout);
  bool plugin_connected() const;
  // Waits until the plugin connection is gone (closed by either side).
  bool WaitDisconnected(std::chrono::milliseconds timeout);
  // Closes the plugin connection and the listening socket, then listens again.
  void Restart();
  // Closes the plugin connection only.
  void Disconnect(const std::string& reason);

  // Pods reported by the next Synchronize.
  void SetExistingPods(std::vector<api::PodSandbox> pods);
  // Running containers reported (with the final Synchronize chunk).
  void SetExistingContainers(std::vector<api::Container> containers);

  nri::RpcStatus RunPodSandbox(const api::PodSandbox& pod);
  nri::RpcStatus StopPodSandbox(const api::PodSandbox& pod);
  nri::RpcStatus RemovePodSandbox(const api::PodSandbox& pod);
  nri::RpcStatus CreateContainer(const api::PodSandbox& pod, const api::Container& container,
                                 api::ContainerAdjustment* adjust_out);
  nri::RpcStatus Shutdown();

  // What the plugin said during the handshake.
  std::string plugin_name() const;
  std::string plugin_index() const;
  std::int32_t subscribed_events() const;
  // Synchronize responses of the last handshake, one per chunk.
  std::vector<api::SynchronizeResponse> sync_responses() const;
  // Which method carried the last pod event ("RunPodSandbox", "StateChange").
  std::string last_pod_event_method() const;
  std::string last_error() const;
  // Plugins disconnected for missing the request deadline.
  int deadline_disconnects() const;

  // A realistic pod as containerd reports it: sandbox id, labels,
  // annotations, cgroup parent, and linux namespaces with the network
  // namespace at `netns_path` (empty: a hostNetwork pod).
  static api::PodSandbox MakePod(const std::string& uid, const std::string& ns,
                                 const std::string& name, const std::string& netns_path);
  static api::Container MakeContainer(const api::PodSandbox& pod, const std::string& name,
                                      std::vector<std::string> env);

 private:
  nri::RpcResult ServeRuntime(const nri::RpcRequest& request);
  nri::RpcResult CallPlugin(const std::string& method, const std::string& payload);
  nri::RpcStatus PodEvent(const std::string& method, api::Event event, const api::PodSandbox& pod);
  std::shared_ptr<nri::TtrpcSession> session() const;
  bool Handshake();

  Options options_;
  nri::UniqueFd listener_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<nri::TtrpcSession> session_;
  bool registered_ = false;
  std::string plugin_name_, plugin_index_;
  std::int32_t events_ = 0;
  std::vector<api::PodSandbox> existing_pods_;
  std::vector<api::Container> existing_containers_;
  std::vector<api::SynchronizeResponse> sync_responses_;
  std::string last_pod_event_method_;
  std::string last_error_;
  int deadline_disconnects_ = 0;
};

}  // namespace dranet::testing
