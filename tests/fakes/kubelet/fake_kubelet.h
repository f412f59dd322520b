#pragma once
// tests/fakes/kubelet/fake_kubelet.h — a client that behaves like kubelet
// towards a DRA driver, over the real unix sockets.
//
// Registration, as kubelet's plugin watcher does it (kubernetes/kubernetes
// pkg/kubelet/pluginmanager):
// it watches the registration directory (inotify, plus a rescan every
// scan_interval) for *.sock files (names starting
// with '.' are ignored), dials each new or replaced one, calls GetInfo with a
// 1 s deadline, validates the answer (type "DRAPlugin", a name, an absolute
// endpoint, a supported version it knows) and calls NotifyRegistrationStatus
// with the outcome. A removed socket deregisters the plugin. Several
// registrations of one driver (a rollout with surge: one socket per pod) are
// kept, as kubelet 1.33+ keeps them; calls go to the newest, and when its
// socket goes, to the newest left.
// DRA calls: NodePrepareResources / NodeUnprepareResources on the endpoint of
// a registered driver, over the API version asked for (v1 or v1beta1).
//
// Thread-safety: all methods may be called from any thread once Start()ed.
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace grpc {
class Channel;
}

namespace dranet::fakes {

enum class DraApi { kV1, kV1beta1 };
const char* DraApiName(DraApi api);  // "v1", "v1beta1"

struct KubeletClaim {
  std::string namespace_name, name, uid;
};

struct KubeletDevice {
  std::vector<std::string> request_names;
  std::string pool_name;
  std::string device_name;
  std::vector<std::string> cdi_device_ids;
  friend bool operator==(const KubeletDevice&, const KubeletDevice&) = default;
};

struct KubeletPrepareResult {
  std::vector<KubeletDevice> devices;
  std::string error;
  friend bool operator==(const KubeletPrepareResult&, const KubeletPrepareResult&) = default;
};

struct RegisteredPlugin {
  std::filesystem::path socket;  // registration socket
  std::string type, name, endpoint;
  std::vector<std::string> supported_versions;
  std::string chosen_version;  // the first advertised version this kubelet supports
  uint64_t generation = 0;     // increments with every successful registration
};

struct FakeKubeletOptions {
  std::filesystem::path registry_dir;  // <kubelet-root>/plugins_registry
  // Versions this kubelet speaks, as in kubelet ≥1.34.
  std::vector<std::string> supported_versions = {"v1.DRAPlugin", "v1beta1.DRAPlugin"};
  std::chrono::milliseconds get_info_deadline{1000};
  std::chrono::milliseconds scan_interval{50};
};

class FakeKubelet {
 public:
  explicit FakeKubelet(FakeKubeletOptions options);
  ~FakeKubelet();
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  // Starts watching the registration directory (created when missing).
  void Start();
  void Stop();

  // Waits until `driver` is registered with a generation above
  // `after_generation`; nullopt on timeout.
  std::optional<RegisteredPlugin> WaitForPlugin(const std::string& driver, std::chrono::milliseconds timeout,
                                                uint64_t after_generation = 0);
  std::optional<RegisteredPlugin> Plugin(const std::string& driver) const;
  // Registration failures seen so far ("<socket>: <reason>").
  std::vector<std::string> failures() const;

  // DRA calls on the registered endpoint of `driver`. Throw std::runtime_error
  // on a gRPC error (status code and message) or when the driver is unknown.
  std::map<std::string, KubeletPrepareResult> Prepare(const std::string& driver, DraApi api,
                                                      const std::vector<KubeletClaim>& claims,
                                                      std::chrono::milliseconds deadline = std::chrono::seconds(45));
  std::map<std::string, std::string> Unprepare(const std::string& driver, DraApi api,
                                               const std::vector<KubeletClaim>& claims,
                                               std::chrono::milliseconds deadline = std::chrono::seconds(45));

 private:
  void Loop();
  // Registers sockets that are new, replaced, or in `created` (inotify).
  void Scan(const std::set<std::string>& created);
  void Register(const std::filesystem::path& socket);
  // One connection per endpoint, reused (as kubelet does).
  std::shared_ptr<grpc::Channel> ChannelFor(const std::string& driver);

  FakeKubeletOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, uint64_t> seen_;            // socket path -> inode
  std::map<std::string, RegisteredPlugin> plugins_;  // by driver name: the newest registration
  std::vector<RegisteredPlugin> registrations_;     // every registration, oldest first
  std::vector<std::string> failures_;
  uint64_t generation_ = 0;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;  // by endpoint
  std::thread thread_;
};

}  // namespace dranet::fakes
