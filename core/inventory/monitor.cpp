#include "inventory/monitor.h"

#include "inventory/netlink_event_filter.h"

#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <set>
#include <string>
#include <string_view>

namespace dranet::inventory {
namespace {

struct SocketDeleter {
  void operator()(nl_sock* socket) const { nl_socket_free(socket); }
};
using SocketPtr = std::unique_ptr<nl_sock, SocketDeleter>;

// Kernel uevent multicast group (NETLINK_KOBJECT_UEVENT).
constexpr int kKernelUeventGroup = 1;
// Event bursts (hundreds of VFs created at once) must not overflow the socket.
constexpr int kReceiveBufferBytes = 4 * 1024 * 1024;

// What the rtnetlink messages read so far amount to.
struct RtnetlinkReader {
  NetlinkEventFilter filter;
  bool relevant = false;   // some message could change the published inventory
  bool dump_done = false;  // the start-up link dump ended
};

int ClassifyMessage(nl_msg* message, void* arg) {
  auto* reader = static_cast<RtnetlinkReader*>(arg);
  if (reader->filter.Relevant(nlmsg_hdr(message))) reader->relevant = true;
  return NL_OK;
}

int DumpFinished(nl_msg*, void* arg) {
  static_cast<RtnetlinkReader*>(arg)->dump_done = true;
  return NL_OK;
}

SocketPtr OpenRtnetlink(RtnetlinkReader& reader) {
  SocketPtr socket(nl_socket_alloc());
  if (!socket) throw std::runtime_error("cannot allocate a netlink socket for the discovery monitor");
  nl_socket_disable_seq_check(socket.get());
  nl_socket_modify_cb(socket.get(), NL_CB_VALID, NL_CB_CUSTOM, ClassifyMessage, &reader);
  nl_socket_modify_cb(socket.get(), NL_CB_FINISH, NL_CB_CUSTOM, DumpFinished, &reader);
  int error = nl_connect(socket.get(), NETLINK_ROUTE);
  if (error >= 0) {
    error = nl_socket_add_memberships(socket.get(), RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
                                      RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, 0);
  }
  if (error < 0) {
    throw std::runtime_error(std::string("cannot subscribe to rtnetlink events: ") + nl_geterror(error));
  }
  nl_socket_set_nonblocking(socket.get());
  nl_socket_set_buffer_size(socket.get(), kReceiveBufferBytes, 0);
  // The links that exist now, so that the filter knows them before their
  // first event (their replies arrive on this socket like events).
  if (const int sent = nl_rtgen_request(socket.get(), RTM_GETLINK, AF_UNSPEC, NLM_F_DUMP); sent < 0) {
    reader.dump_done = true;  // without it, every link's first event counts as new
  }
  return socket;
}

// Kernel uevents carry RDMA and PCI hot-plug, which rtnetlink does not.
// Optional: without it (no permission, non-initial namespace) the periodic
// resync still catches those changes.
SocketPtr OpenUevents(Logger& log) {
  SocketPtr socket(nl_socket_alloc());
  if (!socket) return nullptr;
  nl_socket_disable_seq_check(socket.get());
  int error = nl_connect(socket.get(), NETLINK_KOBJECT_UEVENT);
  if (error >= 0) error = nl_socket_add_memberships(socket.get(), kKernelUeventGroup, 0);
  if (error < 0) {
    log.Warning("no kernel uevents; RDMA hot-plug is seen at the next resync", {{"error", nl_geterror(error)}});
    return nullptr;
  }
  nl_socket_set_nonblocking(socket.get());
  nl_socket_set_buffer_size(socket.get(), kReceiveBufferBytes, 0);
  return socket;
}

// Reads everything queued; true when any of it should trigger discovery.
// An overrun (ENOBUFS) means events were lost, which also triggers it.
bool DrainRtnetlink(nl_sock* socket, RtnetlinkReader& reader) {
  reader.relevant = false;
  for (int i = 0; i < 1024; ++i) {
    int result = nl_recvmsgs_default(socket);
    if (result == -NLE_AGAIN) break;
    if (result < 0) {
      reader.relevant = true;
      if (result != -NLE_NOMEM) break;
    }
  }
  return reader.relevant;
}

// A uevent's value for `key` ("SUBSYSTEM"), or empty.
std::string_view UeventValue(std::string_view event, std::string_view key) {
  std::size_t start = 0;
  while (start < event.size()) {
    std::size_t end = event.find('\0', start);
    if (end == std::string_view::npos) end = event.size();
    std::string_view field = event.substr(start, end - start);
    if (field.size() > key.size() && field.substr(0, key.size()) == key && field[key.size()] == '=')
      return field.substr(key.size() + 1);
    start = end + 1;
  }
  return {};
}

bool DrainUevents(nl_sock* socket) {
  bool relevant = false;
  for (int i = 0; i < 1024; ++i) {
    sockaddr_nl peer{};
    unsigned char* buffer = nullptr;
    int length = nl_recv(socket, &peer, &buffer, nullptr);
    if (length <= 0) {
      free(buffer);
      if (length == -NLE_AGAIN) break;
      relevant = true;  // lost events: rediscover to be safe
      break;
    }
    // A uevent is "ACTION@DEVPATH\0KEY=VALUE\0...".
    std::string_view event(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(length));
    const std::string_view subsystem = UeventValue(event, "SUBSYSTEM");
    if (subsystem == "infiniband" || subsystem == "infiniband_verbs" || subsystem == "pci") relevant = true;
    // Virtual netdevs (a pod's veth) have no sysfs facts beyond what
    // rtnetlink already reported; hardware netdevs may gain theirs later.
    if (subsystem == "net" && UeventValue(event, "DEVPATH").rfind("/devices/virtual/", 0) != 0) relevant = true;
    free(buffer);
  }
  return relevant;
}

}  // namespace

struct DiscoveryMonitor::Sockets {
  explicit Sockets(std::set<std::string> ignored_link_kinds) : reader{NetlinkEventFilter(std::move(ignored_link_kinds))} {}
  RtnetlinkReader reader;  // before the socket: its callbacks point here
  SocketPtr rtnetlink;
  SocketPtr uevents;
};

DiscoveryMonitor::DiscoveryMonitor(Discoverer& discoverer, Callback callback, Logger& log, Options options)
    : discoverer_(discoverer), callback_(std::move(callback)), log_(log), options_(options) {}

DiscoveryMonitor::~DiscoveryMonitor() { Stop(); }

void DiscoveryMonitor::Start() {
  std::lock_guard lock(start_stop_mu_);
  if (thread_.joinable() || wake_fd_ >= 0) throw std::logic_error("DiscoveryMonitor::Start called twice");
  auto sockets = std::make_unique<Sockets>(options_.ignored_link_kinds);
  sockets->rtnetlink = OpenRtnetlink(sockets->reader);
  sockets->uevents = OpenUevents(log_);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  sockets_ = std::move(sockets);
  stopping_ = false;
  thread_ = std::thread([this] { Run(); });
}

void DiscoveryMonitor::Stop() {
  std::lock_guard lock(start_stop_mu_);
  if (!thread_.joinable()) return;
  stopping_ = true;
  uint64_t one = 1;
  [[maybe_unused]] ssize_t written = ::write(wake_fd_, &one, sizeof(one));
  thread_.join();
  ::close(wake_fd_);
  wake_fd_ = -1;
  sockets_.reset();
}

void DiscoveryMonitor::RequestRescan() {
  rescan_requested_ = true;
  int fd = wake_fd_;
  if (fd >= 0) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t written = ::write(fd, &one, sizeof(one));
  }
}

void DiscoveryMonitor::ReadLinkDump() {
  // Bounded: a dump of thousands of links takes milliseconds.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto& reader = sockets_->reader;
  while (!reader.dump_done && std::chrono::steady_clock::now() < until && !stopping_) {
    pollfd fd{nl_socket_get_fd(sockets_->rtnetlink.get()), POLLIN, 0};
    if (::poll(&fd, 1, 100) > 0) DrainRtnetlink(sockets_->rtnetlink.get(), reader);
  }
  if (log_.V(2)) {
    log_.Verbose(2, "discovery monitor knows the links", {{"links", static_cast<int64_t>(reader.filter.known_links())},
                                                          {"ignored", static_cast<int64_t>(reader.filter.ignored_links())}});
  }
}

void DiscoveryMonitor::Run() {
  pthread_setname_np(pthread_self(), "inv-monitor");
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_discovery;
  bool pending = true;  // the first discovery
  Clock::time_point due = Clock::now();
  // The event rate limit as a GCRA: `tat` is when the bucket would be full
  // again; a discovery may start once now >= tat - (burst - 1) * interval.
  const auto interval = std::max(options_.event_min_interval, std::chrono::milliseconds(0));
  const auto burst_span = interval * std::max(options_.event_burst - 1, 0);
  Clock::time_point tat = Clock::now();
  ReadLinkDump();

  while (!stopping_) {
    Clock::time_point now = Clock::now();
    if (pending && now >= due) {
      pending = false;
      tat = std::max(tat, now) + interval;
      auto started = Clock::now();
      std::vector<Device> devices;
      try {
        devices = discoverer_.Discover();
      } catch (const std::exception& failure) {
        log_.Error("discovery failed; keeping the previous inventory", {{"error", failure.what()}});
        last_discovery = Clock::now();
        continue;
      }
      last_discovery = Clock::now();
      ++discoveries_;
      auto took = std::chrono::duration_cast<std::chrono::microseconds>(last_discovery - started).count();
      if (log_.V(2)) {
        log_.Verbose(2, "discovery finished",
                     {{"devices", static_cast<int64_t>(devices.size())}, {"took_us", static_cast<int64_t>(took)}});
      }
      callback_(std::move(devices));
      continue;
    }
    Clock::time_point resync_at = last_discovery + options_.resync_period;
    Clock::time_point wake_at = pending ? std::min(due, resync_at) : resync_at;
    auto timeout_ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake_at - now).count();
    if (timeout_ms <= 0) {
      if (!pending) {
        pending = true;
        due = now;
      }
      continue;
    }
    pollfd fds[3] = {{wake_fd_, POLLIN, 0}, {nl_socket_get_fd(sockets_->rtnetlink.get()), POLLIN, 0}, {-1, 0, 0}};
    if (sockets_->uevents) fds[2] = {nl_socket_get_fd(sockets_->uevents.get()), POLLIN, 0};
    int ready = ::poll(fds, 3, static_cast<int>(std::min<int64_t>(timeout_ms, 60'000)));
    if (ready < 0 && errno != EINTR) {
      log_.Error("discovery monitor poll failed; relying on resync", {{"error", std::strerror(errno)}});
    }
    bool changed = false;
    if (fds[0].revents & POLLIN) {
      uint64_t count = 0;
      [[maybe_unused]] ssize_t got = ::read(wake_fd_, &count, sizeof(count));
      if (rescan_requested_.exchange(false)) changed = true;
    }
    if (fds[1].revents & POLLIN) {
      if (DrainRtnetlink(sockets_->rtnetlink.get(), sockets_->reader)) {
        changed = true;
        if (log_.V(2)) log_.Verbose(2, "rediscovery requested", {{"by", sockets_->reader.filter.last_reason()}});
      } else {
        ++events_ignored_;
      }
    }
    if (fds[2].fd >= 0 && (fds[2].revents & POLLIN) && DrainUevents(sockets_->uevents.get())) {
      changed = true;
      if (log_.V(2)) log_.Verbose(2, "rediscovery requested", {{"by", "kernel uevent"}});
    }
    if (changed && !pending) {
      // Coalesce: never sooner than one window after the previous discovery,
      // and never beyond the event rate limit.
      pending = true;
      due = std::max({Clock::now(), last_discovery + options_.coalesce_window, tat - burst_span});
    }
  }
}

}  // namespace dranet::inventory
