// plugins/common/pci_topology.h — PCI topology between NICs and GPUs, and
// the link classes `nvidia-smi topo -m` prints, computed from sysfs alone.
//
// Header-only, C++17, standard library only; used by the nvidia and amd
// plugins (each compiles its own copy: plugins share no code at run time).
//
// Where a PCI function sits comes from its resolved sysfs path,
//   <sysfs>/bus/pci/devices/<bdf> -> ../../../devices/…/pci0000:00/0000:00:01.0/0000:01:00.0/<bdf>
// i.e. the host bridge ("pci0000:00") and the chain of bridges below it.
// Between a NIC and a GPU the link class is, as nvidia-smi names them:
//   PIX  they meet inside one PCIe switch: the deepest common bridge is below
//        the root port and each side is at most one bridge further down (or
//        both hang directly off the same root port);
//   PXB  they meet below the host bridge, through more bridges than that;
//   PHB  they share only the host bridge (PCIe root complex);
//   NODE different host bridges, same NUMA node (or NUMA unknown on both);
//   SYS  different host bridges and different NUMA nodes (crosses the
//        inter-socket / C2C interconnect).
// Hyper-V gives every passed-through function its own PCI domain, so on
// Azure GPU VMs NICs and GPUs never share a root: NODE or SYS by NUMA.
#ifndef DRANET_PLUGINS_COMMON_PCI_TOPOLOGY_H
#define DRANET_PLUGINS_COMMON_PCI_TOPOLOGY_H

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "sysfs_text.h"

namespace dranet::plugins::common {

enum class LinkClass { kPIX = 0, kPXB = 1, kPHB = 2, kNODE = 3, kSYS = 4 };

inline const char* LinkClassName(LinkClass link) {
  switch (link) {
    case LinkClass::kPIX: return "PIX";
    case LinkClass::kPXB: return "PXB";
    case LinkClass::kPHB: return "PHB";
    case LinkClass::kNODE: return "NODE";
    case LinkClass::kSYS: return "SYS";
  }
  return "SYS";
}

// One PCI function as sysfs describes it.
struct PciFunction {
  std::string bdf;             // "0000:8a:00.0", lower case
  uint32_t vendor = 0;         // e.g. 0x10de
  uint32_t device = 0;         // e.g. 0x2901
  uint32_t class_code = 0;     // 24-bit class, e.g. 0x030200
  int32_t numa_node = -1;      // -1 when unknown
  std::string host_bridge;     // "pci0000:00"; empty when the path could not be resolved
  std::vector<std::string> bridges;  // BDFs from the root port down, the function excluded
};

// "dddd:bb:dd.f" in hex (the form sysfs uses).
inline bool IsBdf(const std::string& s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

inline std::string ToLower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "pciDDDD:BB", the directory of a host bridge under /sys/devices.
inline bool IsHostBridgeDir(const std::string& s) {
  return s.size() == 10 && s.compare(0, 3, "pci") == 0 && IsBdf(s.substr(3) + ":00.0");
}

// Reads <sysfs_root>/bus/pci/devices/<bdf>; nullopt when it does not exist.
inline std::optional<PciFunction> ReadPciFunction(const std::string& sysfs_root, const std::string& bdf) {
  namespace fs = std::filesystem;
  std::string lower = ToLower(bdf);
  if (!IsBdf(lower)) return std::nullopt;
  fs::path link = fs::path(sysfs_root) / "bus" / "pci" / "devices" / lower;
  std::error_code ec;
  if (!fs::exists(link, ec)) return std::nullopt;
  PciFunction f;
  f.bdf = lower;
  f.vendor = ReadHex((link / "vendor").string()).value_or(0);
  f.device = ReadHex((link / "device").string()).value_or(0);
  f.class_code = ReadHex((link / "class").string()).value_or(0);
  f.numa_node = ReadInt((link / "numa_node").string(), -1);
  if (f.numa_node < -1) f.numa_node = -1;
  fs::path resolved = fs::canonical(link, ec);
  if (!ec) {
    std::vector<std::string> chain;
    for (const auto& part : resolved) {
      std::string name = part.string();
      if (IsHostBridgeDir(name)) {
        f.host_bridge = name;
        chain.clear();
      } else if (!f.host_bridge.empty() && IsBdf(name)) {
        chain.push_back(name);
      }
    }
    if (!chain.empty() && chain.back() == lower) chain.pop_back();
    f.bridges = std::move(chain);
  }
  return f;
}

// Every PCI function under <sysfs_root>/bus/pci/devices, sorted by BDF.
inline std::vector<PciFunction> ScanPciFunctions(const std::string& sysfs_root) {
  namespace fs = std::filesystem;
  std::vector<PciFunction> out;
  std::error_code ec;
  fs::directory_iterator it(fs::path(sysfs_root) / "bus" / "pci" / "devices", ec);
  if (ec) return out;
  for (const auto& entry : it) {
    auto f = ReadPciFunction(sysfs_root, entry.path().filename().string());
    if (f) out.push_back(std::move(*f));
  }
  std::sort(out.begin(), out.end(), [](const PciFunction& a, const PciFunction& b) { return a.bdf < b.bdf; });
  return out;
}

// Network controllers (PCI base class 0x02: Ethernet, InfiniBand, …).
inline bool IsNetworkFunction(const PciFunction& f) { return (f.class_code >> 16) == 0x02; }

// The nvidia-smi link class between two PCI functions.
inline LinkClass Classify(const PciFunction& a, const PciFunction& b) {
  if (a.host_bridge.empty() || b.host_bridge.empty() || a.host_bridge != b.host_bridge) {
    bool same_node = a.numa_node == b.numa_node;  // both unknown counts as one node
    return same_node ? LinkClass::kNODE : LinkClass::kSYS;
  }
  std::size_t common = 0;
  while (common < a.bridges.size() && common < b.bridges.size() && a.bridges[common] == b.bridges[common])
    ++common;
  if (common == 0) return LinkClass::kPHB;
  std::size_t below_a = a.bridges.size() - common;
  std::size_t below_b = b.bridges.size() - common;
  if (common == 1) {
    // The deepest shared bridge is the root port.
    return below_a == 0 && below_b == 0 ? LinkClass::kPIX : LinkClass::kPXB;
  }
  // Shared bridge inside a switch: one downstream port on each side is PIX.
  return below_a <= 1 && below_b <= 1 ? LinkClass::kPIX : LinkClass::kPXB;
}

// The GPU a NIC is closest to.
struct GpuMatch {
  std::string bus_id;  // the GPU's BDF, e.g. "0008:06:00.0"
  int64_t index = 0;   // position in the vendor tool's order (nvidia-smi / rocm-smi)
  LinkClass link = LinkClass::kSYS;
};

// Pairs NICs with their nearest GPU. When several GPUs are equally close
// (e.g. two GPUs and two NICs on one NUMA node with separate roots), NIC
// cards of the same model that see the same set of closest GPUs are spread
// over them in PCI address order: the j-th such card gets the j-th GPU
// (modulo), which is how the hardware is cabled on the GPU node types we
// know. A card is one PCI device (domain:bus:device): the two ports of a
// dual-port NIC (OCI GB200's ConnectX-8, functions .0 and .1) go to one GPU.
class GpuAffinity {
 public:
  // `gpus` in the vendor tool's index order; `nics` every network function.
  GpuAffinity(std::vector<PciFunction> gpus, std::vector<PciFunction> nics)
      : gpus_(std::move(gpus)), nics_(std::move(nics)) {}

  const std::vector<PciFunction>& gpus() const { return gpus_; }

  std::optional<GpuMatch> Nearest(const PciFunction& nic) const {
    if (gpus_.empty()) return std::nullopt;
    Closest mine = ClosestOf(nic);
    std::vector<std::string> peers{nic.bdf};
    for (const auto& other : nics_) {
      if (other.bdf == nic.bdf || other.vendor != nic.vendor || other.device != nic.device) continue;
      Closest theirs = ClosestOf(other);
      if (theirs.link == mine.link && theirs.gpus == mine.gpus) peers.push_back(other.bdf);
    }
    // One rank per card: the BDF without its function.
    auto card = [](const std::string& bdf) { return bdf.substr(0, bdf.rfind('.')); };
    for (auto& p : peers) p = card(p);
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    std::size_t rank =
        static_cast<std::size_t>(std::find(peers.begin(), peers.end(), card(nic.bdf)) - peers.begin());
    std::size_t pick = mine.gpus[rank % mine.gpus.size()];
    return GpuMatch{gpus_[pick].bdf, static_cast<int64_t>(pick), mine.link};
  }

 private:
  struct Closest {
    LinkClass link = LinkClass::kSYS;
    std::vector<std::size_t> gpus;  // indices into gpus_ at that class, ascending
  };
  Closest ClosestOf(const PciFunction& nic) const {
    Closest c;
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      LinkClass link = Classify(nic, gpus_[i]);
      if (c.gpus.empty() || link < c.link) {
        c.link = link;
        c.gpus.assign(1, i);
      } else if (link == c.link) {
        c.gpus.push_back(i);
      }
    }
    return c;
  }

  std::vector<PciFunction> gpus_;
  std::vector<PciFunction> nics_;
};

}  // namespace dranet::plugins::common

#endif  // DRANET_PLUGINS_COMMON_PCI_TOPOLOGY_H
