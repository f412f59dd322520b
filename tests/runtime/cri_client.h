// cri_client.h: a small blocking client of the Kubernetes CRI v1 RuntimeService, so that
// end-to-end tests can create pods and containers on a real containerd the way the kubelet
// does, and then look at what dranet did to them (network namespace, addresses, exec).
//
// Only what the tests need is here (proto/cri.proto lists the subset). Every call has a
// deadline (60 s unless the constructor says otherwise) and throws std::runtime_error naming
// the RPC, the object and the gRPC status on failure. The generated gRPC types stay in
// cri_client.cpp; this header only uses the standard library.
//
// Thread-safety: a CriClient holds no mutable state besides the gRPC channel, which is
// thread-safe, so one instance may be used from several threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dranet::runtime_test {

// What the runtime says about itself (CRI Version).
struct RuntimeVersion {
  std::string runtime_name;         // "containerd"
  std::string runtime_version;      // e.g. "v1.7.24"
  std::string runtime_api_version;  // "v1"
};

// The pod-level settings the kubelet would pass to RunPodSandbox, reduced to what the tests
// vary. The same PodSpec must be passed to CreateContainer for that pod.
struct PodSpec {
  std::string name;  // required: pod name (also the sandbox hostname)
  std::string uid;   // required: pod UID, unique per pod
  std::string namespace_name = "default";
  bool host_network = false;  // true: the node's network namespace (hostNetwork: true)
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> labels;
  std::string log_dir;        // host directory for container logs; empty: no log files
  std::string cgroup_parent;  // cgroupfs-style parent; empty: the runtime's default
};

// A host path mounted into a container, as the kubelet passes a hostPath volume.
struct MountSpec {
  std::string host_path;
  std::string container_path;
  bool readonly = false;
  // Mounts made on the host below host_path after the container started reach it
  // (mountPropagation: HostToContainer); host_path must be on a shared mount.
  bool host_to_container = false;
};

// The container's securityContext as the kubelet translates it. The default is the
// runtime's own defaults (CRI fields left unset), which is what the tests' busybox
// containers use.
struct SecuritySpec {
  std::vector<std::string> add_capabilities;   // "NET_ADMIN", without CAP_
  std::vector<std::string> drop_capabilities;  // "ALL"
  bool readonly_rootfs = false;                // readOnlyRootFilesystem: true
  bool no_new_privs = false;                   // allowPrivilegeEscalation: false
  bool seccomp_runtime_default = false;        // seccompProfile: RuntimeDefault
  std::optional<std::int64_t> run_as_user;     // runAsUser
  // The kubelet's default masked and read-only paths (procMount: Default).
  bool kubelet_default_paths = false;
};

// One container of a pod. The image must already be in the runtime's image store; this client
// does not pull.
struct ContainerSpec {
  std::string name;   // required, unique within the pod
  std::string image;  // required, e.g. "localhost/dranet-test/busybox:1"
  // Replaces the image entrypoint when not empty.
  std::vector<std::string> command;
  // Environment variables as (name, value), set in this order.
  std::vector<std::pair<std::string, std::string>> envs;
  std::vector<MountSpec> mounts;
  SecuritySpec security;
};

// The outcome of a command run with Exec. stdout/stderr are capped at 16 MiB by the runtime.
struct ExecResult {
  int exit_code = 0;
  std::string stdout_text;
  std::string stderr_text;
};

enum class ContainerState { kCreated, kRunning, kExited, kUnknown };

// The part of CRI ContainerStatus the tests look at.
struct ContainerStatusReport {
  ContainerState state = ContainerState::kUnknown;
  int exit_code = 0;   // meaningful once state is kExited
  std::string reason;  // e.g. "Completed", "Error", "OOMKilled"
  std::string message;
};

class CriClient {
 public:
  // endpoint: "unix:///run/containerd/containerd.sock" (a bare absolute path is accepted and
  // gets the unix:// prefix). Connecting is lazy: an unreachable socket shows up as the first
  // call's error. call_deadline bounds every call (Exec adds its own timeout on top).
  explicit CriClient(const std::string& endpoint,
                     std::chrono::seconds call_deadline = std::chrono::seconds(60));
  ~CriClient();
  CriClient(CriClient&&) noexcept;
  CriClient& operator=(CriClient&&) noexcept;
  CriClient(const CriClient&) = delete;
  CriClient& operator=(const CriClient&) = delete;

  RuntimeVersion Version();

  // Creates and starts the pod sandbox (pause container, network set up by CNI / NRI hooks)
  // and returns its id. Network, PID and IPC namespace choices follow the kubelet's defaults:
  // pod network unless host_network, one PID namespace per container, a pod IPC namespace.
  std::string RunPodSandbox(const PodSpec& pod);
  void StopPodSandbox(const std::string& sandbox_id);
  // Stops the sandbox's containers if needed and removes them with it.
  void RemovePodSandbox(const std::string& sandbox_id);
  // Host path of the sandbox's network namespace, or "" for a host-network pod. containerd
  // pins it under its state directory (<state>/io.containerd.grpc.v1.cri/netns/cni-<uuid>),
  // and reports it only in the verbose status, which this reads.
  std::string PodSandboxNetnsPath(const std::string& sandbox_id);
  // The pod's primary IP as the runtime reports it; "" for host-network pods and pods the
  // network plugin gave no address.
  std::string PodSandboxIp(const std::string& sandbox_id);
  // Ids of the sandboxes whose labels include all of label_selector (all sandboxes when empty).
  std::vector<std::string> ListPodSandboxIds(const std::map<std::string, std::string>& label_selector = {});

  // Creates (does not start) a container in the sandbox; pod must be the PodSpec the sandbox
  // was run with. Returns the container id.
  std::string CreateContainer(const std::string& sandbox_id, const PodSpec& pod,
                              const ContainerSpec& container);
  void StartContainer(const std::string& container_id);
  // Signals the container and kills it after timeout_s seconds (0: kill at once).
  void StopContainer(const std::string& container_id, std::int64_t timeout_s);
  void RemoveContainer(const std::string& container_id);
  // Ids of the containers of one sandbox, or of all sandboxes when sandbox_id is empty.
  std::vector<std::string> ListContainerIds(const std::string& sandbox_id = {});
  ContainerStatusReport ContainerStatus(const std::string& container_id);
  // The host PID of the container's first process (from the verbose status); throws if
  // the runtime reports none (the container is not running).
  int ContainerPid(const std::string& container_id);

  // Runs cmd in the running container and waits for it; the runtime kills it after timeout.
  // A non-zero exit code is a result, not an error.
  ExecResult Exec(const std::string& container_id, const std::vector<std::string>& cmd,
                  std::chrono::seconds timeout = std::chrono::seconds(30));

 private:
  struct Connection;  // the gRPC channel and stub, defined in cri_client.cpp
  // One unary call of the stub's `method` under `deadline`; throws naming
  // `rpc` and `object` (defined and used in cri_client.cpp only).
  template <typename Response, typename Request, typename Method>
  Response Call(Method method, const Request& request, std::chrono::seconds deadline, const char* rpc,
                const std::string& object);
  std::unique_ptr<Connection> connection_;
  std::chrono::seconds call_deadline_;
};

}  // namespace dranet::runtime_test
