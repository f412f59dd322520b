#include "inventory/monitor.h"

#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
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

int IgnoreMessage(nl_msg*, void*) { return NL_OK; }

SocketPtr OpenRtnetlink() {
  SocketPtr socket(nl_socket_alloc());
  if (!socket) throw std::runtime_error("cannot allocate a netlink socket for the discovery monitor");
  nl_socket_disable_seq_check(socket.get());
  nl_socket_modify_cb(socket.get(), NL_CB_VALID, NL_CB_CUSTOM, IgnoreMessage, nullptr);
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
bool DrainRtnetlink(nl_sock* socket) {
  bool changed = false;
  for (int i = 0; i < 1024; ++i) {
    int result = nl_recvmsgs_default(socket);
    if (result == -NLE_AGAIN) break;
    changed = true;
    if (result < 0 && result != -NLE_NOMEM) break;
  }
  return changed;
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
    for (std::string_view subsystem : {"SUBSYSTEM=infiniband", "SUBSYSTEM=net", "SUBSYSTEM=pci",
                                       "SUBSYSTEM=infiniband_verbs"}) {
      std::size_t at = event.find(subsystem);
      if (at != std::string_view::npos &&
          (at + subsystem.size() == event.size() || event[at + subsystem.size()] == '\0')) {
        relevant = true;
      }
    }
    free(buffer);
  }
  return relevant;
}

}  // namespace

struct DiscoveryMonitor::Sockets {
  SocketPtr rtnetlink;
  SocketPtr uevents;
};

DiscoveryMonitor::DiscoveryMonitor(Discoverer& discoverer, Callback callback, Logger& log, Options options)
    : discoverer_(discoverer), callback_(std::move(callback)), log_(log), options_(options) {}

DiscoveryMonitor::~DiscoveryMonitor() { Stop(); }

void DiscoveryMonitor::Start() {
  std::lock_guard lock(start_stop_mu_);
  if (thread_.joinable() || wake_fd_ >= 0) throw std::logic_error("DiscoveryMonitor::Start called twice");
  auto sockets = std::make_unique<Sockets>();
  sockets->rtnetlink = OpenRtnetlink();
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

void DiscoveryMonitor::Run() {
  pthread_setname_np(pthread_self(), "inv-monitor");
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_discovery;
  bool pending = true;  // the first discovery
  Clock::time_point due = Clock::now();

  while (!stopping_) {
    Clock::time_point now = Clock::now();
    if (pending && now >= due) {
      pending = false;
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
    if (fds[1].revents & POLLIN) changed |= DrainRtnetlink(sockets_->rtnetlink.get());
    if (fds[2].fd >= 0 && (fds[2].revents & POLLIN)) changed |= DrainUevents(sockets_->uevents.get());
    if (changed && !pending) {
      // Coalesce: never sooner than one window after the previous discovery.
      pending = true;
      due = std::max(Clock::now(), last_discovery + options_.coalesce_window);
    }
  }
}

}  // namespace dranet::inventory
