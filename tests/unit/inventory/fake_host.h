#pragma once
// FakeHost: builds a small host root (a snapshot) in a temporary directory,
// for tests that need sysfs shapes the bundled snapshots do not have.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "inventory/snapshot.h"

namespace dranet::inventory::testing {

class FakeHost {
 public:
  FakeHost() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dranet-fakehost-XXXXXX").string();
    root_ = mkdtemp(pattern.data());
    File(kSnapshotMarkerFile, R"({"formatVersion":1,"nodeName":"fake","source":"synthetic"})");
  }
  ~FakeHost() {
    std::error_code error;
    std::filesystem::remove_all(root_, error);
  }
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  const std::filesystem::path& root() const { return root_; }

  void File(const std::string& relative, const std::string& content) {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << content;
  }

  // Symlink root/relative -> root/target, written relative like the kernel's.
  void Link(const std::string& relative, const std::string& target) {
    auto path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::filesystem::create_symlink((root_ / target).lexically_relative(path.parent_path()), path);
  }

  // A PCI function under root bus pci0000:00; returns its devices/ path.
  std::string Pci(const std::string& address, const std::string& class_code, const std::string& driver,
                  const std::string& vendor = "0x15b3", const std::string& device = "0x1021") {
    std::string path = "sys/devices/pci0000:00/" + address;
    File(path + "/class", class_code + "\n");
    File(path + "/vendor", vendor + "\n");
    File(path + "/device", device + "\n");
    File(path + "/subsystem_device", "0x0001\n");
    File(path + "/numa_node", "0\n");
    if (!driver.empty()) {
      std::filesystem::create_directories(root_ / "sys/bus/pci/drivers" / driver);
      Link(path + "/driver", "sys/bus/pci/drivers/" + driver);
    }
    Link("sys/bus/pci/devices/" + address, path);
    return path;
  }

  // A netdev under `parent` (a devices/ path) or virtual when empty.
  void Netdev(const std::string& parent, const std::string& name, int ifindex, const std::string& kind = "",
              const std::vector<std::string>& addresses = {}, int iflink = 0, const std::string& master = "") {
    std::string path = (parent.empty() ? std::string("sys/devices/virtual") : parent) + "/net/" + name;
    File(path + "/ifindex", std::to_string(ifindex) + "\n");
    File(path + "/iflink", std::to_string(iflink ? iflink : ifindex) + "\n");
    File(path + "/flags", name == "lo" ? "0x9\n" : "0x1003\n");
    File(path + "/mtu", "1500\n");
    File(path + "/type", name == "lo" ? "772\n" : "1\n");
    File(path + "/operstate", "up\n");
    File(path + "/address", "02:00:00:00:00:" + std::to_string(10 + ifindex) + "\n");
    File(path + "/ifalias", "\n");
    if (!master.empty()) Link(path + "/master", "sys/class/net/" + master);
    Link("sys/class/net/" + name, path);
    std::string entry = R"({"name":")" + name + R"(","kind":")" + kind + R"(","addresses":[)";
    for (std::size_t i = 0; i < addresses.size(); ++i) entry += (i ? ",\"" : "\"") + addresses[i] + "\"";
    links_.push_back(entry + "]}");
  }

  void DefaultRoute(const std::string& family, int metric, const std::vector<std::string>& interfaces) {
    std::string entry = R"({"family":")" + family + R"(","destination":"default","metric":)" +
                        std::to_string(metric) + R"(,"interfaces":[)";
    for (std::size_t i = 0; i < interfaces.size(); ++i) entry += (i ? ",\"" : "\"") + interfaces[i] + "\"";
    routes_.push_back(entry + "]}");
  }

  // Writes netlink.json from the Netdev/DefaultRoute calls so far.
  void WriteNetlinkJson() {
    std::string json = R"({"formatVersion":1,"links":[)";
    for (std::size_t i = 0; i < links_.size(); ++i) json += (i ? "," : "") + links_[i];
    json += R"(],"routes":[)";
    for (std::size_t i = 0; i < routes_.size(); ++i) json += (i ? "," : "") + routes_[i];
    File(kSnapshotNetlinkFile, json + "]}");
  }

 private:
  std::filesystem::path root_;
  std::vector<std::string> links_;
  std::vector<std::string> routes_;
};

}  // namespace dranet::inventory::testing
