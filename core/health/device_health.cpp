#include "health/device_health.h"

#include <dirent.h>
#include <net/if.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "base/files.h"
#include "base/unique_fd.h"
#include "base/utf8.h"

namespace dranet::health {
namespace {

// "4: ACTIVE" -> "ACTIVE"; text without a number is taken as it is.
std::string StateWord(const std::string& sysfs_text) {
  const auto colon = sysfs_text.find(':');
  std::string word = colon == std::string::npos ? sysfs_text : sysfs_text.substr(colon + 1);
  const auto first = word.find_first_not_of(' ');
  return first == std::string::npos ? "" : word.substr(first);
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
  return text;
}

std::optional<std::string> ReadIn(const RootDirectory& root, const std::string& path) {
  const int fd = root.Open(path.c_str(), kReadOpenFlags);
  if (fd < 0) return std::nullopt;
  auto text = ReadFdCapped(fd, 256);
  if (!text) return std::nullopt;
  return Trimmed(std::move(*text));
}

bool DirectoryExists(const RootDirectory& root, const std::string& path) {
  UniqueFd fd(root.Open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return fd.valid();
}

// The port numbers under sys/class/infiniband/<dev>/ports, ascending.
std::vector<int> PortNumbers(const RootDirectory& root, const std::string& ports_dir) {
  std::vector<int> ports;
  const int fd = root.Open(ports_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ports;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return ports;
  }
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long n = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && n > 0 && n < 256) ports.push_back(static_cast<int>(n));
  }
  ::closedir(dir);
  std::sort(ports.begin(), ports.end());
  return ports;
}

bool NoCarrier(const std::string& operstate) {
  return operstate == "down" || operstate == "lowerlayerdown" || operstate == "dormant" || operstate == "notpresent";
}

// Joins the problems into a message the kubelet keeps whole.
std::string Message(const std::vector<std::string>& problems) {
  std::string text;
  for (const auto& p : problems) text += (text.empty() ? "" : "; ") + p;
  text = ToValidUtf8(text);
  if (text.size() > kMaxMessageBytes) {
    text.resize(kMaxMessageBytes - 3);
    // Do not leave half a UTF-8 sequence before the ellipsis.
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
    if (!text.empty() && (static_cast<unsigned char>(text.back()) & 0x80) != 0) text.pop_back();
    text += "...";
  }
  return text;
}

}  // namespace

const char* HealthName(Health health) {
  switch (health) {
    case Health::kHealthy: return "Healthy";
    case Health::kUnhealthy: return "Unhealthy";
    case Health::kUnknown: break;
  }
  return "Unknown";
}

Verdict Assess(const inventory::Device& device, const DeviceFacts& facts) {
  std::vector<std::string> problems;
  std::string reason;
  auto problem = [&](const char* word, std::string text) {
    if (reason.empty()) reason = word;
    problems.push_back(std::move(text));
  };
  if (!device.pci_address.empty() && !facts.pci_present)
    problem("PciFunctionGone", "PCI function " + device.pci_address + " is gone from the bus");
  const bool netdev_admin_down = facts.link && !facts.link->admin_up;
  if (!device.rdma_device.empty() && facts.rdma_judged) {
    if (!facts.rdma_present) {
      problem("RdmaDeviceGone", "RDMA device " + device.rdma_device + " is gone");
    } else {
      for (const auto& port : facts.ports) {
        // A RoCE port's state follows its netdev's: down with it by choice.
        if (port.link_layer == "Ethernet" && netdev_admin_down) continue;
        const std::string state = StateWord(port.state);
        const std::string phys = StateWord(port.phys_state);
        if (state != "ACTIVE" || (!phys.empty() && phys != "LinkUp")) {
          problem("RdmaPortDown", device.rdma_device + " port " + std::to_string(port.port) + " is " +
                                      (state.empty() ? "in no state" : state) +
                                      (phys.empty() ? "" : " (physical state " + phys + ")"));
        }
      }
    }
  }
  if (!device.if_name.empty()) {
    if (!facts.link) {
      problem("NetdevGone", "netdev " + device.if_name + " is gone");
    } else if ((!device.pci_address.empty() || facts.link->in_pod) && facts.link->admin_up &&
               NoCarrier(facts.link->operstate)) {
      problem("NoCarrier",
              "netdev " + device.if_name + " " + facts.link->where + " has no carrier (operstate " + facts.link->operstate + ")");
    }
  }
  if (problems.empty()) return {Health::kHealthy, "", ""};
  return {Health::kUnhealthy, Message(problems), reason};
}

DeviceFacts ReadDeviceFacts(const std::string& host_root, const inventory::Device& device) {
  DeviceFacts facts;
  const RootDirectory root(host_root);
  if (!device.pci_address.empty()) facts.pci_present = DirectoryExists(root, "sys/bus/pci/devices/" + device.pci_address);
  if (!device.rdma_device.empty()) {
    const std::string dir = "sys/class/infiniband/" + device.rdma_device;
    facts.rdma_present = DirectoryExists(root, dir);
    if (facts.rdma_present) {
      for (int n : PortNumbers(root, dir + "/ports")) {
        const std::string port_dir = dir + "/ports/" + std::to_string(n);
        PortFacts port;
        port.port = n;
        port.state = ReadIn(root, port_dir + "/state").value_or("");
        port.phys_state = ReadIn(root, port_dir + "/phys_state").value_or("");
        port.link_layer = ReadIn(root, port_dir + "/link_layer").value_or("");
        facts.ports.push_back(std::move(port));
      }
    }
  }
  return facts;
}

LinkState LinkStateOf(const inventory::LinkFacts& link, std::string where) {
  return {(link.flags & IFF_UP) != 0, link.operstate, std::move(where), false};
}

Verdict AssessOnHost(const std::string& host_root, const inventory::Device& device,
                     const std::vector<inventory::LinkFacts>& host_links) {
  DeviceFacts facts = ReadDeviceFacts(host_root, device);
  if (!device.if_name.empty()) {
    for (const auto& link : host_links)
      if (link.name == device.if_name) facts.link = LinkStateOf(link, "on the host");
  }
  return Assess(device, facts);
}

std::vector<std::string> WatchedDirectories(const std::string& host_root, const inventory::Device& device) {
  std::vector<std::string> dirs;
  if (device.rdma_device.empty()) return dirs;
  const RootDirectory root(host_root);
  const std::string dir = "sys/class/infiniband/" + device.rdma_device + "/ports";
  for (int n : PortNumbers(root, dir)) {
    UniqueFd fd(root.Open((dir + "/" + std::to_string(n)).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) continue;
    // Where the contained open arrived: the real directory to watch.
    char target[4096];
    const std::string link = "/proc/self/fd/" + std::to_string(fd.get());
    const ssize_t n_read = ::readlink(link.c_str(), target, sizeof(target) - 1);
    if (n_read > 0) dirs.emplace_back(target, static_cast<std::size_t>(n_read));
  }
  return dirs;
}

}  // namespace dranet::health
