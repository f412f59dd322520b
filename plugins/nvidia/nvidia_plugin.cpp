// The nvidia plugin: for every PCI NIC, the nearest NVIDIA GPU (bus ID and
// nvidia-smi index) and the link class to it, under nvidia.dra.net/; and
// NCCL_IB_HCA naming exactly a claim's HCAs.
//
// GPUs come from sysfs (vendor 0x10de, VGA or 3D controller class). When
// NVML (libnvidia-ml.so.1) can be loaded and the plugin looks at the live
// host, its device order gives the indices; otherwise the order is
// ascending PCI bus ID, which is how nvidia-smi numbers GPUs. NVML is
// never required: nothing links against it.
#include <dranet/plugin.hpp>


#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_nic_plugin.h"
#include "vendor_library.h"
#include "pci_topology.h"

namespace {

namespace common = dranet::plugins::common;
using dranet::sdk::AttrSink;
using dranet::sdk::DeviceView;
using dranet::sdk::EditSink;
using dranet::sdk::Host;
using dranet::sdk::InjectRequest;

const dranet_config_key_t kNvidiaKeys[] = {
    {sizeof(dranet_config_key_t), "nvml", "auto",
     "auto: use NVML for GPU order when present and the host root is /; on: try it always; off: sysfs only"},
    {sizeof(dranet_config_key_t), "nvml-library", "libnvidia-ml.so.1", "NVML library loaded with dlopen"},
    {0, nullptr, nullptr, nullptr}};

bool IsNvidiaGpu(const common::PciFunction& f) {
  uint32_t cls = f.class_code >> 8;
  return f.vendor == 0x10de && (cls == 0x0300 || cls == 0x0302);
}

// NVML entry points we use (stable C symbols of libnvidia-ml.so.1).
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlGetCount = int (*)(unsigned int*);
using NvmlGetHandle = int (*)(unsigned int, void**);
using NvmlGetPciInfo = int (*)(void*, void*);

// GPU bus IDs in NVML order ("0000:8f:00.0"), or an empty list with `why`
// set when NVML cannot be used.
std::vector<std::string> NvmlBusIds(const std::string& library, std::string& why) {
  common::VendorLibrary lib(library);
  if (!lib.ok()) {
    why = lib.why();
    return {};
  }
  std::vector<std::string> ids;
  auto init = lib.Symbol<NvmlInit>("nvmlInit_v2");
  auto shutdown = lib.Symbol<NvmlShutdown>("nvmlShutdown");
  auto count = lib.Symbol<NvmlGetCount>("nvmlDeviceGetCount_v2");
  auto handle = lib.Symbol<NvmlGetHandle>("nvmlDeviceGetHandleByIndex_v2");
  auto pci = lib.Symbol<NvmlGetPciInfo>("nvmlDeviceGetPciInfo_v3");
  if (!init || !shutdown || !count || !handle || !pci) {
    why = library + " lacks the NVML v2/v3 entry points";
  } else if (int rc = init(); rc != 0) {
    why = "nvmlInit_v2 failed with " + std::to_string(rc);
  } else {
    unsigned int n = 0;
    if (count(&n) == 0) {
      for (unsigned int i = 0; i < n && i < 64; ++i) {
        void* dev = nullptr;
        // nvmlPciInfo_t: busIdLegacy[16], five unsigned ints, busId[32]. The
        // buffer is larger than the struct so that a longer one stays safe.
        alignas(8) char info[256] = {};
        if (handle(i, &dev) != 0 || pci(dev, info) != 0) break;
        std::string bus_id(info + 36, strnlen(info + 36, 32));  // "00000000:8F:00.0"
        if (bus_id.size() < 12) break;
        ids.push_back(common::ToLower(bus_id.substr(bus_id.size() - 12)));
      }
    }
    shutdown();
    if (ids.empty()) why = "NVML reports no GPUs";
  }
  return ids;
}

class NvidiaPlugin {
 public:
  static constexpr const char* kName = "nvidia";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription =
      "nearest NVIDIA GPU per NIC (PCI topology, nvidia-smi link classes) and NCCL_IB_HCA for claims";
  static constexpr const dranet_config_key_t* kConfigKeys = kNvidiaKeys;

  explicit NvidiaPlugin(const Host& host) : sysfs_(host.sysfs_root()), affinity_({}, {}) {
    auto functions = common::ScanPciFunctions(sysfs_);
    auto gpus = common::SelectFunctions(functions, IsNvidiaGpu);
    if (gpus.empty())
      throw dranet::sdk::NotApplicable("no NVIDIA GPU under " + sysfs_ + "/bus/pci/devices");
    const std::string mode = common::VendorLibraryMode(host, "nvml");
    std::string order = "PCI bus ID";
    if (mode == "on" || (mode == "auto" && host.host_root() == "/")) {
      std::string why;
      auto ids = NvmlBusIds(host.Config("nvml-library", "libnvidia-ml.so.1"), why);
      if (ids.empty()) {
        host.Info("NVML not used (" + why + "); GPU order from sysfs");
      } else {
        std::vector<common::PciFunction> ordered;
        for (const auto& id : ids)
          for (const auto& g : gpus)
            if (g.bdf == id) ordered.push_back(g);
        if (ordered.size() == gpus.size()) {
          gpus = std::move(ordered);
          order = "NVML";
        } else {
          host.Warn("NVML lists " + std::to_string(ids.size()) + " GPUs, sysfs " + std::to_string(gpus.size()) +
                    "; GPU order from sysfs");
        }
      }
    }
    affinity_ = common::MakeAffinity(host, "NVIDIA GPUs (" + order + " order)", std::move(gpus), functions);
  }

  void Annotate(const DeviceView& device, AttrSink& sink) {
    common::AnnotateNearestGpu(affinity_, sysfs_, "nvidia.dra.net", device, sink);
  }

  void Inject(const InjectRequest& request, EditSink& sink) { common::InjectExactHcas(request, sink); }

 private:
  std::string sysfs_;
  common::GpuAffinity affinity_;
};

}  // namespace

DRANET_CXX_PLUGIN(NvidiaPlugin)
