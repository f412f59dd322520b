#pragma once
// plugins/common/testing/plugin_fixture.h — TEST-ONLY support for the
// in-tree plugins' tests: a temporary node root with a hand-built sysfs
// subset (PCI functions with their real symlink structure, DMI ids), and the
// real plugin .so loaded through the daemon's PluginHost. Plugins never
// include this file (it uses core/); test binaries do.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/log.h"
#include "plugins/plugin_host.h"

namespace dranet::plugins::testing {

namespace fs = std::filesystem;

class PluginFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dranet-plugin-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(root() / "sys/bus/pci/devices");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path root() const { return dir_ / "root"; }

  void WriteFile(const fs::path& rel, const std::string& text) {
    fs::create_directories((root() / rel).parent_path());
    std::ofstream(root() / rel) << text;
  }
  void Dmi(const std::string& name, const std::string& value) { WriteFile("sys/class/dmi/id/" + name, value + "\n"); }

  // A PCI function at /sys/devices/<host_bridge>/<bridges…>/<bdf> with the
  // /sys/bus/pci/devices/<bdf> symlink sysfs has.
  void Pci(const std::string& bdf, const std::string& host_bridge, const std::vector<std::string>& bridges,
           uint32_t vendor, uint32_t device, uint32_t class_code, int numa) {
    fs::path rel = fs::path("devices") / host_bridge;
    for (const auto& b : bridges) rel /= b;
    rel /= bdf;
    char buf[16];
    auto hex = [&](uint32_t v, int width) {
      std::snprintf(buf, sizeof buf, "0x%0*x\n", width, v);
      return std::string(buf);
    };
    WriteFile("sys" / rel / "vendor", hex(vendor, 4));
    WriteFile("sys" / rel / "device", hex(device, 4));
    WriteFile("sys" / rel / "class", hex(class_code, 6));
    WriteFile("sys" / rel / "numa_node", std::to_string(numa) + "\n");
    fs::path link = root() / "sys/bus/pci/devices" / bdf;
    fs::remove(link);
    fs::create_directory_symlink(fs::path("../../..") / rel, link);
  }

  PluginHostOptions Options(const fs::path& host_root) {
    PluginHostOptions o;
    o.host_root = host_root;
    o.node_name = "node-1";
    o.require_root_owned = false;
    o.init_deadline = std::chrono::milliseconds(5000);
    o.call_deadline = std::chrono::milliseconds(10000);
    return o;
  }

  // Loads dranet-plugin-<name>.so (copied from the build tree) with `config`.
  std::unique_ptr<PluginHost> Load(const std::string& name, const std::map<std::string, std::string>& config,
                                   const fs::path& host_root = {}) {
    // A fresh directory per host: overwriting a .so another host still has
    // mapped would crash it.
    fs::path plugin_dir = dir_ / ("plugins-" + std::to_string(++loads_));
    fs::create_directories(plugin_dir);
    std::string file = "dranet-plugin-" + name + ".so";
    fs::copy_file(fs::path(DRANET_PLUGIN_BUILD_DIR) / file, plugin_dir / file);
    auto o = Options(host_root.empty() ? root() : host_root);
    o.plugin_dirs = {plugin_dir};
    o.config[name] = config;
    return std::make_unique<PluginHost>(o, logger_);
  }

  static const PluginReport* Report(const PluginHost& host, const std::string& name) {
    for (const auto& r : host.reports())
      if (r.name == name) return &r;
    return nullptr;
  }

  static inventory::Device Nic(const std::string& pci, const std::string& rdma = "", const std::string& if_name = "",
                               const std::string& mac = "") {
    inventory::Device d;
    d.pci_address = pci;
    d.name = pci.empty() ? if_name : "pci-" + pci;
    for (auto& c : d.name)
      if (c == ':' || c == '.') c = '-';
    d.rdma_device = rdma;
    d.if_name = if_name;
    if (!rdma.empty()) d.attributes["dra.net/rdmaDevice"] = rdma;
    if (!if_name.empty()) d.attributes["dra.net/ifName"] = if_name;
    if (!mac.empty()) d.attributes["dra.net/mac"] = mac;
    return d;
  }

  static std::string Str(const inventory::Device& d, const std::string& attr) {
    auto it = d.attributes.find(attr);
    if (it == d.attributes.end()) return "<absent>";
    if (auto s = std::get_if<std::string>(&it->second)) return *s;
    if (auto i = std::get_if<int64_t>(&it->second)) return std::to_string(*i);
    return "<other>";
  }
  static bool Has(const inventory::Device& d, const std::string& attr) { return d.attributes.count(attr) > 0; }

  std::string Log() const { return log_.str(); }

  fs::path dir_;
  int loads_ = 0;
  std::ostringstream log_;
  Logger logger_{log_};
};

}  // namespace dranet::plugins::testing
