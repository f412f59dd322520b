#pragma once
// core/inventory/monitor.h — re-discovery when the node's network changes.
//
// DiscoveryMonitor listens on rtnetlink (link, IPv4/IPv6 address and route
// groups) and on kernel uevents (RDMA, net and PCI hot-plug), and re-runs
// discovery when something that could change the published devices changed
// (netlink_event_filter.h: a pod's veth churn does not), at most once per coalescing window
// (250 ms by default), plus a periodic resync. Each run hands the complete
// device list to the callback, on the monitor's own thread ("inv-monitor").
//
// Namespaces: the monitor thread inherits the network and mount namespaces of
// the thread that calls Start(), so it watches the same node that a
// Discoverer called from that thread sees.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "inventory/device.h"
#include "inventory/inventory.h"

namespace dranet::inventory {

class DiscoveryMonitor {
 public:
  using Callback = std::function<void(std::vector<Device> devices)>;

  struct Options {
    // Events closer together than this are served by one discovery.
    std::chrono::milliseconds coalesce_window{250};
    // Rediscover at least this often even without events.
    std::chrono::milliseconds resync_period{std::chrono::minutes(1)};
    // Event-triggered discoveries are rate limited as DRANET's inventory
    // (--inventory-min-poll-interval / --inventory-poll-burst): a bucket of
    // `event_burst` discoveries, refilled one per `event_min_interval`.
    std::chrono::milliseconds event_min_interval{std::chrono::seconds(2)};
    int event_burst = 5;
    // Links of these kinds are never published (e.g. "veth" under DRANET's
    // default filter): their events do not trigger a discovery.
    std::set<std::string> ignored_link_kinds;
  };

  // `discoverer` and `log` must outlive the monitor; `callback` runs on the
  // monitor thread and must not call Stop().
  DiscoveryMonitor(Discoverer& discoverer, Callback callback, Logger& log, Options options);
  DiscoveryMonitor(Discoverer& discoverer, Callback callback, Logger& log)
      : DiscoveryMonitor(discoverer, std::move(callback), log, Options{}) {}
  ~DiscoveryMonitor();
  DiscoveryMonitor(const DiscoveryMonitor&) = delete;
  DiscoveryMonitor& operator=(const DiscoveryMonitor&) = delete;

  // Subscribes to rtnetlink, runs a first discovery (callback included) on the
  // monitor thread and keeps watching. Throws std::runtime_error when the
  // rtnetlink socket cannot be opened. Calling Start() twice is an error.
  void Start();

  // Stops watching and joins the thread; idempotent.
  void Stop();

  // Asks for a discovery as if an event had arrived (e.g. after an RDMA
  // device came back from a pod). Thread-safe.
  void RequestRescan();

  // Discoveries run so far (for tests and metrics).
  uint64_t discoveries() const { return discoveries_.load(); }
  // Batches of rtnetlink events that could not change the inventory and so
  // ran no discovery (netlink_event_filter.h).
  uint64_t events_ignored() const { return events_ignored_.load(); }

 private:
  void Run();
  void ReadLinkDump();

  Discoverer& discoverer_;
  Callback callback_;
  Logger& log_;
  Options options_;
  int wake_fd_ = -1;  // eventfd: Stop() and RequestRescan() wake the poll loop
  std::atomic<bool> stopping_{false};
  std::atomic<bool> rescan_requested_{false};
  std::atomic<uint64_t> discoveries_{0};
  std::atomic<uint64_t> events_ignored_{0};
  std::mutex start_stop_mu_;
  std::thread thread_;
  struct Sockets;
  std::unique_ptr<Sockets> sockets_;
};

}  // namespace dranet::inventory
