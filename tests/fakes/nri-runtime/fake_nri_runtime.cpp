#include "fake_nri_runtime.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <unistd.h>
#include <utility>

namespace dranet::testing {
namespace {

constexpr char kPluginService[] = "nri.pkg.api.v1alpha1.Plugin";
constexpr char kRuntimeService[] = "nri.pkg.api.v1alpha1.Runtime";

std::int32_t Bit(api::Event e) { return 1 << (static_cast<int>(e) - 1); }

}  // namespace

FakeNriRuntime::FakeNriRuntime(Options options) : options_(std::move(options)) {}

FakeNriRuntime::~FakeNriRuntime() {
  Disconnect("runtime destroyed");
  if (listener_.valid()) ::unlink(options_.socket_path.c_str());
}

void FakeNriRuntime::Listen() { listener_ = nri::ListenUnixSocket(options_.socket_path); }

std::shared_ptr<nri::TtrpcSession> FakeNriRuntime::session() const {
  std::lock_guard lock(mu_);
  return session_;
}

bool FakeNriRuntime::plugin_connected() const {
  auto s = session();
  return s && !s->closed();
}

bool FakeNriRuntime::WaitDisconnected(std::chrono::milliseconds timeout) {
  auto s = session();
  return !s || s->WaitClosed(timeout);
}

void FakeNriRuntime::Disconnect(const std::string& reason) {
  std::shared_ptr<nri::TtrpcSession> old;
  {
    std::lock_guard lock(mu_);
    old = std::move(session_);
    registered_ = false;
  }
  if (old) old->Close(reason);
}

void FakeNriRuntime::Restart() {
  Disconnect("runtime restarting");
  listener_.Reset();
  Listen();
}

void FakeNriRuntime::SetExistingPods(std::vector<api::PodSandbox> pods) {
  std::lock_guard lock(mu_);
  existing_pods_ = std::move(pods);
}

void FakeNriRuntime::SetExistingContainers(std::vector<api::Container> containers) {
  std::lock_guard lock(mu_);
  existing_containers_ = std::move(containers);
}

nri::RpcResult FakeNriRuntime::ServeRuntime(const nri::RpcRequest& request) {
  if (request.service != kRuntimeService) {
    return {{nri::RpcCode::kUnimplemented, "service " + request.service}, {}};
  }
  if (request.method != "RegisterPlugin") return nri::Unimplemented(request);
  api::RegisterPluginRequest reg;
  if (!reg.ParseFromString(request.payload)) {
    return {{nri::RpcCode::kInvalidArgument, "malformed RegisterPlugin request"}, {}};
  }
  static const std::regex kName("[a-zA-Z0-9_.+-]+");
  static const std::regex kIndex("[0-9][0-9]");
  if (!std::regex_match(reg.plugin_name(), kName) || !std::regex_match(reg.plugin_idx(), kIndex)) {
    return {{nri::RpcCode::kInvalidArgument,
             "invalid plugin name/index \"" + reg.plugin_name() + "\"/\"" + reg.plugin_idx() + "\""},
            {}};
  }
  {
    std::lock_guard lock(mu_);
    plugin_name_ = reg.plugin_name();
    plugin_index_ = reg.plugin_idx();
    registered_ = true;
  }
  cv_.notify_all();
  return {{}, api::Empty().SerializeAsString()};
}

nri::RpcResult FakeNriRuntime::CallPlugin(const std::string& method, const std::string& payload) {
  auto s = session();
  if (!s || s->closed()) return {{nri::RpcCode::kUnavailable, "no plugin connected"}, {}};
  auto result = s->Call(kPluginService, method, payload, options_.request_timeout);
  const auto code = result.status.code;
  if (code == nri::RpcCode::kDeadlineExceeded || code == nri::RpcCode::kUnavailable) {
    // containerd treats both as fatal for the plugin: close it and go on without it.
    std::lock_guard lock(mu_);
    if (code == nri::RpcCode::kDeadlineExceeded) ++deadline_disconnects_;
    last_error_ = method + ": " + result.status.message;
    if (session_ == s) session_->Close("plugin " + method + ": " + result.status.message);
  }
  return result;
}

bool FakeNriRuntime::AcceptPlugin(std::chrono::milliseconds timeout) {
  Disconnect("accepting a new plugin");
  nri::UniqueFd fd = nri::AcceptUnixSocket(listener_, timeout);
  if (!fd.valid()) {
    std::lock_guard lock(mu_);
    last_error_ = "no plugin connected within " + std::to_string(timeout.count()) + " ms";
    return false;
  }
  auto s = std::make_shared<nri::TtrpcSession>(
      std::move(fd), nri::TtrpcSession::kRuntimeRoles,
      [this](const nri::RpcRequest& r) { return ServeRuntime(r); }, "fake-nri-rt");
  {
    std::unique_lock lock(mu_);
    session_ = s;
    if (!cv_.wait_for(lock, options_.registration_timeout, [&] { return registered_ || s->closed(); }) ||
        !registered_) {
      last_error_ = "plugin did not register";
      s->Close(last_error_);
      return false;
    }
  }
  return Handshake();
}

bool FakeNriRuntime::Handshake() {
  api::ConfigureRequest conf;
  conf.set_runtime_name(options_.runtime_name);
  conf.set_runtime_version(options_.runtime_version);
  conf.set_registration_timeout(options_.registration_timeout.count());
  conf.set_request_timeout(options_.request_timeout.count());
  if (!options_.state_change_only) conf.set_nri_version("v0.12.2");
  auto result = CallPlugin("Configure", conf.SerializeAsString());
  api::ConfigureResponse conf_out;
  if (!result.status.ok() || !conf_out.ParseFromString(result.payload)) {
    Disconnect("Configure failed: " + result.status.message);
    std::lock_guard lock(mu_);
    last_error_ = "Configure failed: " + result.status.message;
    return false;
  }
  const std::int32_t valid = options_.state_change_only ? 0x7FF : 0x3FFF;
  if ((conf_out.events() & ~valid) != 0) {
    Disconnect("invalid event mask");
    std::lock_guard lock(mu_);
    last_error_ = "plugin subscribed to events outside " + std::to_string(valid);
    return false;
  }
  std::vector<api::PodSandbox> pods;
  std::vector<api::Container> containers;
  {
    std::lock_guard lock(mu_);
    events_ = conf_out.events();
    pods = existing_pods_;
    containers = existing_containers_;
    sync_responses_.clear();
  }
  const std::size_t chunk = options_.sync_chunk_pods == 0 ? std::max<std::size_t>(pods.size(), 1)
                                                          : options_.sync_chunk_pods;
  std::size_t next = 0;
  do {
    api::SynchronizeRequest sync;
    for (std::size_t i = next; i < pods.size() && i < next + chunk; ++i) *sync.add_pods() = pods[i];
    next += chunk;
    sync.set_more(next < pods.size());
    if (!sync.more())
      for (const auto& c : containers) *sync.add_containers() = c;
    result = CallPlugin("Synchronize", sync.SerializeAsString());
    api::SynchronizeResponse sync_out;
    std::string failure;
    if (!result.status.ok() || !sync_out.ParseFromString(result.payload)) {
      failure = "Synchronize failed: " + result.status.message;
    } else if (sync_out.more() != sync.more()) {
      failure = "Synchronize response did not echo more";
    } else if (sync.more() && sync_out.update_size() != 0) {
      failure = "Synchronize returned updates for a non-final chunk";
    }
    if (!failure.empty()) {
      Disconnect(failure);
      std::lock_guard lock(mu_);
      last_error_ = failure;
      return false;
    }
    std::lock_guard lock(mu_);
    sync_responses_.push_back(sync_out);
  } while (next < pods.size());
  return true;
}

nri::RpcStatus FakeNriRuntime::PodEvent(const std::string& method, api::Event event,
                                        const api::PodSandbox& pod) {
  {
    std::lock_guard lock(mu_);
    if (events_ != 0 && (events_ & Bit(event)) == 0) return {};  // not subscribed
  }
  if (!options_.state_change_only) {
    api::RunPodSandboxRequest request;  // Run/Stop/Remove share the layout pod = 1
    *request.mutable_pod() = pod;
    auto result = CallPlugin(method, request.SerializeAsString());
    if (result.status.code != nri::RpcCode::kUnimplemented) {
      std::lock_guard lock(mu_);
      last_pod_event_method_ = method;
      return result.status;
    }
  }
  api::StateChangeEvent change;
  change.set_event(event);
  *change.mutable_pod() = pod;
  auto result = CallPlugin("StateChange", change.SerializeAsString());
  std::lock_guard lock(mu_);
  last_pod_event_method_ = "StateChange";
  return result.status;
}

nri::RpcStatus FakeNriRuntime::RunPodSandbox(const api::PodSandbox& pod) {
  return PodEvent("RunPodSandbox", api::RUN_POD_SANDBOX, pod);
}

nri::RpcStatus FakeNriRuntime::StopPodSandbox(const api::PodSandbox& pod) {
  return PodEvent("StopPodSandbox", api::STOP_POD_SANDBOX, pod);
}

nri::RpcStatus FakeNriRuntime::RemovePodSandbox(const api::PodSandbox& pod) {
  return PodEvent("RemovePodSandbox", api::REMOVE_POD_SANDBOX, pod);
}

nri::RpcStatus FakeNriRuntime::CreateContainer(const api::PodSandbox& pod, const api::Container& container,
                                               api::ContainerAdjustment* adjust_out) {
  {
    std::lock_guard lock(mu_);
    if (events_ != 0 && (events_ & Bit(api::CREATE_CONTAINER)) == 0) return {};
  }
  api::CreateContainerRequest request;
  *request.mutable_pod() = pod;
  *request.mutable_container() = container;
  auto result = CallPlugin("CreateContainer", request.SerializeAsString());
  if (!result.status.ok()) return result.status;
  api::CreateContainerResponse response;
  if (!response.ParseFromString(result.payload)) {
    return {nri::RpcCode::kInternal, "malformed CreateContainer response"};
  }
  if (adjust_out) *adjust_out = response.adjust();
  return {};
}

nri::RpcStatus FakeNriRuntime::Shutdown() {
  auto result = CallPlugin("Shutdown", api::Empty().SerializeAsString());
  Disconnect("runtime shut down");
  return result.status;
}

std::string FakeNriRuntime::plugin_name() const {
  std::lock_guard lock(mu_);
  return plugin_name_;
}
std::string FakeNriRuntime::plugin_index() const {
  std::lock_guard lock(mu_);
  return plugin_index_;
}
std::int32_t FakeNriRuntime::subscribed_events() const {
  std::lock_guard lock(mu_);
  return events_;
}
std::vector<api::SynchronizeResponse> FakeNriRuntime::sync_responses() const {
  std::lock_guard lock(mu_);
  return sync_responses_;
}
std::string FakeNriRuntime::last_pod_event_method() const {
  std::lock_guard lock(mu_);
  return last_pod_event_method_;
}
std::string FakeNriRuntime::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}
int FakeNriRuntime::deadline_disconnects() const {
  std::lock_guard lock(mu_);
  return deadline_disconnects_;
}

api::PodSandbox FakeNriRuntime::MakePod(const std::string& uid, const std::string& ns,
                                        const std::string& name, const std::string& netns_path) {
  api::PodSandbox pod;
  // containerd sandbox ids are 64 hex digits; derive one from the UID.
  std::string id;
  for (char c : uid) {
    if (std::isxdigit(static_cast<unsigned char>(c))) id.push_back(static_cast<char>(std::tolower(c)));
  }
  id.resize(64, '0');
  pod.set_id(id);
  pod.set_name(name);
  pod.set_uid(uid);
  pod.set_namespace_(ns);
  (*pod.mutable_labels())["io.kubernetes.pod.name"] = name;
  (*pod.mutable_labels())["io.kubernetes.pod.namespace"] = ns;
  (*pod.mutable_labels())["io.kubernetes.pod.uid"] = uid;
  (*pod.mutable_annotations())["io.kubernetes.cri.sandbox-id"] = id;
  (*pod.mutable_annotations())["io.kubernetes.cri.container-type"] = "sandbox";
  pod.set_runtime_handler("runc");
  auto* linux_pod = pod.mutable_linux();
  linux_pod->set_cgroup_parent("/kubepods/besteffort/pod" + uid);
  linux_pod->set_cgroups_path("kubepods-besteffort-pod" + uid + ".slice:cri-containerd:" + id);
  auto add_ns = [&](const std::string& type, const std::string& path) {
    auto* n = linux_pod->add_namespaces();
    n->set_type(type);
    n->set_path(path);
  };
  add_ns("pid", "");
  add_ns("ipc", "/proc/4242/ns/ipc");
  add_ns("uts", "/proc/4242/ns/uts");
  if (!netns_path.empty()) add_ns("network", netns_path);
  pod.set_pid(4242);
  return pod;
}

api::Container FakeNriRuntime::MakeContainer(const api::PodSandbox& pod, const std::string& name,
                                             std::vector<std::string> env) {
  api::Container c;
  c.set_id(pod.id().substr(0, 32) + std::string(32, 'c'));
  c.set_pod_sandbox_id(pod.id());
  c.set_name(name);
  c.set_state(api::CONTAINER_CREATED);
  (*c.mutable_labels())["io.kubernetes.container.name"] = name;
  (*c.mutable_labels())["io.kubernetes.pod.uid"] = pod.uid();
  c.add_args("/bin/sh");
  c.add_args("-c");
  c.add_args("sleep infinity");
  env.insert(env.begin(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  for (auto& e : env) c.add_env(std::move(e));
  auto* m = c.add_mounts();
  m->set_destination("/etc/hosts");
  m->set_type("bind");
  m->set_source("/var/lib/kubelet/pods/" + pod.uid() + "/etc-hosts");
  m->add_options("rbind");
  m->add_options("rw");
  return c;
}

}  // namespace dranet::testing
