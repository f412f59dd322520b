#pragma once
// core/health/health_monitor.h — the health of every device dranet
// publishes or holds in a pod, kept current for the kubelet's health stream
// (dra-health NodeWatchResources), the slice's taints and /metrics.
//
// The devices are those of the last discovery (SetDevices) plus the netdevs
// the mover holds in pods (HeldNetdevSource): a netdev in a pod leaves the
// host's discovery, but its pod still wants to know it works. Each check
// assesses every device (device_health.h): sysfs under the host root, the
// host's links, each held netdev's link in its pod's namespace.
//
// A check runs, on the monitor's own thread ("health"), when something that
// can change an answer happened, events closer than `coalesce` served by
// one check:
//   - rtnetlink link events of the host naming one of the devices' netdevs
//     (a pod's veth churn does not wake it);
//   - rtnetlink link events inside each pod namespace holding a netdev
//     (carrier lost or back, the pod taking it down);
//   - inotify on each RDMA port directory (a snapshot's state files; sysfs
//     attributes do not notify);
//   - SetDevices() and PodsChanged();
// and at least every `recheck_period` (30 s, the kubelet's default health
// timeout: nothing is polled faster), which also catches what no event
// reports (an IB port's state on hardware).
//
// Readers see a HealthReport: every device's verdict and when it was last
// checked; `generation` grows whenever a verdict or the device set changed,
// and WaitNewer() blocks for that. Thread-safe.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "health/device_health.h"
#include "inject/netns_mover.h"
#include "inventory/device.h"
#include "inventory/netlink_facts.h"

namespace dranet::health {

struct DeviceReport {
  std::string device;  // the published device name (pool = the node)
  Verdict verdict;
  std::chrono::system_clock::time_point checked;  // when this verdict was last confirmed
  std::chrono::system_clock::time_point since;    // when the verdict last changed
};

struct HealthReport {
  uint64_t generation = 0;  // 0: nothing checked yet
  std::vector<DeviceReport> devices;  // by device name
};

// What the kubelet's health stream and the slice publisher read.
class HealthReporter {
 public:
  virtual ~HealthReporter() = default;
  virtual HealthReport Current() const = 0;
  // Blocks until a report newer than `generation` exists (true), or until
  // `deadline` or the reporter stops (false).
  virtual bool WaitNewer(uint64_t generation, std::chrono::steady_clock::time_point deadline) const = 0;
};

class HealthMonitor : public HealthReporter {
 public:
  struct Options {
    std::string host_root = "/";
    std::chrono::milliseconds recheck_period{std::chrono::seconds(30)};
    std::chrono::milliseconds coalesce{100};
    // Watch the host's rtnetlink link events (off when the host's links come
    // from a snapshot and never change).
    bool watch_host_links = true;
  };
  // The host's links, read again at each check (the kernel's, or a snapshot's).
  using HostLinkReader = std::function<std::vector<inventory::LinkFacts>()>;
  // The netdevs held in pods (NetnsMover::HeldNetdevs); may be empty.
  using HeldNetdevSource = std::function<std::vector<inject::HeldNetdev>()>;
  // Told of each change of a device's verdict (not of its first one).
  using TransitionObserver = std::function<void(const std::string& device, Health from, const Verdict& to)>;

  HealthMonitor(Options options, HostLinkReader host_links, HeldNetdevSource held, Logger& log);
  ~HealthMonitor() override;
  HealthMonitor(const HealthMonitor&) = delete;
  HealthMonitor& operator=(const HealthMonitor&) = delete;

  void SetTransitionObserver(TransitionObserver observer);  // before Start()

  // Opens the host event socket, runs the first check and keeps watching.
  // Throws std::runtime_error when the event socket cannot be opened.
  void Start();
  void Stop();  // idempotent; wakes every WaitNewer()

  // The devices of the last discovery; checked at once.
  void SetDevices(std::vector<inventory::Device> devices);
  // A pod got or gave back netdevs; checked at once.
  void PodsChanged();

  HealthReport Current() const override;
  bool WaitNewer(uint64_t generation, std::chrono::steady_clock::time_point deadline) const override;

  uint64_t checks() const { return checks_.load(); }
  // Batches of host link events that named none of the devices (no check).
  uint64_t link_events_ignored() const { return link_events_ignored_.load(); }
  // How often the RDMA port directories to watch were derived again (opens
  // and readlinks per port): on a device change, an inotify event, the recheck.
  uint64_t port_watch_syncs() const { return port_watch_syncs_.load(); }

 private:
  struct PodWatch;
  void Run();
  void Check(bool rewatch);
  void Wake();
  void SyncPodWatches(const std::vector<inject::HeldNetdev>& held);
  void SyncPortWatches(const std::vector<inventory::Device>& devices);
  bool HostEventNamesDevice(int fd);

  Options options_;
  HostLinkReader host_links_;
  HeldNetdevSource held_;
  Logger& log_;
  TransitionObserver observer_;

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::vector<inventory::Device> devices_;  // guarded by mu_
  HealthReport report_;                     // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_

  // Owned by the monitor thread.
  std::map<std::string, std::string> watched_names_;  // host netdev name -> device (for event filtering)
  std::mutex names_mu_;
  std::vector<std::unique_ptr<PodWatch>> pod_watches_;
  std::map<int, std::string> port_watches_;  // inotify wd -> directory
  std::string port_subjects_;                // the devices port_watches_ were derived for
  int host_events_fd_ = -1;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<uint64_t> checks_{0};
  std::atomic<uint64_t> link_events_ignored_{0};
  std::atomic<uint64_t> port_watch_syncs_{0};
  std::thread thread_;
};

}  // namespace dranet::health
