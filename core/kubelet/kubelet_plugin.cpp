#include "kubelet/kubelet_plugin.h"

#include <net/if.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>

#include "base/unique_fd.h"
#include "base/utf8.h"
#include "dra_v1.grpc.pb.h"
#include "dra_health_v1.grpc.pb.h"
#include "dra_health_v1alpha1.grpc.pb.h"
#include "dra_v1beta1.grpc.pb.h"
#include "inventory/inventory.h"
#include "pluginregistration.grpc.pb.h"

namespace dranet::kubelet {
namespace {

namespace v1 = k8s::io::kubelet::pkg::apis::dra::v1;
namespace v1beta1 = k8s::io::kubelet::pkg::apis::dra::v1beta1;
namespace reg = pluginregistration;

// Server threads a socket keeps waiting for calls after a burst (above).
constexpr int kMaxIdleServerThreads = 64;

// How soon the socket watcher tries again after a socket could not be made.
constexpr std::chrono::milliseconds kSocketRetryAfterFailure{1000};

// When our answer must be ready: a margin before the caller's gRPC deadline
// (kubelet's is 45 s), so that the answer still reaches it. No deadline: max.
std::chrono::steady_clock::time_point AnswerBy(std::chrono::system_clock::time_point caller_deadline) {
  constexpr auto kMargin = std::chrono::seconds(2);
  const auto left = caller_deadline - std::chrono::system_clock::now();
  if (left > std::chrono::hours(24)) return std::chrono::steady_clock::time_point::max();
  return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(left) -
         kMargin;
}

// Both DRA versions have the same messages but for v1's Device.share_id
// (set for a share of a device), so one template serves both.
template <typename Service, typename PrepareReq, typename PrepareResp, typename UnprepareReq,
          typename UnprepareResp>
class DraGrpcService final : public Service {
 public:
  DraGrpcService(DraService& service, std::string version) : service_(service), version_(std::move(version)) {}

  grpc::Status NodePrepareResources(grpc::ServerContext* context, const PrepareReq* request,
                                    PrepareResp* response) override {
    auto answers = service_.Prepare(Claims(*request), AnswerBy(context->deadline()));
    for (const auto& [uid, answer] : answers) {
      auto& entry = (*response->mutable_claims())[uid];
      entry.set_error(ToValidUtf8(answer.error));
      for (const auto& d : answer.devices) {
        auto* device = entry.add_devices();
        for (const auto& r : d.request_names) device->add_request_names(r);
        device->set_pool_name(d.pool_name);
        device->set_device_name(d.device_name);
        for (const auto& id : d.cdi_device_ids) device->add_cdi_device_ids(id);
        if constexpr (requires { device->set_share_id(d.share_id); })
          if (!d.share_id.empty()) device->set_share_id(d.share_id);
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status NodeUnprepareResources(grpc::ServerContext* context, const UnprepareReq* request,
                                      UnprepareResp* response) override {
    for (const auto& [uid, error] : service_.Unprepare(Claims(*request), AnswerBy(context->deadline())))
      (*response->mutable_claims())[uid].set_error(ToValidUtf8(error));
    return grpc::Status::OK;
  }

 private:
  template <typename Req>
  static std::vector<ClaimRequest> Claims(const Req& request) {
    std::vector<ClaimRequest> claims;
    for (const auto& c : request.claims()) claims.push_back({c.namespace_(), c.name(), c.uid()});
    return claims;
  }
  DraService& service_;
  std::string version_;
};

using DraV1 = DraGrpcService<v1::DRAPlugin::Service, v1::NodePrepareResourcesRequest,
                             v1::NodePrepareResourcesResponse, v1::NodeUnprepareResourcesRequest,
                             v1::NodeUnprepareResourcesResponse>;
using DraV1beta1 = DraGrpcService<v1beta1::DRAPlugin::Service, v1beta1::NodePrepareResourcesRequest,
                                  v1beta1::NodePrepareResourcesResponse,
                                  v1beta1::NodeUnprepareResourcesRequest,
                                  v1beta1::NodeUnprepareResourcesResponse>;

// The kubelet's health stream (dra-health v1 and v1alpha1: the same
// messages). The full device list goes out at once, again whenever the
// reporter has a newer report, and at least every kHealthResendPeriod, so
// that the kubelet never reaches the timeout we send with each entry. The
// stream ends when the kubelet cancels it or the plugin stops.
template <typename Service, typename Request, typename Response, typename DeviceHealth>
class HealthGrpcService final : public Service {
 public:
  HealthGrpcService(const health::HealthReporter& reporter, const std::string& pool, const std::atomic<bool>& stopping,
                    Logger& log, std::string version)
      : reporter_(reporter), pool_(pool), stopping_(stopping), log_(log), version_(std::move(version)) {}

  grpc::Status NodeWatchResources(grpc::ServerContext* context, const Request*,
                                  grpc::ServerWriter<Response>* writer) override {
    log_.Info("kubelet opened the device health stream", {{"version", version_}});
    using Clock = std::chrono::steady_clock;
    uint64_t sent = 0;
    auto open = [&] { return !stopping_.load() && !context->IsCancelled(); };
    while (open()) {
      const auto report = reporter_.Current();
      if (report.generation > 0) {
        if (!writer->Write(Build(report))) break;  // the kubelet went away
        sent = report.generation;
      }
      // Until something changed or the resend is due; awake every second
      // to see a cancelled stream or a stopping plugin.
      const auto resend_at = Clock::now() + (report.generation > 0 ? kHealthResendPeriod : std::chrono::seconds(1));
      while (open() && Clock::now() < resend_at) {
        if (reporter_.WaitNewer(sent, std::min(resend_at, Clock::now() + std::chrono::seconds(1)))) break;
      }
    }
    log_.Info("device health stream ended", {{"version", version_}});
    return grpc::Status::OK;
  }

 private:
  Response Build(const health::HealthReport& report) const {
    Response response;
    for (const auto& d : report.devices) {
      DeviceHealth* entry = response.add_devices();
      entry->mutable_device()->set_pool_name(pool_);
      entry->mutable_device()->set_device_name(d.device);
      entry->set_health(static_cast<decltype(entry->health())>(d.verdict.health));
      entry->set_last_updated_time(std::chrono::duration_cast<std::chrono::seconds>(
          d.checked.time_since_epoch()).count());
      entry->set_health_check_timeout_seconds(kHealthCheckTimeoutSeconds);
      entry->set_message(d.verdict.message);
    }
    return response;
  }

  const health::HealthReporter& reporter_;
  const std::string& pool_;
  const std::atomic<bool>& stopping_;
  Logger& log_;
  std::string version_;
};

using HealthV1 = HealthGrpcService<::v1::DRAResourceHealth::Service, ::v1::NodeWatchResourcesRequest,
                                   ::v1::NodeWatchResourcesResponse, ::v1::DeviceHealth>;
using HealthV1alpha1 = HealthGrpcService<::v1alpha1::DRAResourceHealth::Service, ::v1alpha1::NodeWatchResourcesRequest,
                                         ::v1alpha1::NodeWatchResourcesResponse, ::v1alpha1::DeviceHealth>;

ino_t SocketInode(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
  return st.st_ino;
}

}  // namespace

class KubeletPlugin::Servers {
 public:
  class Registration final : public reg::Registration::Service {
   public:
    explicit Registration(Servers& owner) : owner_(owner) {}
    grpc::Status GetInfo(grpc::ServerContext*, const reg::InfoRequest*, reg::PluginInfo* info) override {
      info->set_type("DRAPlugin");
      info->set_name(owner_.options_.driver_name);
      info->set_endpoint(owner_.dra_path_.string());
      for (const char* version : kSupportedVersions) info->add_supported_versions(version);
      if (owner_.health_ != nullptr)
        for (const char* version : kHealthServices) info->add_supported_versions(version);
      owner_.log_.Verbose(2, "kubelet asked for plugin info", {{"socket", owner_.reg_path_.string()}});
      return grpc::Status::OK;
    }
    grpc::Status NotifyRegistrationStatus(grpc::ServerContext*, const reg::RegistrationStatus* status,
                                          reg::RegistrationStatusResponse*) override {
      {
        std::lock_guard lock(owner_.mu_);
        owner_.registered_ = status->plugin_registered();
        owner_.registration_error_ = status->error();
      }
      if (owner_.status_listener_) owner_.status_listener_();
      if (status->plugin_registered())
        owner_.log_.Info("registered with kubelet", {{"driver", owner_.options_.driver_name},
                                                     {"endpoint", owner_.dra_path_.string()}});
      else
        owner_.log_.Error("kubelet rejected the registration",
                          {{"driver", owner_.options_.driver_name}, {"error", status->error()}});
      return grpc::Status::OK;
    }

   private:
    Servers& owner_;
  };

  Servers(const KubeletPluginOptions& options, DraService& service, const health::HealthReporter* health,
          Logger& log, std::function<void()> status_listener)
      : options_(options),
        health_(health),
        log_(log),
        status_listener_(std::move(status_listener)),
        reg_path_(RegistrationSocketPath(options)),
        dra_path_(DraSocketPath(options)),
        v1_(service, "v1"),
        v1beta1_(service, "v1beta1"),
        registration_(*this) {
    if (health_ != nullptr) {
      health_v1_ = std::make_unique<HealthV1>(*health_, options_.node_name, stopping_, log_, "v1");
      health_v1alpha1_ = std::make_unique<HealthV1alpha1>(*health_, options_.node_name, stopping_, log_, "v1alpha1");
    }
  }

  ~Servers() { Stop(); }

  void Start() {
    if (!options_.pod_uid.empty()) RemoveDeadSiblings();
    Serve(dra_);
    Serve(reg_);
    stop_fd_.Reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!stop_fd_.valid()) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    watcher_ = std::thread([this] { Watch(); });
    pthread_setname_np(watcher_.native_handle(), "kubelet-sockets");
  }

  void Stop() {
    stopping_ = true;  // health streams end within a second
    if (watcher_.joinable()) {
      const uint64_t one = 1;
      [[maybe_unused]] ssize_t written = ::write(stop_fd_.get(), &one, sizeof(one));
      watcher_.join();
    }
    // Registration first: kubelet stops sending work before the DRA socket goes.
    if (options_.deregistration_grace.count() > 0 && reg_.server) {
      // The file goes first, so the kubelet deregisters this instance and
      // turns to another while this one still answers.
      if (reg_.inode != 0 && SocketInode(reg_path_) == reg_.inode) ::unlink(reg_path_.c_str());
      reg_.inode = 0;
      log_.Info("kubelet registration socket removed; still answering for a while",
                {{"socket", reg_path_.string()},
                 {"graceMs", static_cast<int64_t>(options_.deregistration_grace.count())}});
      std::this_thread::sleep_for(options_.deregistration_grace);
    }
    Shutdown(reg_);
    Shutdown(dra_);
    std::lock_guard lock(mu_);
    registered_ = false;
  }

  bool registered() const {
    std::lock_guard lock(mu_);
    return registered_;
  }
  std::string registration_error() const {
    std::lock_guard lock(mu_);
    return registration_error_;
  }
  uint64_t restarts() const { return restarts_.load(); }
  uint64_t failed_restarts() const { return failed_restarts_.load(); }
  const std::filesystem::path& reg_path() const { return reg_path_; }
  const std::filesystem::path& dra_path() const { return dra_path_; }

 private:
  struct Endpoint {
    bool registration = false;
    std::unique_ptr<grpc::Server> server;
    ino_t inode = 0;
  };

  const std::filesystem::path& PathOf(const Endpoint& e) const { return e.registration ? reg_path_ : dra_path_; }

  void Serve(Endpoint& endpoint) {
    const auto& path = PathOf(endpoint);
    if (path.string().size() >= sizeof(sockaddr_un{}.sun_path))
      throw std::runtime_error("socket path " + path.string() + " is longer than " +
                               std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
                               " bytes; use a shorter --kubelet-root-dir");
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) throw std::runtime_error("cannot create " + path.parent_path().string() + ": " + ec.message());
    if (std::filesystem::is_directory(std::filesystem::symlink_status(path, ec)))
      throw std::runtime_error("socket path " + path.string() + " is a directory");
    if (std::filesystem::remove(path, ec)) log_.Info("removed stale socket", {{"socket", path.string()}});
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("unix://" + path.string(), grpc::InsecureServerCredentials(), &port);
    // Each call holds a server thread until its answer. With gRPC's default
    // of at most 2 idle threads, a burst of calls (kubelet starting many pods)
    // made and ended a thread per call; idle threads beyond one still end
    // after gRPC's 10 s poll timeout, so this costs nothing when idle.
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, kMaxIdleServerThreads);
    if (endpoint.registration) {
      builder.RegisterService(&registration_);
    } else {
      builder.RegisterService(&v1_);
      builder.RegisterService(&v1beta1_);
      if (health_v1_) {
        builder.RegisterService(health_v1_.get());
        builder.RegisterService(health_v1alpha1_.get());
      }
    }
    endpoint.server = builder.BuildAndStart();
    if (!endpoint.server || port == 0) {
      endpoint.server.reset();  // not served: the watcher tries again
      throw std::runtime_error("cannot serve gRPC on " + path.string() + " (check permissions on " +
                               path.parent_path().string() + ")");
    }
    endpoint.inode = SocketInode(path);
    log_.Info("serving kubelet socket", {{"socket", path.string()},
                                         {"services", endpoint.registration ? "pluginregistration.Registration"
                                                      : health_v1_ ? "dra.v1.DRAPlugin,dra.v1beta1.DRAPlugin,"
                                                                     "v1.DRAResourceHealth,v1alpha1.DRAResourceHealth"
                                                                   : "dra.v1.DRAPlugin,dra.v1beta1.DRAPlugin"}});
  }

  void Shutdown(Endpoint& endpoint) {
    if (!endpoint.server) return;
    endpoint.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    endpoint.server->Wait();
    endpoint.server.reset();
    // Remove our socket only: a newer instance may have replaced the file.
    const auto& path = PathOf(endpoint);
    if (endpoint.inode != 0 && SocketInode(path) == endpoint.inode) ::unlink(path.c_str());
    endpoint.inode = 0;
  }

  // Waits for a change in either socket's directory (inotify), for Stop(),
  // or for socket_check_interval, whichever comes first; then re-serves a
  // socket that was removed or replaced. Without inotify (no instances left
  // on the node) only the interval wakes it. After a socket could not be
  // made again it retries within kSocketRetryAfterFailure: what blocked it
  // (a file where its directory belongs, a full disk) may go away without a
  // change inotify sees.
  void Watch() {
    UniqueFd changes(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!changes.valid()) {
      log_.Warning("cannot watch the kubelet socket directories; checking them every interval instead",
                   {{"error", std::strerror(errno)},
                    {"intervalMs", static_cast<int64_t>(options_.socket_check_interval.count())}});
    }
    bool all_served = true;
    for (;;) {
      // Re-armed every round: a directory removed and made again by Serve()
      // is a new inode that needs a new watch (the same one is kept as is).
      if (changes.valid()) {
        for (const auto& path : {reg_path_, dra_path_}) {
          ::inotify_add_watch(changes.get(), path.parent_path().c_str(),
                              IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
                                  IN_ONLYDIR);
        }
      }
      // A change made before the watches were armed (just after Start, or
      // while the last round served a socket again) sends no event.
      if (all_served && !SocketsAsServed()) {
        all_served = CheckSockets();
        continue;
      }
      pollfd fds[2] = {{stop_fd_.get(), POLLIN, 0}, {changes.get(), POLLIN, 0}};
      const auto wait = all_served ? options_.socket_check_interval
                                   : std::min(options_.socket_check_interval, kSocketRetryAfterFailure);
      int ready = ::poll(fds, 2, static_cast<int>(wait.count()));
      if (ready > 0 && (fds[0].revents & POLLIN)) return;
      if (ready > 0 && (fds[1].revents & POLLIN)) {
        alignas(inotify_event) char drained[4096];
        while (::read(changes.get(), drained, sizeof(drained)) > 0) {
        }
      }
      all_served = CheckSockets();
    }
  }

  // Sockets of other instances (per-pod names) that no process answers any
  // more: a pod killed before it could remove them. The kubelet would try to
  // register them again at each of its restarts.
  void RemoveDeadSiblings() {
    const std::string driver = options_.driver_name;
    auto dead_sibling = [&](const std::filesystem::path& file, const std::string& prefix, const std::string& suffix) {
      const std::string name = file.filename().string();
      if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
        return false;
      if (file == reg_path_ || file == dra_path_) return false;
      UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      if (!fd.valid() || file.string().size() >= sizeof(addr.sun_path)) return false;
      std::memcpy(addr.sun_path, file.c_str(), file.string().size());
      return ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 &&
             errno == ECONNREFUSED;
    };
    for (const auto& [dir, prefix, suffix] :
         {std::tuple{reg_path_.parent_path(), driver + "-", std::string("-reg.sock")},
          std::tuple{dra_path_.parent_path(), std::string("dra-"), std::string(".sock")}}) {
      std::error_code ec;
      for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!dead_sibling(it->path(), prefix, suffix)) continue;
        if (::unlink(it->path().c_str()) == 0)
          log_.Info("removed the socket of an instance that is gone", {{"socket", it->path().string()}});
      }
    }
  }

  // True when both sockets are served and still the files this process made.
  bool SocketsAsServed() const {
    for (const Endpoint* e : {&dra_, &reg_})
      if (!e->server || SocketInode(PathOf(*e)) != e->inode) return false;
    return true;
  }

  // False when a socket that needed serving again could not be.
  bool CheckSockets() {
    bool all_served = true;
    for (Endpoint* e : {&dra_, &reg_}) {
      const bool retry = !e->server;  // making it again failed last time
      if (!retry && SocketInode(PathOf(*e)) == e->inode) continue;
      if (!retry)
        log_.Warning("kubelet socket removed or replaced; serving it again", {{"socket", PathOf(*e).string()}});
      try {
        e->inode = 0;  // not ours any more: Shutdown must not unlink it
        Shutdown(*e);
        if (e->registration) {
          {
            std::lock_guard state_lock(mu_);
            registered_ = false;
          }
          if (status_listener_) status_listener_();
        }
        Serve(*e);
        ++restarts_;
      } catch (const std::exception& ex) {
        all_served = false;
        ++failed_restarts_;
        // Every second while it lasts: the first failure is an error, the
        // retries are verbose.
        const std::vector<LogField> fields = {{"socket", PathOf(*e).string()},
                                              {"error", ex.what()},
                                              {"retryMs", static_cast<int64_t>(kSocketRetryAfterFailure.count())}};
        if (retry) log_.Verbose(1, "still cannot re-create kubelet socket; retrying", fields);
        else log_.Error("cannot re-create kubelet socket; retrying", fields);
      }
    }
    return all_served;
  }

  const KubeletPluginOptions& options_;
  const health::HealthReporter* health_;
  Logger& log_;
  std::function<void()> status_listener_;
  std::filesystem::path reg_path_, dra_path_;
  std::atomic<bool> stopping_{false};
  DraV1 v1_;
  DraV1beta1 v1beta1_;
  std::unique_ptr<HealthV1> health_v1_;
  std::unique_ptr<HealthV1alpha1> health_v1alpha1_;
  Registration registration_;
  Endpoint dra_{false, nullptr, 0};
  Endpoint reg_{true, nullptr, 0};
  mutable std::mutex mu_;
  bool registered_ = false;
  std::string registration_error_;
  std::atomic<uint64_t> restarts_{0};
  std::atomic<uint64_t> failed_restarts_{0};
  UniqueFd stop_fd_;  // eventfd, made by Start() and written by Stop()
  std::thread watcher_;
};

KubeletPlugin::KubeletPlugin(KubeletPluginOptions options, InventoryProvider inventory, ClaimLookup claims,
                             state::PreparedClaims& prepared, plugins::PluginHost* plugin_host, Logger& log)
    : options_(std::move(options)),
      inventory_(std::move(inventory)),
      claims_(std::move(claims)),
      prepared_(prepared),
      plugin_host_(plugin_host),
      log_(log) {
  if (options_.node_name.empty()) throw std::invalid_argument("KubeletPlugin needs the node name (our pool name)");
}

KubeletPlugin::~KubeletPlugin() { Stop(); }

void KubeletPlugin::SetEventSink(ClaimEventSink events) { events_ = std::move(events); }
void KubeletPlugin::SetStatusListener(std::function<void()> listener) { status_listener_ = std::move(listener); }
void KubeletPlugin::SetOperationObserver(OperationObserver observer) { observer_ = std::move(observer); }
void KubeletPlugin::SetHostNetworkReader(HostNetworkReader reader) { host_network_ = std::move(reader); }
void KubeletPlugin::SetHealthReporter(const health::HealthReporter* health) { health_ = health; }
void KubeletPlugin::SetProfileProvider(std::shared_ptr<ProfileProvider> profiles) { profiles_ = std::move(profiles); }

void KubeletPlugin::Start() {
  if (servers_) return;
  // gRPC locks absl mutexes on every call. Debian's absl is built with the
  // lock-order cycle tracker on (a debugging aid that release builds of absl
  // leave off); it cost a few per cent of the CPU of concurrent prepares.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  DraServiceOptions service_options;
  service_options.plan.driver_name = options_.driver_name;
  service_options.plan.pool_name = options_.node_name;
  service_options.plan.dev_root = options_.host_root / "dev";
  service_options.plan.rdma_exclusive = options_.rdma_exclusive;
  service_options.plan.copy_host_routes = options_.copy_host_routes;
  service_options.prepare_workers = options_.prepare_workers;
  service_options.cdi_dir = options_.cdi_dir;
  DraServiceDeps deps;
  deps.claims = claims_;
  deps.inventory = inventory_;
  deps.prepared = &prepared_;
  if (plugin_host_ != nullptr)
    deps.inject = [host = plugin_host_](const plugins::ClaimRef& ref, const std::vector<inventory::Device>& devices) {
      return host->Inject(ref, devices);
    };
  HostNetworkReader network = host_network_ ? host_network_ : [root = options_.host_root,
                                                                source = options_.host_network_source, &log = log_] {
    inventory::DiscoveryOptions discovery;
    discovery.host_root = root;
    discovery.netlink_source = source;
    return inventory::ReadNetlinkFacts(discovery, log);
  };
  deps.host = LiveHostAccess(std::move(network), profiles_);
  deps.events = events_;
  deps.observer = observer_;
  deps.netdevs = netdev_applier_;
  if (!service_) service_ = std::make_unique<DraService>(service_options, std::move(deps), log_);
  auto servers = std::make_unique<Servers>(options_, *service_, health_, log_, status_listener_);
  servers->Start();
  servers_ = std::move(servers);
}

void KubeletPlugin::Stop() {
  if (!servers_) return;
  servers_->Stop();
  servers_.reset();
  log_.Info("kubelet plugin stopped", {{"driver", options_.driver_name}});
}

bool KubeletPlugin::registered() const { return servers_ && servers_->registered(); }
std::string KubeletPlugin::registration_error() const { return servers_ ? servers_->registration_error() : ""; }
uint64_t KubeletPlugin::socket_restarts() const { return servers_ ? servers_->restarts() : 0; }
uint64_t KubeletPlugin::failed_socket_restarts() const { return servers_ ? servers_->failed_restarts() : 0; }

namespace {
// The infix the pod UID adds to a socket name ("" without one).
std::string PodInfix(const KubeletPluginOptions& options) {
  if (options.pod_uid.empty()) return "";
  for (char c : options.pod_uid)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-')
      throw std::invalid_argument("pod UID \"" + options.pod_uid + "\" is not a plain name ([A-Za-z0-9-]+)");
  return "-" + options.pod_uid;
}
}  // namespace

std::filesystem::path RegistrationSocketPath(const KubeletPluginOptions& options) {
  return options.kubelet_root_dir / "plugins_registry" / (options.driver_name + PodInfix(options) + "-reg.sock");
}
std::filesystem::path DraSocketPath(const KubeletPluginOptions& options) {
  return options.kubelet_root_dir / "plugins" / options.driver_name / ("dra" + PodInfix(options) + ".sock");
}

std::filesystem::path KubeletPlugin::registration_socket() const { return RegistrationSocketPath(options_); }
std::filesystem::path KubeletPlugin::dra_socket() const { return DraSocketPath(options_); }

DraService& KubeletPlugin::service() {
  if (!service_) throw std::logic_error("KubeletPlugin::service() before Start()");
  return *service_;
}

ClaimLookup ClaimLookupFrom(kube::ResourceClaimReader& reader) {
  return [&reader](const std::string& ns, const std::string& name, const std::string& uid, std::stop_token stop) {
    return reader.Get(ns, name, uid, stop);
  };
}

}  // namespace dranet::kubelet
