#include <arpa/inet.h>
#include <net/if.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "inventory/inventory.h"
#include "inventory/naming.h"
#include "inventory/snapshot.h"

namespace dranet::inventory {
namespace fs = std::filesystem;

namespace {

// Drivers that take a function away from the kernel network stack: such a
// function cannot be handed to a pod as a NIC (DRANET's nonNetdevDrivers).
constexpr std::array<std::string_view, 4> kUnallocatableDrivers = {"vfio-pci", "uio_pci_generic", "igb_uio",
                                                                    "pci-stub"};
// PCI base class 0x02: network controllers (0x0200 Ethernet, 0x0207 InfiniBand, ...).
constexpr uint64_t kNetworkBaseClass = 0x02;
// The kernel's REMOTE_DISTANCE (include/linux/topology.h): NUMA distances
// below it are within one socket (LOCAL_DISTANCE 10 is a node to itself).
constexpr int64_t kRemoteNumaDistance = 20;

// What discovery knows about one PCI function.
struct PciFunction {
  std::string address;
  std::optional<uint64_t> class_code;  // 24-bit class/subclass/prog-if
  std::optional<uint64_t> vendor_id;
  std::optional<uint64_t> device_id;
  std::optional<uint64_t> subsystem_device_id;
  int64_t numa_node = -1;
  std::string driver;
  std::string pcie_root;
  int64_t sriov_total_vfs = 0;
  int64_t sriov_num_vfs = 0;
  bool is_virtual_function = false;
  std::string physical_function;  // a VF's PF address (the physfn link)
};

// A netdev that resolved to a PCI function, waiting for the primary choice.
struct NetdevCandidate {
  const LinkFacts* link;
  bool is_child_link;  // IFLA_LINK names another link (IPoIB pkey child, ...)
};

// One discovery pass. Holds the pass's intermediate maps; Run() returns the
// finished, sorted device list.
class DiscoveryPass {
 public:
  DiscoveryPass(const DiscoveryOptions& options, const HostPaths& paths, Logger& log, PciNameDatabase& names)
      : options_(options), paths_(paths), log_(log), names_(names) {}

  std::vector<Device> Run() {
    facts_ = ReadNetlinkFacts(options_, log_);
    ScanPciFunctions();
    ScanRdmaDevices();
    ScanCharDevices();
    ScanNetdevs();
    return Finish();
  }

 private:
  static std::string PciDir(const std::string& address) { return "bus/pci/devices/" + address; }

  // Opens `absolute`, a path under the host root as ResolveLink() returns
  // them, from the sysfs directory when it lies inside it (a shorter walk).
  // Either open is contained in the root whatever the path says.
  SysfsDirectory OpenUnderRoot(const fs::path& absolute) const {
    fs::path relative = absolute.lexically_relative(paths_.sysfs);
    if (!relative.empty() && *relative.begin() != "..") return SysfsDirectory(sysfs_, relative.string());
    return SysfsDirectory(root_, absolute.lexically_relative(paths_.root).string());
  }

  // Reads a number with `parse`; garbage is logged, absence is not.
  template <typename Parse>
  auto ReadNumberFile(const SysfsDirectory& dir, const char* name, Parse parse) -> decltype(parse("")) {
    auto text = dir.Read(name);
    if (!text) return std::nullopt;
    auto value = parse(*text);
    if (!value) {
      log_.Warning("ignoring malformed sysfs value", {{"file", (dir.path() / name).string()}, {"bytes", text->size()}});
    }
    return value;
  }
  std::optional<uint64_t> ReadHexFile(const SysfsDirectory& dir, const char* name) {
    return ReadNumberFile(dir, name, ParseHex);
  }
  std::optional<int64_t> ReadDecimalFile(const SysfsDirectory& dir, const char* name) {
    return ReadNumberFile(dir, name, ParseDecimal);
  }

  PciFunction ReadPciFunction(const SysfsDirectory& dir, const std::string& address,
                              std::optional<uint64_t> class_code) {
    PciFunction function;
    function.address = address;
    function.class_code = class_code;
    // The ids and the bound driver from the function's uevent, one read
    // where four would do; the separate files where it lacks them.
    std::optional<PciUevent> uevent;
    if (auto text = dir.Read("uevent")) uevent = ParsePciUevent(*text);
    function.vendor_id = uevent && uevent->vendor_id ? uevent->vendor_id : ReadHexFile(dir, "vendor");
    function.device_id = uevent && uevent->device_id ? uevent->device_id : ReadHexFile(dir, "device");
    function.subsystem_device_id =
        uevent && uevent->subsystem_device_id ? uevent->subsystem_device_id : ReadHexFile(dir, "subsystem_device");
    function.numa_node = ReadDecimalFile(dir, "numa_node").value_or(-1);
    // The kernel writes DRIVER= whenever a driver is bound.
    function.driver = uevent ? uevent->driver : dir.LinkTargetName("driver").value_or("");
    if (auto resolved = pci_device_links_.ResolveLink(address)) {
      function.pcie_root = PcieRootInPath(*resolved, paths_.sysfs);
    }
    function.sriov_total_vfs = ReadDecimalFile(dir, "sriov_totalvfs").value_or(0);
    if (function.sriov_total_vfs > 0) function.sriov_num_vfs = ReadDecimalFile(dir, "sriov_numvfs").value_or(0);
    function.physical_function = dir.LinkTargetName("physfn").value_or("");
    function.is_virtual_function = !function.physical_function.empty();
    return function;
  }

  PciFunction ReadPciFunction(const std::string& address) {
    SysfsDirectory dir(sysfs_, PciDir(address));
    return ReadPciFunction(dir, address, ReadHexFile(dir, "class"));
  }

  Device& AddPciDevice(const PciFunction& function) {
    Device& device = pci_devices_[function.address];
    device.name = DeviceNameForPciAddress(function.address);
    device.pci_address = function.address;
    device.driver = function.driver;
    device.physical_function = function.physical_function;
    device.numa_node = static_cast<int32_t>(function.numa_node);
    if (function.vendor_id) device.pci_vendor_id = static_cast<uint32_t>(*function.vendor_id);
    if (function.device_id) device.pci_device_id = static_cast<uint32_t>(*function.device_id);
    functions_[function.address] = function;
    SetPciAttributes(device, function);
    return device;
  }

  // Phase 1: PCI network functions with a kernel network driver bound.
  void ScanPciFunctions() {
    std::error_code error;
    auto entries = pci_device_links_.List(".", &error);
    if (error) {
      log_.Warning("cannot list PCI devices; only virtual netdevs can be discovered",
                   {{"dir", (paths_.sysfs / "bus/pci/devices").string()}, {"error", error.message()}});
    }
    for (const auto& address : entries) {
      if (!IsPciAddress(address)) {
        log_.Warning("ignoring PCI entry that is not a PCI address", {{"entry", address}});
        continue;
      }
      // Most functions of a GPU node are not network functions: their class
      // is read through the listing's link, without opening their directory
      // (from sys/, where the link's climb to devices/ stays below the start).
      auto class_code = ReadHexFile(sysfs_, (PciDir(address) + "/class").c_str());
      if (!class_code || (*class_code >> 16) != kNetworkBaseClass) continue;
      PciFunction function = ReadPciFunction(SysfsDirectory(sysfs_, PciDir(address)), address, class_code);
      if (function.driver.empty()) {
        log_.Info("PCI network function skipped: no driver bound", {{"pciAddress", address}});
        continue;
      }
      if (std::find(kUnallocatableDrivers.begin(), kUnallocatableDrivers.end(), function.driver) !=
          kUnallocatableDrivers.end()) {
        log_.Info("PCI network function skipped: bound to a userspace driver",
                  {{"pciAddress", address}, {"driver", function.driver}});
        continue;
      }
      AddPciDevice(function);
    }
  }

  // Phase 2: RDMA devices. Each maps to its PCI function; a function not
  // found above (e.g. eRDMA with class 0x00ff) becomes an IB-only device.
  void ScanRdmaDevices() {
    fs::path class_dir = paths_.sysfs / "class/infiniband";
    SysfsDirectory class_infiniband(sysfs_, "class/infiniband");
    for (const auto& rdma_device : class_infiniband.List()) {
      // Relative links inside the device directory resolve against its real
      // location, not against the class/ alias.
      auto class_link = class_infiniband.ResolveLink(rdma_device);
      fs::path dir = class_link.value_or(class_dir / rdma_device);
      SysfsDirectory device_dir = OpenUnderRoot(dir);
      // The kernel puts an RDMA device under its parent (.../<pci>/infiniband/
      // mlx5_0, or .../<pci>/mlx5_core.rdma.0/infiniband/mlx5_0): the class
      // link names the function the `device` link would, one read fewer. The
      // `device` link is read where the class link names no PCI function.
      std::string address = class_link ? PciAddressInPath(class_link->native()) : std::string();
      if (address.empty()) {
        auto resolved = device_dir.ResolveLink("device");
        if (resolved) address = PciAddressInPath(resolved->native());
      }
      if (!address.empty()) {
        auto it = pci_devices_.find(address);
        if (it == pci_devices_.end()) {
          if (log_.V(1)) log_.Verbose(1, "RDMA device on a non-network PCI function", {{"rdmaDevice", rdma_device}});
          it = pci_devices_.find(AddPciDevice(ReadPciFunction(address)).pci_address);
        }
        // Sorted listing: the first RDMA device of a function wins, deterministically.
        if (it->second.rdma_device.empty()) it->second.rdma_device = rdma_device;
      }
      // RoCE: the netdev behind each port's default GID (index 0) names the
      // netdev this HCA serves (also for bonds and soft-RoCE without PCI).
      bool first_port = true;
      for (const auto& port : device_dir.List("ports")) {
        auto netdev = device_dir.Read(("ports/" + port + "/gid_attrs/ndevs/0").c_str());
        if (netdev && !netdev->empty()) rdma_by_netdev_.emplace(*netdev, rdma_device);
        // The first port's rate ("400 Gb/sec (4X NDR)"): the device's link speed.
        if (first_port) {
          if (auto rate = device_dir.Read(("ports/" + port + "/rate").c_str()))
            if (int64_t mbps = RdmaRateMbps(*rate); mbps > 0) rate_mbps_by_rdma_[rdma_device] = mbps;
          first_port = false;
        }
      }
    }
  }

  // The char device `dev_name` whose sysfs directory is `entry_dir`, a path
  // relative to sys/ (its `dev` file).
  std::optional<CharDevice> ReadCharDevice(const std::string& entry_dir, const std::string& dev_name) {
    const std::string dev_relative = entry_dir + "/dev";
    fs::path dev_file = paths_.sysfs / dev_relative;
    auto text = sysfs_.Read(dev_relative.c_str());
    if (!text) return std::nullopt;
    auto colon = text->find(':');
    std::optional<int64_t> major, minor;
    if (colon != std::string::npos) {
      major = ParseDecimal(std::string_view(*text).substr(0, colon));
      minor = ParseDecimal(std::string_view(*text).substr(colon + 1));
    }
    if (!major || !minor || *major < 0 || *minor < 0 || *major > UINT32_MAX || *minor > UINT32_MAX) {
      log_.Warning("ignoring char device with malformed dev file", {{"file", dev_file.string()}});
      return std::nullopt;
    }
    return CharDevice{"infiniband/" + dev_name, static_cast<uint32_t>(*major), static_cast<uint32_t>(*minor)};
  }

  // uverbsN, umadN and issmN per RDMA device, plus the global rdma_cm.
  void ScanCharDevices() {
    for (const char* class_name : {"class/infiniband_verbs", "class/infiniband_mad"}) {
      for (const auto& entry : sysfs_.List(class_name)) {
        // Two reads through the entry's link, no directory opened for them;
        // from sys/, where the link's climb to devices/ stays below the start.
        const std::string entry_dir = std::string(class_name) + "/" + entry;
        auto rdma_device = sysfs_.Read((entry_dir + "/ibdev").c_str());
        if (!rdma_device) continue;  // abi_version and other plain files
        if (auto char_device = ReadCharDevice(entry_dir, entry)) {
          char_devices_by_rdma_[*rdma_device].push_back(*char_device);
        }
      }
    }
    rdma_cm_ = ReadCharDevice("class/misc/rdma_cm", "rdma_cm");
  }

  // Phase 3: netdevs, attached to their PCI function or published as virtual.
  void ScanNetdevs() {
    std::map<std::string, std::vector<NetdevCandidate>> candidates_by_address;
    for (const auto& link : facts_.links) {
      if (link.name.empty()) continue;
      if (link.flags & IFF_LOOPBACK) continue;
      if (std::find(options_.ignored_interfaces.begin(), options_.ignored_interfaces.end(), link.name) !=
          options_.ignored_interfaces.end()) {
        continue;
      }
      if (options_.skip_ipoib && link.kind == "ipoib") {
        if (log_.V(1)) log_.Verbose(1, "IPoIB netdev ignored (skip_ipoib)", {{"ifName", link.name}});
        continue;
      }
      auto resolved = netdev_links_.ResolveLink(link.name);
      std::string address = resolved ? PciAddressInPath(resolved->native()) : std::string();
      if (address.empty()) {
        bool is_virtual = resolved && resolved->lexically_relative(paths_.sysfs / "devices/virtual").native().rfind(
                                          "..", 0) != 0;
        AddVirtualNetdev(link, is_virtual);
        continue;
      }
      if (!pci_devices_.count(address)) {
        PciFunction function = ReadPciFunction(address);
        if (std::find(kUnallocatableDrivers.begin(), kUnallocatableDrivers.end(), function.driver) !=
                kUnallocatableDrivers.end() ||
            function.driver.empty()) {
          continue;
        }
        log_.Info("netdev on a PCI function outside the network class; publishing it",
                  {{"ifName", link.name}, {"pciAddress", address}});
        AddPciDevice(function);
      }
      bool is_child = link.parent_index != 0 && link.parent_index != link.ifindex;
      candidates_by_address[address].push_back({&link, is_child});
    }
    for (auto& [address, candidates] : candidates_by_address) {
      std::sort(candidates.begin(), candidates.end(), [](const NetdevCandidate& a, const NetdevCandidate& b) {
        return std::pair(a.is_child_link, a.link->ifindex) < std::pair(b.is_child_link, b.link->ifindex);
      });
      Device& device = pci_devices_[address];
      for (std::size_t i = 1; i < candidates.size(); ++i) device.secondary_if_names.push_back(candidates[i].link->name);
      std::sort(device.secondary_if_names.begin(), device.secondary_if_names.end());
      if (candidates.size() > 1) {
        log_.Info("several netdevs on one PCI function; publishing the primary one",
                  {{"pciAddress", address}, {"ifName", candidates[0].link->name},
                   {"others", static_cast<int64_t>(candidates.size() - 1)}});
      }
      SetNetdevAttributes(device, *candidates[0].link, false, &functions_[address]);
    }
  }

  void AddVirtualNetdev(const LinkFacts& link, bool is_virtual) {
    Device device;
    device.name = DeviceNameForInterface(link.name);
    SetNetdevAttributes(device, link, is_virtual, nullptr);
    std::string name = device.name;
    if (!virtual_devices_.emplace(name, std::move(device)).second) {
      log_.Error("two netdevs map to one device name; keeping the first", {{"device", name}, {"ifName", link.name}});
    }
  }

  void SetString(Device& device, std::string_view key, std::string_view value) {
    bool truncated = false;
    std::string capped = CapAttributeValue(value, &truncated);
    if (truncated) {
      log_.Warning("attribute value cut to the API's 64-byte limit",
                   {{"device", device.name}, {"attribute", key}, {"bytes", value.size()}});
    }
    device.attributes[std::string(key)] = std::move(capped);
  }

  void SetPciAttributes(Device& device, const PciFunction& function) {
    SetString(device, attr::kPciAddress, function.address);
    std::string bus_id = function.address;
    std::transform(bus_id.begin(), bus_id.end(), bus_id.begin(), [](unsigned char c) { return std::tolower(c); });
    SetString(device, attr::kStandardPciBusId, bus_id);
    if (function.vendor_id) {
      if (auto vendor = names_.VendorName(static_cast<uint16_t>(*function.vendor_id))) {
        SetString(device, attr::kPciVendor, *vendor);
      }
      if (function.device_id) {
        if (auto name = names_.DeviceName(static_cast<uint16_t>(*function.vendor_id),
                                          static_cast<uint16_t>(*function.device_id))) {
          SetString(device, attr::kPciDevice, *name);
        }
      }
    }
    if (function.subsystem_device_id) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "%04llx", static_cast<unsigned long long>(*function.subsystem_device_id));
      SetString(device, attr::kPciSubsystem, hex);
    }
    if (function.numa_node >= 0) {
      device.attributes[std::string(attr::kNumaNode)] = function.numa_node;
      AttributeValue standard = function.numa_node;
      if (options_.numa_node_list) standard = LocalNumaNodes(function.numa_node);
      device.attributes[std::string(attr::kStandardNumaNode)] = std::move(standard);
    }
    if (!function.pcie_root.empty()) SetString(device, attr::kStandardPcieRoot, function.pcie_root);
    // SR-IOV facts for functions without a netdev too (an IB-only PF is still
    // a PF); SetNetdevAttributes adds sriov=false for every netdev as DRANET.
    SetSriovAttributes(device, function);
  }

  // The list form of resource.kubernetes.io/numaNode (DiscoveryOptions::
  // numa_node_list): `node` first, then the other nodes at the smallest
  // distance from it when that distance is below the kernel's
  // REMOTE_DISTANCE, ascending. The kernel writes node<N>/distance as one
  // distance per online node, in node order; those nodes are the node<M>
  // directories beside it. Just `node` when the file is missing or does not
  // fit them.
  const IntList& LocalNumaNodes(int64_t node) {
    auto [it, added] = local_numa_nodes_.try_emplace(node, IntList{node});
    if (!added) return it->second;
    const std::string dir = "devices/system/node/node" + std::to_string(node);
    auto text = SysfsDirectory(sysfs_, dir).Read("distance");
    if (!text) return it->second;
    std::vector<int64_t> nodes;
    for (const auto& name : sysfs_.List("devices/system/node")) {
      if (name.rfind("node", 0) != 0) continue;
      if (auto id = ParseDecimal(std::string_view(name).substr(4)); id && *id >= 0) nodes.push_back(*id);
    }
    std::sort(nodes.begin(), nodes.end());
    std::vector<int64_t> distances;
    std::istringstream words(*text);
    for (std::string word; words >> word;) distances.push_back(ParseDecimal(word).value_or(-1));
    const bool fits = distances.size() == nodes.size() &&
                      std::none_of(distances.begin(), distances.end(), [](int64_t d) { return d < 0; }) &&
                      std::binary_search(nodes.begin(), nodes.end(), node);
    if (!fits) {
      log_.Warning("ignoring NUMA distances that do not match the node directories",
                   {{"file", (paths_.sysfs / dir / "distance").string()},
                    {"nodes", static_cast<int64_t>(nodes.size())}});
      return it->second;
    }
    int64_t nearest = kRemoteNumaDistance;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i] != node) nearest = std::min(nearest, distances[i]);
    }
    if (nearest >= kRemoteNumaDistance) return it->second;  // no other node on this socket
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i] != node && distances[i] == nearest) it->second.push_back(nodes[i]);
    }
    return it->second;
  }

  void SetSriovAttributes(Device& device, const PciFunction& function) {
    if (function.sriov_total_vfs > 0) {
      device.attributes[std::string(attr::kSriov)] = true;
      device.attributes[std::string(attr::kSriovVfs)] = function.sriov_num_vfs;
    }
    if (function.is_virtual_function) device.attributes[std::string(attr::kIsSriovVf)] = true;
  }

  void SetNetdevAttributes(Device& device, const LinkFacts& link, bool is_virtual, const PciFunction* function) {
    device.if_name = link.name;
    SetString(device, attr::kIfName, link.name);
    if (!link.mac.empty()) SetString(device, attr::kMac, link.mac);
    if (link.mtu > 0) device.attributes[std::string(attr::kMtu)] = static_cast<int64_t>(link.mtu);
    if (!link.operstate.empty()) SetString(device, attr::kState, link.operstate);
    SetString(device, attr::kType, link.kind.empty() ? "device" : link.kind);
    SetString(device, attr::kEncapsulation, EncapsulationName(link.arp_type));
    SetString(device, attr::kAlias, link.alias);
    device.attributes[std::string(attr::kVirtual)] = is_virtual;
    device.attributes.try_emplace(std::string(attr::kSriov), false);
    if (function) SetSriovAttributes(device, *function);
    auto ipv4 = GlobalUnicastAddresses(link.addresses, AF_INET);
    auto ipv6 = GlobalUnicastAddresses(link.addresses, AF_INET6);
    if (!ipv4.empty()) SetString(device, attr::kIpv4, JoinWholeItemsCapped(ipv4));
    if (!ipv6.empty()) SetString(device, attr::kIpv6, JoinWholeItemsCapped(ipv6));
    if (link.bpf_programs) SetBpfAttributes(device, *link.bpf_programs);
  }

  // DRANET's eBPF attributes: the comma-joined names of each kind when that
  // kind is present, and whether any is. Nothing when the names are unknown.
  void SetBpfAttributes(Device& device, const BpfProgramNames& names) {
    auto join = [](const std::vector<std::string>& items) {
      std::string joined;
      for (std::size_t i = 0; i < items.size(); ++i) joined += (i == 0 ? "" : ",") + items[i];
      return joined;
    };
    if (!names.tc_filters.empty()) SetString(device, attr::kTcFilterNames, join(names.tc_filters));
    if (!names.tcx_programs.empty()) SetString(device, attr::kTcxProgramNames, join(names.tcx_programs));
    device.attributes[std::string(attr::kEbpf)] = names.any();
  }

  // RDMA attributes and char devices, uplink exclusion, sorting.
  std::vector<Device> Finish() {
    std::set<std::string> uplinks = ExcludedUplinkInterfaces(facts_);
    std::map<std::string, Device> by_name;
    auto publish = [&](Device&& device) {
      if (IsUplink(device, uplinks)) {
        log_.Info("device excluded: default-route uplink or enslaved to one",
                  {{"device", device.name}, {"ifName", device.if_name}});
        return;
      }
      AttachRdma(device);
      std::string name = device.name;
      if (!by_name.emplace(name, std::move(device)).second) {
        log_.Error("device name collision; keeping the PCI device", {{"device", name}});
      }
    };
    for (auto& [address, device] : pci_devices_) publish(std::move(device));
    for (auto& [name, device] : virtual_devices_) publish(std::move(device));
    std::vector<Device> devices;
    devices.reserve(by_name.size());
    for (auto& [name, device] : by_name) devices.push_back(std::move(device));
    return devices;
  }

  static bool IsUplink(const Device& device, const std::set<std::string>& uplinks) {
    if (!device.if_name.empty() && uplinks.count(device.if_name)) return true;
    return std::any_of(device.secondary_if_names.begin(), device.secondary_if_names.end(),
                       [&](const std::string& name) { return uplinks.count(name) > 0; });
  }

  void AttachRdma(Device& device) {
    if (!device.if_name.empty()) {
      auto it = rdma_by_netdev_.find(device.if_name);
      if (it != rdma_by_netdev_.end()) device.rdma_device = it->second;
    }
    if (device.rdma_device.empty() && !device.pci_address.empty()) {
      // The PCI function's own infiniband/ directory also lists RDMA devices
      // that /sys/class/infiniband hides (moved to a pod in exclusive mode).
      auto listed = sysfs_.List(PciDir(device.pci_address) + "/infiniband");
      if (!listed.empty()) device.rdma_device = listed.front();
    }
    device.attributes[std::string(attr::kRdma)] = !device.rdma_device.empty();
    if (device.rdma_device.empty()) return;
    SetString(device, attr::kRdmaDevice, device.rdma_device);
    if (auto rate = rate_mbps_by_rdma_.find(device.rdma_device); rate != rate_mbps_by_rdma_.end())
      device.link_speed_mbps = rate->second;
    auto it = char_devices_by_rdma_.find(device.rdma_device);
    if (it != char_devices_by_rdma_.end()) device.char_devices = it->second;
    if (rdma_cm_) device.char_devices.push_back(*rdma_cm_);
    std::sort(device.char_devices.begin(), device.char_devices.end(),
              [](const CharDevice& a, const CharDevice& b) { return a.path < b.path; });
  }

  const DiscoveryOptions& options_;
  const HostPaths& paths_;
  SysfsDirectory root_ = SysfsDirectory::OpenRoot(paths_.root);
  SysfsDirectory sysfs_{root_, "sys"};
  // Listings whose links are resolved by entry name: one readlinkat each,
  // with no directories on the way to keep inside the root.
  SysfsDirectory pci_device_links_{sysfs_, "bus/pci/devices"};
  SysfsDirectory netdev_links_{sysfs_, "class/net"};
  Logger& log_;
  PciNameDatabase& names_;
  NetlinkFacts facts_;
  std::map<std::string, Device> pci_devices_;  // by PCI address
  std::map<std::string, PciFunction> functions_;
  std::map<std::string, Device> virtual_devices_;  // by device name
  std::map<std::string, std::string> rdma_by_netdev_;
  std::map<std::string, std::vector<CharDevice>> char_devices_by_rdma_;
  std::map<std::string, int64_t> rate_mbps_by_rdma_;  // the first port's rate
  std::optional<CharDevice> rdma_cm_;
  std::map<int64_t, IntList> local_numa_nodes_;  // LocalNumaNodes() by node
};

}  // namespace

Discoverer::Discoverer(DiscoveryOptions options, Logger& log)
    : options_(std::move(options)), paths_(options_.host_root), log_(log), pci_names_(options_.pci_ids, log) {
  RequireContainedReads(paths_);
  using Source = DiscoveryOptions::NetlinkSource;
  if (options_.netlink_source == Source::kSnapshot ||
      (options_.netlink_source == Source::kAuto && IsSnapshot(options_.host_root)))
    RequireUsableSnapshotNetlink(options_.host_root);
}

std::vector<Device> Discoverer::Discover() {
  DiscoveryPass pass(options_, paths_, log_, pci_names_);
  auto devices = pass.Run();
  pci_names_.ReleaseDatabase();
  return devices;
}

std::vector<Device> Discover(const DiscoveryOptions& options, Logger& log) {
  Discoverer discoverer(options, log);
  return discoverer.Discover();
}

NetlinkFacts ReadNetlinkFacts(const DiscoveryOptions& options, Logger& log) {
  using Source = DiscoveryOptions::NetlinkSource;
  bool snapshot = options.netlink_source == Source::kSnapshot ||
                  (options.netlink_source == Source::kAuto && IsSnapshot(options.host_root));
  return snapshot ? ReadSnapshotNetlinkFacts(options.host_root, log) : ReadLiveNetlinkFacts(log);
}

}  // namespace dranet::inventory
