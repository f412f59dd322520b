#include "health/health_monitor.h"

#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include "base/unique_fd.h"
#include "inject/netlink_socket.h"
#include "inject/netns.h"

namespace dranet::health {
namespace {

// A non-blocking rtnetlink socket of the calling thread's namespace that
// receives link events. -1 with errno on failure.
int OpenLinkEvents() {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
  if (fd < 0) return -1;
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = RTMGRP_LINK;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

// Reads whatever is queued on a non-blocking fd.
void Drain(int fd) {
  alignas(nlmsghdr) char buffer[16384];
  while (::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT) > 0 || errno == ENOBUFS) {
  }
}

void DrainRead(int fd) {
  alignas(inotify_event) char buffer[4096];
  while (::read(fd, buffer, sizeof(buffer)) > 0) {
  }
}

// A netdev in a pod: by the index it got there, else by its name there.
const inventory::LinkFacts* FindInPod(const std::vector<inventory::LinkFacts>& links, int ifindex,
                                      const std::string& name) {
  if (ifindex > 0) {
    for (const auto& l : links)
      if (l.ifindex == ifindex) return &l;
  }
  for (const auto& l : links)
    if (l.name == name) return &l;
  return nullptr;
}

}  // namespace

struct HealthMonitor::PodWatch {
  inject::NetnsId id;
  inject::NetnsHandle ns;
  UniqueFd events;
  inject::NlSockPtr query;
};

HealthMonitor::HealthMonitor(Options options, HostLinkReader host_links, HeldNetdevSource held, Logger& log)
    : options_(std::move(options)), host_links_(std::move(host_links)), held_(std::move(held)), log_(log) {}

HealthMonitor::~HealthMonitor() {
  Stop();
  for (int fd : {host_events_fd_, inotify_fd_, wake_fd_})
    if (fd >= 0) ::close(fd);
}

void HealthMonitor::SetTransitionObserver(TransitionObserver observer) { observer_ = std::move(observer); }

void HealthMonitor::Start() {
  if (thread_.joinable()) throw std::logic_error("HealthMonitor::Start() called twice");
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::runtime_error(std::string("health monitor: eventfd: ") + std::strerror(errno));
  if (options_.watch_host_links) {
    host_events_fd_ = OpenLinkEvents();
    if (host_events_fd_ < 0)
      throw std::runtime_error(std::string("health monitor: rtnetlink link events: ") + std::strerror(errno));
  }
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0)
    log_.Warning("no inotify instance: RDMA port files are read every recheck period only",
                 {{"error", std::strerror(errno)}});
  thread_ = std::thread([this] { Run(); });
  pthread_setname_np(thread_.native_handle(), "health");
}

void HealthMonitor::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  changed_.notify_all();
  Wake();
  if (thread_.joinable()) thread_.join();
}

void HealthMonitor::Wake() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = ::write(wake_fd_, &one, sizeof(one));
}

void HealthMonitor::SetDevices(std::vector<inventory::Device> devices) {
  {
    std::lock_guard lock(mu_);
    devices_ = std::move(devices);
  }
  Wake();
}

void HealthMonitor::PodsChanged() { Wake(); }

HealthReport HealthMonitor::Current() const {
  std::lock_guard lock(mu_);
  return report_;
}

bool HealthMonitor::WaitNewer(uint64_t generation, std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mu_);
  changed_.wait_until(lock, deadline, [&] { return stopping_ || report_.generation > generation; });
  return !stopping_ && report_.generation > generation;
}

bool HealthMonitor::HostEventNamesDevice(int fd) {
  alignas(nlmsghdr) char buffer[16384];
  bool relevant = false;
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n < 0 && errno == ENOBUFS) {
      relevant = true;  // events were lost: one of them may have been ours
      continue;
    }
    if (n <= 0) break;
    int left = static_cast<int>(n);
    for (auto* header = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(header, left);
         header = NLMSG_NEXT(header, left)) {
      if (header->nlmsg_type != RTM_NEWLINK && header->nlmsg_type != RTM_DELLINK) continue;
      if (header->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg))) continue;
      int attributes_left = static_cast<int>(IFLA_PAYLOAD(header));
      for (auto* attribute = IFLA_RTA(static_cast<ifinfomsg*>(NLMSG_DATA(header)));
           RTA_OK(attribute, attributes_left); attribute = RTA_NEXT(attribute, attributes_left)) {
        if (attribute->rta_type != IFLA_IFNAME) continue;
        const char* name = static_cast<const char*>(RTA_DATA(attribute));
        const std::string text(name, ::strnlen(name, RTA_PAYLOAD(attribute)));
        std::lock_guard lock(names_mu_);
        if (watched_names_.count(text) != 0) relevant = true;
      }
    }
  }
  return relevant;
}

void HealthMonitor::SyncPodWatches(const std::vector<inject::HeldNetdev>& held) {
  std::vector<std::unique_ptr<PodWatch>> kept;
  for (const auto& netdev : held) {
    const auto id = inject::IdOf(netdev.ns);
    const bool have_it = std::any_of(kept.begin(), kept.end(), [&](const auto& w) { return w->id == id; });
    if (have_it) continue;
    auto existing = std::find_if(pod_watches_.begin(), pod_watches_.end(),
                                 [&](const auto& w) { return w && w->id == id; });
    if (existing != pod_watches_.end()) {
      kept.push_back(std::move(*existing));
      continue;
    }
    auto watch = std::make_unique<PodWatch>();
    watch->id = id;
    watch->ns = inject::NetnsHandle(::fcntl(netdev.ns.fd(), F_DUPFD_CLOEXEC, 0));
    try {
      int events = -1;
      inject::RunInNetns(watch->ns, [&] { events = OpenLinkEvents(); });
      watch->events.Reset(events);
      watch->query = inject::NetlinkSocketIn(watch->ns, NETLINK_ROUTE);
    } catch (const std::exception& e) {
      log_.Warning("cannot watch a pod's links; its netdevs are checked every recheck period",
                   {{"pod", netdev.pod.Describe()}, {"error", e.what()}});
    }
    kept.push_back(std::move(watch));
  }
  pod_watches_ = std::move(kept);
}

void HealthMonitor::SyncPortWatches(const std::vector<inventory::Device>& devices) {
  if (inotify_fd_ < 0) return;
  ++port_watch_syncs_;
  std::set<std::string> wanted;
  for (const auto& d : devices)
    for (auto& dir : WatchedDirectories(options_.host_root, d)) wanted.insert(std::move(dir));
  for (auto it = port_watches_.begin(); it != port_watches_.end();) {
    if (wanted.count(it->second) == 0) {
      ::inotify_rm_watch(inotify_fd_, it->first);
      it = port_watches_.erase(it);
    } else {
      wanted.erase(it->second);
      ++it;
    }
  }
  for (const auto& dir : wanted) {
    const int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(),
                                       IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB |
                                           IN_ONLYDIR);
    if (wd >= 0) port_watches_[wd] = dir;
  }
}

void HealthMonitor::Check(bool rewatch) {
  ++checks_;
  std::vector<inject::HeldNetdev> held;
  if (held_) {
    try {
      held = held_();
    } catch (const std::exception& e) {
      log_.Warning("cannot list the netdevs held in pods", {{"error", e.what()}});
    }
  }
  SyncPodWatches(held);
  std::vector<inventory::Device> devices;
  {
    std::lock_guard lock(mu_);
    devices = devices_;
  }
  std::vector<inventory::LinkFacts> host_links;
  if (host_links_) {
    try {
      host_links = host_links_();
    } catch (const std::exception& e) {
      log_.Warning("cannot read the host's links", {{"error", e.what()}});
    }
  }

  // Each device once: held in a pod (its link read there) or on the host.
  struct Subject {
    inventory::Device device;
    const inject::HeldNetdev* held = nullptr;
  };
  std::map<std::string, Subject> subjects;
  for (const auto& d : devices) subjects[d.name].device = d;
  for (const auto& h : held) {
    auto& subject = subjects[h.device_name];
    if (subject.device.name.empty()) {
      subject.device.name = h.device_name;
      subject.device.rdma_device = h.rdma_device;
    }
    subject.device.if_name = h.host_if_name;
    subject.held = &h;
  }
  {
    std::map<std::string, std::string> names;
    // Held ones too: their return to the host is an event of their host name.
    for (const auto& [name, s] : subjects)
      if (!s.device.if_name.empty()) names[s.device.if_name] = name;
    std::lock_guard lock(names_mu_);
    watched_names_ = std::move(names);
  }
  // The port directories are derived again only when the devices changed,
  // on the recheck, or after an inotify event (a directory may have gone).
  std::string port_subjects;
  for (const auto& [name, s] : subjects)
    port_subjects += name + '\0' + s.device.rdma_device + '\0' + s.device.pci_address + '\n';
  if (rewatch || port_subjects != port_subjects_) {
    std::vector<inventory::Device> port_devices;
    for (const auto& [name, s] : subjects) port_devices.push_back(s.device);
    SyncPortWatches(port_devices);
    port_subjects_ = std::move(port_subjects);
  }

  // Links in each pod namespace, read once per check.
  std::map<const PodWatch*, std::vector<inventory::LinkFacts>> pod_links;
  for (const auto& w : pod_watches_) {
    if (!w->query) continue;
    try {
      pod_links[w.get()] = inventory::ReadLinks(w->query.get(), log_);
    } catch (const std::exception& e) {
      log_.Warning("cannot read a pod's links", {{"error", e.what()}});
    }
  }

  const auto now = std::chrono::system_clock::now();
  std::vector<DeviceReport> reports;
  for (const auto& [name, s] : subjects) {
    if (s.held == nullptr) {
      reports.push_back({name, AssessOnHost(options_.host_root, s.device, host_links), now, now});
      continue;
    }
    // Held in a pod: its link is read there.
    DeviceFacts facts = ReadDeviceFacts(options_.host_root, s.device);
    facts.rdma_judged = !s.held->rdma_moved;
    const auto id = inject::IdOf(s.held->ns);
    const PodWatch* watch = nullptr;
    for (const auto& w : pod_watches_)
      if (w->id == id) watch = w.get();
    const auto links = watch ? pod_links.find(watch) : pod_links.end();
    if (links != pod_links.end()) {
      if (const auto* link = FindInPod(links->second, s.held->pod_ifindex, s.held->pod_if_name)) {
        facts.link = LinkStateOf(*link, "in pod " + s.held->pod.namespace_name + "/" + s.held->pod.name + " as " +
                                            link->name);
        facts.link->in_pod = true;
      }
    }
    reports.push_back({name, Assess(s.device, facts), now, now});
  }

  struct Change {
    std::string device;
    Health from;
    Verdict to;
  };
  std::vector<Change> changes;
  {
    std::lock_guard lock(mu_);
    std::map<std::string, const DeviceReport*> before;
    for (const auto& r : report_.devices) before[r.device] = &r;
    bool changed = report_.generation == 0 || before.size() != reports.size();
    for (auto& r : reports) {
      const auto it = before.find(r.device);
      if (it == before.end()) {
        changed = true;
        continue;
      }
      if (it->second->verdict == r.verdict) {
        r.since = it->second->since;
        continue;
      }
      changed = true;
      if (it->second->verdict.health != r.verdict.health) changes.push_back({r.device, it->second->verdict.health, r.verdict});
    }
    report_.devices = std::move(reports);
    if (changed) ++report_.generation;
  }
  changed_.notify_all();
  for (const auto& c : changes) {
    log_.Info("device health changed", {{"device", c.device},
                                        {"from", HealthName(c.from)},
                                        {"to", HealthName(c.to.health)},
                                        {"message", c.to.message}});
    if (observer_) observer_(c.device, c.from, c.to);
  }
}

void HealthMonitor::Run() {
  using Clock = std::chrono::steady_clock;
  Check(/*rewatch=*/true);
  auto next_check = Clock::now() + options_.recheck_period;
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({wake_fd_, POLLIN, 0});
    if (host_events_fd_ >= 0) fds.push_back({host_events_fd_, POLLIN, 0});
    if (inotify_fd_ >= 0) fds.push_back({inotify_fd_, POLLIN, 0});
    for (const auto& w : pod_watches_)
      if (w->events.valid()) fds.push_back({w->events.get(), POLLIN, 0});
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_check - Clock::now());
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, wait.count())));
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    bool check = Clock::now() >= next_check;
    bool rewatch = check;
    if (ready > 0) {
      for (const auto& p : fds) {
        if ((p.revents & (POLLIN | POLLERR)) == 0) continue;
        if (p.fd == wake_fd_) {
          DrainRead(wake_fd_);
          check = true;
        } else if (p.fd == host_events_fd_) {
          if (HostEventNamesDevice(host_events_fd_)) check = true;
          else ++link_events_ignored_;
        } else if (p.fd == inotify_fd_) {
          DrainRead(inotify_fd_);
          check = rewatch = true;
        } else {
          Drain(p.fd);
          check = true;
        }
      }
    }
    if (!check) continue;
    // Let a burst of events settle, then check once for all of them.
    pollfd wake{wake_fd_, POLLIN, 0};
    ::poll(&wake, 1, static_cast<int>(options_.coalesce.count()));
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    DrainRead(wake_fd_);
    if (inotify_fd_ >= 0) DrainRead(inotify_fd_);
    for (const auto& w : pod_watches_)
      if (w->events.valid()) Drain(w->events.get());
    Check(rewatch);
    next_check = Clock::now() + options_.recheck_period;
  }
}

}  // namespace dranet::health
