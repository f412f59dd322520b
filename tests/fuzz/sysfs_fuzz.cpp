// sysfs_fuzz: device discovery (core/inventory/inventory.h) on a host root
// whose sysfs files hold fuzzer bytes.
//
// A small fixed tree is built once in a temp dir: one PCI network function
// 0000:00:04.0 (bus/pci/devices link, driver link) with netdev eth0 and RDMA
// device mlx5_0 (class/infiniband, ports/1/gid_attrs/ndevs/0, uverbs0,
// rdma_cm), a virtual veth0, a snapshot marker and a tiny pci.ids. Each input
// is split (FuzzedDataProvider::ConsumeRandomLengthString, in kFuzzedFiles
// order) into the contents of the files below; a file whose string is empty
// and marked by one extra byte is deleted instead (a missing attribute).
// Checked (inventory.h's promises): Discover never throws, devices come
// sorted by unique non-empty name of at most 63 bytes, and every string
// value fits the API's 64-byte limit.
#include <fuzzer/FuzzedDataProvider.h>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <variant>

#include "fuzz_support.h"
#include "inventory/inventory.h"

namespace {

namespace fs = std::filesystem;
using namespace dranet;

constexpr const char* kFunction = "sys/devices/pci0000:00/0000:00:04.0";

// Relative to the host root; the order is the input format (make_seeds.py).
const char* const kFuzzedFiles[] = {
    "netlink.json",
    "sys/devices/pci0000:00/0000:00:04.0/class",
    "sys/devices/pci0000:00/0000:00:04.0/vendor",
    "sys/devices/pci0000:00/0000:00:04.0/device",
    "sys/devices/pci0000:00/0000:00:04.0/numa_node",
    "sys/devices/pci0000:00/0000:00:04.0/subsystem_vendor",
    "sys/devices/pci0000:00/0000:00:04.0/subsystem_device",
    "sys/devices/pci0000:00/0000:00:04.0/sriov_totalvfs",
    "sys/devices/pci0000:00/0000:00:04.0/sriov_numvfs",
    "sys/devices/pci0000:00/0000:00:04.0/net/eth0/address",
    "sys/devices/pci0000:00/0000:00:04.0/net/eth0/mtu",
    "sys/devices/pci0000:00/0000:00:04.0/net/eth0/operstate",
    "sys/devices/pci0000:00/0000:00:04.0/net/eth0/type",
    "sys/devices/pci0000:00/0000:00:04.0/net/eth0/flags",
    "sys/devices/pci0000:00/0000:00:04.0/net/eth0/ifindex",
    "sys/devices/pci0000:00/0000:00:04.0/net/eth0/iflink",
    "sys/devices/pci0000:00/0000:00:04.0/net/eth0/ifalias",
    "sys/devices/pci0000:00/0000:00:04.0/infiniband/mlx5_0/node_type",
    "sys/devices/pci0000:00/0000:00:04.0/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0",
    "sys/devices/pci0000:00/0000:00:04.0/infiniband/mlx5_0/ports/1/link_layer",
    "sys/devices/pci0000:00/0000:00:04.0/infiniband/mlx5_0/ports/1/state",
    "sys/class/infiniband_verbs/uverbs0/ibdev",
    "sys/class/infiniband_verbs/uverbs0/dev",
    "sys/class/misc/rdma_cm/dev",
    "sys/devices/virtual/net/veth0/address",
    "sys/devices/virtual/net/veth0/mtu",
    "sys/devices/virtual/net/veth0/type",
    "sys/devices/virtual/net/veth0/ifindex",
    "sys/devices/virtual/net/veth0/iflink",
    "sys/devices/virtual/net/veth0/flags",
    "sys/devices/pci0000:00/0000:00:04.0/uevent",
};

void WriteFile(const fs::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

void Link(const fs::path& link, const std::string& target) {
  fs::create_directories(link.parent_path());
  fs::create_symlink(target, link);
}

struct Tree {
  fs::path root;
  std::unique_ptr<inventory::Discoverer> discoverer;

  Tree() {
    std::string pattern = (fs::temp_directory_path() / "dranet-sysfs-fuzz-XXXXXX").string();
    if (!mkdtemp(pattern.data())) fuzz::Fail("mkdtemp failed");
    root = pattern;
    const fs::path fn = root / kFunction;
    for (const char* dir : {"net/eth0", "infiniband/mlx5_0/ports/1/gid_attrs/ndevs"}) {
      fs::create_directories(fn / dir);
    }
    fs::create_directories(root / "sys/bus/pci/drivers/mlx5_core");
    fs::create_directories(root / "sys/class/infiniband_verbs/uverbs0");
    fs::create_directories(root / "sys/class/misc/rdma_cm");
    fs::create_directories(root / "sys/devices/virtual/net/veth0");
    Link(root / "sys/bus/pci/devices/0000:00:04.0", "../../../devices/pci0000:00/0000:00:04.0");
    Link(fn / "driver", "../../../bus/pci/drivers/mlx5_core");
    Link(fn / "net/eth0/device", "../..");
    Link(root / "sys/class/net/eth0", "../../devices/pci0000:00/0000:00:04.0/net/eth0");
    Link(root / "sys/class/net/veth0", "../../devices/virtual/net/veth0");
    Link(fn / "infiniband/mlx5_0/device", "../..");
    Link(root / "sys/class/infiniband/mlx5_0", "../../devices/pci0000:00/0000:00:04.0/infiniband/mlx5_0");
    WriteFile(root / "dranet-snapshot.json",
              R"({"formatVersion":1,"nodeName":"fuzz","source":"synthetic","description":"sysfs_fuzz"})");
    WriteFile(root / "pci.ids", "15b3  Mellanox Technologies\n\t101e  ConnectX Family mlx5Gen Virtual Function\n");
    inventory::DiscoveryOptions options;
    options.host_root = root;
    options.pci_ids = root / "pci.ids";
    options.netlink_source = inventory::DiscoveryOptions::NetlinkSource::kSnapshot;
    discoverer = std::make_unique<inventory::Discoverer>(options, fuzz::DiscardingLogger());
  }
  ~Tree() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
};

Tree& TheTree() {
  static Tree tree;
  return tree;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  TheTree();  // removed by its static destructor at exit
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Tree& tree = TheTree();
  FuzzedDataProvider fdp(data, size);
  for (const char* name : kFuzzedFiles) {
    const fs::path path = tree.root / name;
    std::string content = fdp.ConsumeRandomLengthString(8192);
    if (content.empty() && fdp.remaining_bytes() > 0 && fdp.ConsumeBool()) {
      std::error_code ignored;
      fs::remove(path, ignored);
    } else {
      WriteFile(path, content);
    }
  }

  const std::vector<inventory::Device> devices = tree.discoverer->Discover();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    fuzz::Check(!d.name.empty() && d.name.size() <= 63, "device name empty or longer than 63: " + d.name);
    fuzz::Check(i == 0 || devices[i - 1].name < d.name, "devices not sorted by unique name");
    for (const auto& [key, value] : d.attributes) {
      if (const auto* s = std::get_if<std::string>(&value)) {
        fuzz::Check(s->size() <= 64, "attribute " + key + " longer than 64 bytes");
      } else if (const auto* v = std::get_if<inventory::SemVer>(&value)) {
        fuzz::Check(v->value.size() <= 64, "attribute " + key + " longer than 64 bytes");
      }
    }
  }
  return 0;
}
