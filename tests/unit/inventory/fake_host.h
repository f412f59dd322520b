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
    File(kSnapshotMarkerFile, R"({"formatVersion":)" + std::to_string(kSnapshotFormatVersion) +
                                  R"(,"nodeName":"fake","source":"synthetic"})");
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
    RawLink(relative, (root_ / target).lexically_relative((root_ / relative).parent_path()));
  }

  // Symlink root/relative whose text is `text` as given (an absolute path, a
  // ".." chain), replacing whatever root/relative was.
  void RawLink(const std::string& relative, const std::filesystem::path& text) {
    auto path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::filesystem::remove(path);
    std::filesystem::create_symlink(text, path);
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

  // A main-table unicast default route (netlink.json v2); several
  // interfaces make it a multipath route.
  void DefaultRoute(const std::string& family, int metric, const std::vector<std::string>& interfaces) {
    std::string entry = R"({"family":")" + family + R"(","destination":"default",)";
    if (interfaces.size() == 1) {
      entry += R"("interface":")" + interfaces[0] + R"(",)";
    } else {
      entry += R"("nexthops":[)";
      for (std::size_t i = 0; i < interfaces.size(); ++i) {
        entry += (i ? "," : "") + std::string(R"({"interface":")") + interfaces[i] + R"(","weight":1})";
      }
      entry += "],";
    }
    Route(entry + R"("scope":"universe","table":"main","metric":)" + std::to_string(metric) +
          R"(,"protocol":"boot","type":"unicast"})");
  }

  // The same route as a formatVersion 1 snapshot wrote it.
  void V1DefaultRoute(const std::string& family, int metric, const std::vector<std::string>& interfaces) {
    std::string entry = R"({"family":")" + family + R"(","destination":"default","metric":)" +
                        std::to_string(metric) + R"(,"interfaces":[)";
    for (std::size_t i = 0; i < interfaces.size(); ++i) entry += (i ? ",\"" : "\"") + interfaces[i] + "\"";
    Route(entry + "]}");
  }

  // Raw JSON objects for netlink.json's "routes", "rules" and "neighbors".
  void Route(const std::string& json_object) { routes_.push_back(json_object); }
  void Rule(const std::string& json_object) { rules_.push_back(json_object); }
  void Neighbor(const std::string& json_object) { neighbors_.push_back(json_object); }

  // Writes netlink.json from the calls so far.
  void WriteNetlinkJson(int format_version = kSnapshotFormatVersion) {
    auto list = [](const std::vector<std::string>& entries) {
      std::string joined;
      for (std::size_t i = 0; i < entries.size(); ++i) joined += (i ? "," : "") + entries[i];
      return "[" + joined + "]";
    };
    File(kSnapshotNetlinkFile, R"({"formatVersion":)" + std::to_string(format_version) + R"(,"links":)" +
                                   list(links_) + R"(,"routes":)" + list(routes_) + R"(,"rules":)" + list(rules_) +
                                   R"(,"neighbors":)" + list(neighbors_) + "}");
  }

 private:
  std::filesystem::path root_;
  std::vector<std::string> links_;
  std::vector<std::string> routes_;
  std::vector<std::string> rules_;
  std::vector<std::string> neighbors_;
};

}  // namespace dranet::inventory::testing
