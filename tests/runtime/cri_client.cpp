// cri_client.cpp: CriClient over the generated CRI v1 stub (proto/cri.proto).
#include "cri_client.h"

#include <grpcpp/grpcpp.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include <stdexcept>
#include <string_view>

#include "cri.grpc.pb.h"

namespace dranet::runtime_test {

namespace cri = ::runtime::v1;

struct CriClient::Connection {
  std::string endpoint;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<cri::RuntimeService::Stub> runtime;
};

namespace {

// ExecSync output may be up to 16 MiB per stream (CRI caps it there); gRPC's
// default 4 MiB receive limit would turn a chatty command into an error.
constexpr int kMaxReceiveBytes = 40 * 1024 * 1024;

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(std::chrono::seconds deadline) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + deadline);
  return context;
}

std::string StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    default:
      return "code " + std::to_string(static_cast<int>(code));
  }
}

// Throws with the RPC, the object it was about and gRPC's own words.
void ThrowIfFailed(const grpc::Status &status, const std::string &rpc, const std::string &object,
                   const std::string &endpoint) {
  if (status.ok()) return;
  throw std::runtime_error("CRI " + rpc + "(" + object + ") on " + endpoint +
                           " failed: " + StatusCodeName(status.error_code()) + ": " + status.error_message());
}

std::string PodName(const PodSpec &pod) { return pod.namespace_name + "/" + pod.name; }

cri::NamespaceOption NamespacesFor(const PodSpec &pod) {
  cri::NamespaceOption namespaces;
  namespaces.set_network(pod.host_network ? cri::NODE : cri::POD);
  namespaces.set_pid(cri::CONTAINER);
  namespaces.set_ipc(cri::POD);
  return namespaces;
}

// The PodSandboxConfig the kubelet would build for `pod`; CreateContainer sends
// it again.
cri::PodSandboxConfig SandboxConfigFor(const PodSpec &pod) {
  if (pod.name.empty() || pod.uid.empty() || pod.namespace_name.empty())
    throw std::invalid_argument("PodSpec needs name, uid and namespace_name (pod '" + PodName(pod) + "')");
  cri::PodSandboxConfig config;
  cri::PodSandboxMetadata *metadata = config.mutable_metadata();
  metadata->set_name(pod.name);
  metadata->set_uid(pod.uid);
  metadata->set_namespace_(pod.namespace_name);
  metadata->set_attempt(0);
  // A host-network pod shares the node's UTS namespace, so it keeps the node's
  // hostname.
  if (!pod.host_network) config.set_hostname(pod.name);
  config.set_log_directory(pod.log_dir);
  config.mutable_labels()->insert(pod.labels.begin(), pod.labels.end());
  config.mutable_annotations()->insert(pod.annotations.begin(), pod.annotations.end());
  cri::LinuxPodSandboxConfig *linux_config = config.mutable_linux();
  linux_config->set_cgroup_parent(pod.cgroup_parent);
  *linux_config->mutable_security_context()->mutable_namespace_options() = NamespacesFor(pod);
  return config;
}

ContainerState StateFrom(cri::ContainerState state) {
  switch (state) {
    case cri::CONTAINER_CREATED:
      return ContainerState::kCreated;
    case cri::CONTAINER_RUNNING:
      return ContainerState::kRunning;
    case cri::CONTAINER_EXITED:
      return ContainerState::kExited;
    default:
      return ContainerState::kUnknown;
  }
}

// containerd 1.7 puts its sandbox record, as JSON, under info["info"]; the
// network namespace is the "network" entry of the pause container's OCI spec
// (runtimeSpec.linux.namespaces). A host-network sandbox has no such entry.
std::string NetnsPathFromVerboseInfo(const cri::PodSandboxStatusResponse &response, const std::string &sandbox_id) {
  const auto info = response.info().find("info");
  if (info == response.info().end())
    throw std::runtime_error("CRI PodSandboxStatus(" + sandbox_id + "): verbose status has no \"info\" entry");
  rapidjson::Document record;
  record.Parse(info->second.c_str(), info->second.size());
  if (record.HasParseError() || !record.IsObject())
    throw std::runtime_error("CRI PodSandboxStatus(" + sandbox_id + "): \"info\" is not a JSON object");
  const rapidjson::Value *namespaces = rapidjson::Pointer("/runtimeSpec/linux/namespaces").Get(record);
  if (namespaces == nullptr || !namespaces->IsArray())
    throw std::runtime_error("CRI PodSandboxStatus(" + sandbox_id +
                             "): \"info\" has no runtimeSpec.linux.namespaces array");
  for (const rapidjson::Value &entry : namespaces->GetArray()) {
    if (!entry.IsObject() || !entry.HasMember("type") || !entry["type"].IsString()) continue;
    if (std::string_view(entry["type"].GetString()) != "network") continue;
    // An entry without a path means a fresh namespace made by runc itself;
    // containerd's CRI always pins one first, so a missing path would be a
    // runtime we do not know.
    if (!entry.HasMember("path") || !entry["path"].IsString())
      throw std::runtime_error("CRI PodSandboxStatus(" + sandbox_id + "): network namespace entry has no path");
    return entry["path"].GetString();
  }
  return "";
}

// The kubelet's defaults for a container whose procMount is Default
// (k8s.io/kubernetes pkg/securitycontext: defaultMaskedPaths, defaultReadonlyPaths).
constexpr const char *kKubeletMaskedPaths[] = {
    "/proc/asound",       "/proc/acpi",        "/proc/kcore",       "/proc/keys",
    "/proc/latency_stats", "/proc/timer_list",  "/proc/timer_stats", "/proc/sched_debug",
    "/proc/scsi",         "/sys/firmware",     "/sys/devices/virtual/powercap"};
constexpr const char *kKubeletReadonlyPaths[] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                                 "/proc/sysrq-trigger"};

void ApplySecurity(const SecuritySpec &spec, cri::LinuxContainerSecurityContext &out) {
  for (const auto &cap : spec.add_capabilities) out.mutable_capabilities()->add_add_capabilities(cap);
  for (const auto &cap : spec.drop_capabilities) out.mutable_capabilities()->add_drop_capabilities(cap);
  out.set_readonly_rootfs(spec.readonly_rootfs);
  out.set_no_new_privs(spec.no_new_privs);
  if (spec.seccomp_runtime_default) out.mutable_seccomp()->set_profile_type(cri::SecurityProfile::RuntimeDefault);
  if (spec.run_as_user) out.mutable_run_as_user()->set_value(*spec.run_as_user);
  if (spec.kubelet_default_paths) {
    for (const char *path : kKubeletMaskedPaths) out.add_masked_paths(path);
    for (const char *path : kKubeletReadonlyPaths) out.add_readonly_paths(path);
  }
}

}  // namespace

template <typename Response, typename Request, typename Method>
Response CriClient::Call(Method method, const Request &request, std::chrono::seconds deadline, const char *rpc,
                         const std::string &object) {
  Response response;
  auto context = ContextWithDeadline(deadline);
  ThrowIfFailed(((*connection_->runtime).*method)(context.get(), request, &response), rpc, object,
                connection_->endpoint);
  return response;
}

CriClient::CriClient(const std::string &endpoint, std::chrono::seconds call_deadline)
    : connection_(std::make_unique<Connection>()), call_deadline_(call_deadline) {
  connection_->endpoint = endpoint.starts_with("/") ? "unix://" + endpoint : endpoint;
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  connection_->channel =
      grpc::CreateCustomChannel(connection_->endpoint, grpc::InsecureChannelCredentials(), arguments);
  connection_->runtime = cri::RuntimeService::NewStub(connection_->channel);
}

CriClient::~CriClient() = default;
CriClient::CriClient(CriClient &&) noexcept = default;
CriClient &CriClient::operator=(CriClient &&) noexcept = default;

RuntimeVersion CriClient::Version() {
  cri::VersionRequest request;
  request.set_version("v1");
  const auto response =
      Call<cri::VersionResponse>(&cri::RuntimeService::Stub::Version, request, call_deadline_, "Version", "");
  return {response.runtime_name(), response.runtime_version(), response.runtime_api_version()};
}

std::string CriClient::RunPodSandbox(const PodSpec &pod) {
  cri::RunPodSandboxRequest request;
  *request.mutable_config() = SandboxConfigFor(pod);
  const auto response = Call<cri::RunPodSandboxResponse>(&cri::RuntimeService::Stub::RunPodSandbox, request,
                                                         call_deadline_, "RunPodSandbox", "pod " + PodName(pod));
  return response.pod_sandbox_id();
}

void CriClient::StopPodSandbox(const std::string &sandbox_id) {
  cri::StopPodSandboxRequest request;
  request.set_pod_sandbox_id(sandbox_id);
  Call<cri::StopPodSandboxResponse>(&cri::RuntimeService::Stub::StopPodSandbox, request, call_deadline_,
                                    "StopPodSandbox", sandbox_id);
}

void CriClient::RemovePodSandbox(const std::string &sandbox_id) {
  cri::RemovePodSandboxRequest request;
  request.set_pod_sandbox_id(sandbox_id);
  Call<cri::RemovePodSandboxResponse>(&cri::RuntimeService::Stub::RemovePodSandbox, request, call_deadline_,
                                      "RemovePodSandbox", sandbox_id);
}

std::string CriClient::PodSandboxNetnsPath(const std::string &sandbox_id) {
  cri::PodSandboxStatusRequest request;
  request.set_pod_sandbox_id(sandbox_id);
  request.set_verbose(true);
  const auto response = Call<cri::PodSandboxStatusResponse>(&cri::RuntimeService::Stub::PodSandboxStatus, request,
                                                            call_deadline_, "PodSandboxStatus", sandbox_id);
  return NetnsPathFromVerboseInfo(response, sandbox_id);
}

std::string CriClient::PodSandboxIp(const std::string &sandbox_id) {
  cri::PodSandboxStatusRequest request;
  request.set_pod_sandbox_id(sandbox_id);
  const auto response = Call<cri::PodSandboxStatusResponse>(&cri::RuntimeService::Stub::PodSandboxStatus, request,
                                                            call_deadline_, "PodSandboxStatus", sandbox_id);
  return response.status().network().ip();
}

std::vector<std::string> CriClient::ListPodSandboxIds(const std::map<std::string, std::string> &label_selector) {
  cri::ListPodSandboxRequest request;
  request.mutable_filter()->mutable_label_selector()->insert(label_selector.begin(), label_selector.end());
  const auto response = Call<cri::ListPodSandboxResponse>(&cri::RuntimeService::Stub::ListPodSandbox, request,
                                                          call_deadline_, "ListPodSandbox", "");
  std::vector<std::string> ids;
  for (const cri::PodSandbox &sandbox : response.items()) ids.push_back(sandbox.id());
  return ids;
}

std::string CriClient::CreateContainer(const std::string &sandbox_id, const PodSpec &pod,
                                       const ContainerSpec &container) {
  if (container.name.empty() || container.image.empty())
    throw std::invalid_argument("ContainerSpec needs name and image (pod '" + PodName(pod) + "')");
  cri::CreateContainerRequest request;
  request.set_pod_sandbox_id(sandbox_id);
  *request.mutable_sandbox_config() = SandboxConfigFor(pod);
  cri::ContainerConfig *config = request.mutable_config();
  config->mutable_metadata()->set_name(container.name);
  config->mutable_metadata()->set_attempt(0);
  config->mutable_image()->set_image(container.image);
  config->mutable_command()->Add(container.command.begin(), container.command.end());
  for (const auto &[name, value] : container.envs) {
    cri::KeyValue *env = config->add_envs();
    env->set_key(name);
    env->set_value(value);
  }
  // Relative to the pod's log directory, as the kubelet does; without one there
  // is no log file.
  if (!pod.log_dir.empty()) config->set_log_path(container.name + ".log");
  for (const MountSpec &m : container.mounts) {
    cri::Mount *mount = config->add_mounts();
    mount->set_host_path(m.host_path);
    mount->set_container_path(m.container_path);
    mount->set_readonly(m.readonly);
    mount->set_propagation(m.host_to_container ? cri::PROPAGATION_HOST_TO_CONTAINER : cri::PROPAGATION_PRIVATE);
  }
  cri::LinuxContainerSecurityContext *security = config->mutable_linux()->mutable_security_context();
  // The container's own namespace options decide whether it joins the pod
  // network namespace, so they must repeat the sandbox's choice.
  *security->mutable_namespace_options() = NamespacesFor(pod);
  ApplySecurity(container.security, *security);
  const auto response = Call<cri::CreateContainerResponse>(
      &cri::RuntimeService::Stub::CreateContainer, request, call_deadline_, "CreateContainer",
      "container " + container.name + " of pod " + PodName(pod) + " in sandbox " + sandbox_id);
  return response.container_id();
}

void CriClient::StartContainer(const std::string &container_id) {
  cri::StartContainerRequest request;
  request.set_container_id(container_id);
  Call<cri::StartContainerResponse>(&cri::RuntimeService::Stub::StartContainer, request, call_deadline_,
                                    "StartContainer", container_id);
}

void CriClient::StopContainer(const std::string &container_id, std::int64_t timeout_s) {
  cri::StopContainerRequest request;
  request.set_container_id(container_id);
  request.set_timeout(timeout_s);
  // The runtime may wait timeout_s before killing, so the deadline has to cover
  // that too.
  Call<cri::StopContainerResponse>(&cri::RuntimeService::Stub::StopContainer, request,
                                   call_deadline_ + std::chrono::seconds(timeout_s), "StopContainer", container_id);
}

void CriClient::RemoveContainer(const std::string &container_id) {
  cri::RemoveContainerRequest request;
  request.set_container_id(container_id);
  Call<cri::RemoveContainerResponse>(&cri::RuntimeService::Stub::RemoveContainer, request, call_deadline_,
                                     "RemoveContainer", container_id);
}

std::vector<std::string> CriClient::ListContainerIds(const std::string &sandbox_id) {
  cri::ListContainersRequest request;
  request.mutable_filter()->set_pod_sandbox_id(sandbox_id);
  const auto response =
      Call<cri::ListContainersResponse>(&cri::RuntimeService::Stub::ListContainers, request, call_deadline_,
                                        "ListContainers", sandbox_id.empty() ? "" : "sandbox " + sandbox_id);
  std::vector<std::string> ids;
  for (const cri::Container &container : response.containers()) ids.push_back(container.id());
  return ids;
}

ContainerStatusReport CriClient::ContainerStatus(const std::string &container_id) {
  cri::ContainerStatusRequest request;
  request.set_container_id(container_id);
  const auto response = Call<cri::ContainerStatusResponse>(&cri::RuntimeService::Stub::ContainerStatus, request,
                                                           call_deadline_, "ContainerStatus", container_id);
  const cri::ContainerStatus &status = response.status();
  return {StateFrom(status.state()), status.exit_code(), status.reason(), status.message()};
}

int CriClient::ContainerPid(const std::string &container_id) {
  cri::ContainerStatusRequest request;
  request.set_container_id(container_id);
  request.set_verbose(true);
  const auto response = Call<cri::ContainerStatusResponse>(&cri::RuntimeService::Stub::ContainerStatus, request,
                                                           call_deadline_, "ContainerStatus", container_id);
  const auto info = response.info().find("info");
  rapidjson::Document record;
  if (info != response.info().end()) record.Parse(info->second.c_str(), info->second.size());
  if (info == response.info().end() || record.HasParseError() || !record.IsObject() || !record.HasMember("pid") ||
      !record["pid"].IsInt() || record["pid"].GetInt() <= 0)
    throw std::runtime_error("CRI ContainerStatus(" + container_id + "): verbose status has no process id");
  return record["pid"].GetInt();
}

ExecResult CriClient::Exec(const std::string &container_id, const std::vector<std::string> &cmd,
                           std::chrono::seconds timeout) {
  cri::ExecSyncRequest request;
  request.set_container_id(container_id);
  request.mutable_cmd()->Add(cmd.begin(), cmd.end());
  request.set_timeout(timeout.count());
  std::string command_line;
  for (const std::string &word : cmd) command_line += (command_line.empty() ? "" : " ") + word;
  // The command may legitimately run for `timeout`; the call deadline comes on
  // top of it.
  const auto response =
      Call<cri::ExecSyncResponse>(&cri::RuntimeService::Stub::ExecSync, request, call_deadline_ + timeout, "ExecSync",
                                  container_id + ": " + command_line);
  return {response.exit_code(), response.stdout(), response.stderr()};
}

}  // namespace dranet::runtime_test
