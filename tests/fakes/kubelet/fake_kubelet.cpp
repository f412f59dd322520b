#include "fake_kubelet.h"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include <grpcpp/grpcpp.h>

#include "dra_v1.grpc.pb.h"
#include "dra_v1beta1.grpc.pb.h"
#include "pluginregistration.grpc.pb.h"

namespace dranet::fakes {
namespace {

namespace v1 = k8s::io::kubelet::pkg::apis::dra::v1;
namespace v1beta1 = k8s::io::kubelet::pkg::apis::dra::v1beta1;
namespace reg = pluginregistration;

std::shared_ptr<grpc::Channel> Dial(const std::string& path) {
  return grpc::CreateChannel("unix://" + path, grpc::InsecureChannelCredentials());
}

void SetDeadline(grpc::ClientContext& ctx, std::chrono::milliseconds deadline) {
  ctx.set_deadline(std::chrono::system_clock::now() + deadline);
}

[[noreturn]] void ThrowStatus(const char* what, const grpc::Status& status) {
  throw std::runtime_error(std::string(what) + " failed: code " + std::to_string(status.error_code()) + ": " +
                           status.error_message());
}

// Both request messages (v1 and v1beta1, prepare and unprepare) carry `repeated Claim claims = 1`.
template <typename Request>
void AddClaims(Request& request, const std::vector<KubeletClaim>& claims) {
  for (const auto& c : claims) {
    auto* claim = request.add_claims();
    claim->set_namespace_(c.namespace_name);
    claim->set_name(c.name);
    claim->set_uid(c.uid);
  }
}

template <typename Stub, typename PrepareReq, typename PrepareResp>
std::map<std::string, KubeletPrepareResult> DoPrepare(Stub& stub, const std::vector<KubeletClaim>& claims,
                                                      std::chrono::milliseconds deadline) {
  PrepareReq request;
  AddClaims(request, claims);
  PrepareResp response;
  grpc::ClientContext ctx;
  SetDeadline(ctx, deadline);
  auto status = stub.NodePrepareResources(&ctx, request, &response);
  if (!status.ok()) ThrowStatus("NodePrepareResources", status);
  std::map<std::string, KubeletPrepareResult> out;
  for (const auto& [uid, entry] : response.claims()) {
    KubeletPrepareResult r;
    r.error = entry.error();
    for (const auto& d : entry.devices())
      r.devices.push_back({{d.request_names().begin(), d.request_names().end()}, d.pool_name(), d.device_name(),
                           {d.cdi_device_ids().begin(), d.cdi_device_ids().end()}});
    out[uid] = std::move(r);
  }
  return out;
}

template <typename Stub, typename UnprepareReq, typename UnprepareResp>
std::map<std::string, std::string> DoUnprepare(Stub& stub, const std::vector<KubeletClaim>& claims,
                                               std::chrono::milliseconds deadline) {
  UnprepareReq request;
  AddClaims(request, claims);
  UnprepareResp response;
  grpc::ClientContext ctx;
  SetDeadline(ctx, deadline);
  auto status = stub.NodeUnprepareResources(&ctx, request, &response);
  if (!status.ok()) ThrowStatus("NodeUnprepareResources", status);
  std::map<std::string, std::string> out;
  for (const auto& [uid, entry] : response.claims()) out[uid] = entry.error();
  return out;
}

}  // namespace

const char* DraApiName(DraApi api) { return api == DraApi::kV1 ? "v1" : "v1beta1"; }

FakeKubelet::FakeKubelet(FakeKubeletOptions options) : options_(std::move(options)) {}

FakeKubelet::~FakeKubelet() { Stop(); }

void FakeKubelet::Start() {
  std::filesystem::create_directories(options_.registry_dir);
  thread_ = std::thread([this] { Loop(); });
}

void FakeKubelet::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }  // the loop sees it within one scan_interval
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FakeKubelet::Loop() {
  // Like kubelet's plugin watcher: inotify on the directory, so that a socket
  // re-created with a recycled inode number is still seen as new.
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd >= 0)
    ::inotify_add_watch(fd, options_.registry_dir.c_str(),
                        IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ATTRIB);
  std::set<std::string> created;
  Scan(created);
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
    }
    pollfd p{fd, POLLIN, 0};
    created.clear();
    if (fd >= 0 && ::poll(&p, 1, static_cast<int>(options_.scan_interval.count())) > 0) {
      alignas(inotify_event) char buffer[4096];
      ssize_t n;
      while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
        for (char* at = buffer; at < buffer + n;) {
          auto* event = reinterpret_cast<inotify_event*>(at);
          if (event->len > 0 && (event->mask & (IN_CREATE | IN_MOVED_TO)))
            created.insert((options_.registry_dir / event->name).string());
          at += sizeof(inotify_event) + event->len;
        }
      }
    } else if (fd < 0) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, options_.scan_interval, [this] { return stopping_; });
    }
    Scan(created);
  }
  if (fd >= 0) ::close(fd);
}

void FakeKubelet::Scan(const std::set<std::string>& created) {
  std::map<std::string, uint64_t> now;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.registry_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || entry.path().extension() != ".sock") continue;
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    now[entry.path().string()] = st.st_ino;
  }
  std::vector<std::string> added;
  {
    std::lock_guard lock(mu_);
    for (const auto& [path, inode] : now) {
      auto it = seen_.find(path);
      if (it == seen_.end() || it->second != inode || created.count(path)) added.push_back(path);
    }
    for (const auto& [path, inode] : seen_) {
      if (now.count(path)) continue;
      // Deregistered; its driver falls back to the newest registration left
      // (kubelet 1.33+ keeps them all: a rollout with surge runs two).
      std::erase_if(registrations_, [&](const RegisteredPlugin& p) { return p.socket == path; });
      for (auto it = plugins_.begin(); it != plugins_.end();) {
        if (it->second.socket != path) {
          ++it;
          continue;
        }
        auto newest = std::find_if(registrations_.rbegin(), registrations_.rend(),
                                   [&](const RegisteredPlugin& p) { return p.name == it->first; });
        if (newest == registrations_.rend()) {
          it = plugins_.erase(it);
        } else {
          channels_.erase(it->second.endpoint);
          it->second = *newest;
          ++it;
        }
      }
    }
    seen_ = now;
  }
  for (const auto& path : added) Register(path);
}

void FakeKubelet::Register(const std::filesystem::path& socket) {
  auto stub = reg::Registration::NewStub(Dial(socket.string()));
  reg::InfoRequest request;
  reg::PluginInfo info;
  grpc::ClientContext ctx;
  SetDeadline(ctx, options_.get_info_deadline);
  auto status = stub->GetInfo(&ctx, request, &info);
  auto fail = [&](const std::string& why, bool notify) {
    {
      std::lock_guard lock(mu_);
      failures_.push_back(socket.string() + ": " + why);
      seen_.erase(socket.string());  // retried on the next scan, as kubelet re-probes
    }
    if (!notify) return;
    reg::RegistrationStatus s;
    s.set_plugin_registered(false);
    s.set_error(why);
    reg::RegistrationStatusResponse r;
    grpc::ClientContext c;
    SetDeadline(c, std::chrono::seconds(5));
    (void)stub->NotifyRegistrationStatus(&c, s, &r);
  };
  if (!status.ok()) return fail("GetInfo: " + status.error_message(), false);
  RegisteredPlugin plugin;
  plugin.socket = socket;
  plugin.type = info.type();
  plugin.name = info.name();
  plugin.endpoint = info.endpoint();
  plugin.supported_versions.assign(info.supported_versions().begin(), info.supported_versions().end());
  if (plugin.type != "DRAPlugin") return fail("type \"" + plugin.type + "\" is not DRAPlugin", true);
  if (plugin.name.empty()) return fail("no plugin name", true);
  if (plugin.endpoint.empty() || plugin.endpoint[0] != '/') return fail("endpoint is not an absolute path", true);
  for (const auto& v : plugin.supported_versions) {
    if (std::find(options_.supported_versions.begin(), options_.supported_versions.end(), v) !=
        options_.supported_versions.end()) {
      plugin.chosen_version = v;
      break;
    }
  }
  if (plugin.chosen_version.empty()) return fail("none of the supported versions is known to this kubelet", true);
  reg::RegistrationStatus s;
  s.set_plugin_registered(true);
  reg::RegistrationStatusResponse r;
  grpc::ClientContext c;
  SetDeadline(c, std::chrono::seconds(5));
  auto notified = stub->NotifyRegistrationStatus(&c, s, &r);
  if (!notified.ok()) return fail("NotifyRegistrationStatus: " + notified.error_message(), false);
  {
    std::lock_guard lock(mu_);
    plugin.generation = ++generation_;
    channels_.erase(plugin.endpoint);  // a new server behind the endpoint: dial again
    plugins_[plugin.name] = plugin;
    std::erase_if(registrations_, [&](const RegisteredPlugin& p) { return p.socket == plugin.socket; });
    registrations_.push_back(plugin);
  }
  cv_.notify_all();
}

std::optional<RegisteredPlugin> FakeKubelet::WaitForPlugin(const std::string& driver,
                                                           std::chrono::milliseconds timeout,
                                                           uint64_t after_generation) {
  std::unique_lock lock(mu_);
  const bool found = cv_.wait_for(lock, timeout, [&] {
    auto it = plugins_.find(driver);
    return it != plugins_.end() && it->second.generation > after_generation;
  });
  if (!found) return std::nullopt;
  return plugins_.at(driver);
}

std::optional<RegisteredPlugin> FakeKubelet::Plugin(const std::string& driver) const {
  std::lock_guard lock(mu_);
  auto it = plugins_.find(driver);
  if (it == plugins_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> FakeKubelet::failures() const {
  std::lock_guard lock(mu_);
  return failures_;
}

std::shared_ptr<grpc::Channel> FakeKubelet::ChannelFor(const std::string& driver) {
  std::lock_guard lock(mu_);
  auto it = plugins_.find(driver);
  if (it == plugins_.end()) throw std::runtime_error("driver " + driver + " is not registered");
  auto& channel = channels_[it->second.endpoint];
  if (!channel) channel = Dial(it->second.endpoint);
  return channel;
}

std::map<std::string, KubeletPrepareResult> FakeKubelet::Prepare(const std::string& driver, DraApi api,
                                                                 const std::vector<KubeletClaim>& claims,
                                                                 std::chrono::milliseconds deadline) {
  auto channel = ChannelFor(driver);
  if (api == DraApi::kV1) {
    auto stub = v1::DRAPlugin::NewStub(channel);
    return DoPrepare<v1::DRAPlugin::Stub, v1::NodePrepareResourcesRequest, v1::NodePrepareResourcesResponse>(
        *stub, claims, deadline);
  }
  auto stub = v1beta1::DRAPlugin::NewStub(channel);
  return DoPrepare<v1beta1::DRAPlugin::Stub, v1beta1::NodePrepareResourcesRequest,
                   v1beta1::NodePrepareResourcesResponse>(*stub, claims, deadline);
}

std::map<std::string, std::string> FakeKubelet::Unprepare(const std::string& driver, DraApi api,
                                                          const std::vector<KubeletClaim>& claims,
                                                          std::chrono::milliseconds deadline) {
  auto channel = ChannelFor(driver);
  if (api == DraApi::kV1) {
    auto stub = v1::DRAPlugin::NewStub(channel);
    return DoUnprepare<v1::DRAPlugin::Stub, v1::NodeUnprepareResourcesRequest, v1::NodeUnprepareResourcesResponse>(
        *stub, claims, deadline);
  }
  auto stub = v1beta1::DRAPlugin::NewStub(channel);
  return DoUnprepare<v1beta1::DRAPlugin::Stub, v1beta1::NodeUnprepareResourcesRequest,
                     v1beta1::NodeUnprepareResourcesResponse>(*stub, claims, deadline);
}

}  // namespace dranet::fakes
