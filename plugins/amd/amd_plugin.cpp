// The amd plugin: for every PCI NIC, the nearest AMD Instinct GPU (bus ID
// and rocm-smi index) and the link class to it, under amd.dra.net/; and
// NCCL_IB_HCA naming exactly a claim's HCAs (RCCL reads NCCL_IB_HCA with
// NCCL's syntax, so "=mlx5_0,…" restricts it to the allocated HCAs).
//
// GPUs come from ROCm SMI (librocm_smi64.so.1, loaded with dlopen only when
// present and when the plugin looks at the live host) — device order, PCI
// address and NUMA affinity — and otherwise from sysfs (vendor 0x1002,
// display-other or processing-accelerator class, ascending PCI bus ID).
// rsmi_init failing with RSMI_STATUS_INIT_ERROR means "no AMD GPUs".
#include <dranet/plugin.hpp>


#include <cstdint>
#include <cstdio>
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

constexpr uint32_t kRsmiSuccess = 0;
constexpr uint32_t kRsmiInitError = 8;  // RSMI_STATUS_INIT_ERROR: no AMD GPU / no amdgpu driver

const dranet_config_key_t kAmdKeys[] = {
    {sizeof(dranet_config_key_t), "rocm-smi", "auto",
     "auto: use ROCm SMI when present, the host root is / and sysfs shows an AMD GPU; on: try it always; off: sysfs only"},
    {sizeof(dranet_config_key_t), "rocm-smi-library", "librocm_smi64.so.1", "ROCm SMI library loaded with dlopen"},
    {0, nullptr, nullptr, nullptr}};

bool IsAmdGpu(const common::PciFunction& f) {
  uint32_t cls = f.class_code >> 8;
  return f.vendor == 0x1002 && (cls == 0x0380 || cls == 0x1200);
}

struct RocmGpu {
  std::string bdf;
  int32_t numa_node = -1;
};

using RsmiInit = uint32_t (*)(uint64_t);
using RsmiShutDown = uint32_t (*)();
using RsmiNumDevices = uint32_t (*)(uint32_t*);
using RsmiPciId = uint32_t (*)(uint32_t, uint64_t*);
using RsmiNuma = uint32_t (*)(uint32_t, uint32_t*);

// GPUs in ROCm SMI order; empty with `why` set when ROCm SMI is absent,
// unusable or sees no GPU.
std::vector<RocmGpu> RocmSmiGpus(const std::string& library, std::string& why) {
  common::VendorLibrary lib(library);
  if (!lib.ok()) {
    why = lib.why();
    return {};
  }
  std::vector<RocmGpu> gpus;
  auto init = lib.Symbol<RsmiInit>("rsmi_init");
  auto shut_down = lib.Symbol<RsmiShutDown>("rsmi_shut_down");
  auto num = lib.Symbol<RsmiNumDevices>("rsmi_num_monitor_devices");
  auto pci_id = lib.Symbol<RsmiPciId>("rsmi_dev_pci_id_get");
  auto numa = lib.Symbol<RsmiNuma>("rsmi_topo_numa_affinity_get");
  if (!init || !shut_down || !num || !pci_id || !numa) {
    why = library + " lacks the ROCm SMI entry points";
  } else if (uint32_t rc = init(0); rc == kRsmiInitError) {
    why = "ROCm SMI reports no AMD GPU (rsmi_init: RSMI_STATUS_INIT_ERROR)";
  } else if (rc != kRsmiSuccess) {
    why = "rsmi_init failed with status " + std::to_string(rc);
  } else {
    uint32_t n = 0;
    if (num(&n) == kRsmiSuccess) {
      for (uint32_t i = 0; i < n && i < 64; ++i) {
        uint64_t bdfid = 0;
        if (pci_id(i, &bdfid) != kRsmiSuccess) break;
        // BDFID = domain << 32 | bus << 8 | device << 3 | function.
        char bdf[32];
        std::snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.%x", static_cast<unsigned>((bdfid >> 32) & 0xffff),
                      static_cast<unsigned>((bdfid >> 8) & 0xff), static_cast<unsigned>((bdfid >> 3) & 0x1f),
                      static_cast<unsigned>(bdfid & 0x7));
        uint32_t node = 0;
        int32_t numa_node = numa(i, &node) == kRsmiSuccess ? static_cast<int32_t>(node) : -1;
        gpus.push_back({bdf, numa_node});
      }
    }
    shut_down();
    if (gpus.empty()) why = "ROCm SMI lists no GPU";
  }
  return gpus;
}

class AmdPlugin {
 public:
  static constexpr const char* kName = "amd";
  static constexpr const char* kVersion = "1.0.0";
  static constexpr const char* kDescription =
      "nearest AMD Instinct GPU per NIC (PCI topology, nvidia-smi link classes) and NCCL_IB_HCA for RCCL";
  static constexpr const dranet_config_key_t* kConfigKeys = kAmdKeys;

  explicit AmdPlugin(const Host& host) : sysfs_(host.sysfs_root()), affinity_({}, {}) {
    auto functions = common::ScanPciFunctions(sysfs_);
    const std::string mode = common::VendorLibraryMode(host, "rocm-smi");
    std::vector<common::PciFunction> gpus;
    std::string source = "sysfs";
    // ROCm SMI prints to stderr when it finds no GPU, so "auto" asks it only
    // where sysfs already shows an AMD GPU.
    const bool sysfs_has_amd_gpu = !common::SelectFunctions(functions, IsAmdGpu).empty();
    if (mode == "on" || (mode == "auto" && host.host_root() == "/" && sysfs_has_amd_gpu)) {
      std::string why;
      auto rocm = RocmSmiGpus(host.Config("rocm-smi-library", "librocm_smi64.so.1"), why);
      if (rocm.empty()) host.Info("ROCm SMI not used (" + why + "); GPUs from sysfs");
      for (const auto& r : rocm) {
        auto f = common::ReadPciFunction(sysfs_, r.bdf);
        common::PciFunction gpu = f ? *f : common::PciFunction{};
        gpu.bdf = r.bdf;
        if (r.numa_node >= 0) gpu.numa_node = r.numa_node;
        gpus.push_back(gpu);
        source = "ROCm SMI";
      }
    }
    if (gpus.empty()) gpus = common::SelectFunctions(functions, IsAmdGpu);
    if (gpus.empty()) throw dranet::sdk::NotApplicable("no AMD GPU (ROCm SMI or " + sysfs_ + "/bus/pci/devices)");
    affinity_ = common::MakeAffinity(host, "AMD GPUs (from " + source + ")", std::move(gpus), functions);
  }

  void Annotate(const DeviceView& device, AttrSink& sink) {
    common::AnnotateNearestGpu(affinity_, sysfs_, "amd.dra.net", device, sink);
  }

  void Inject(const InjectRequest& request, EditSink& sink) { common::InjectExactHcas(request, sink); }

 private:
  std::string sysfs_;
  common::GpuAffinity affinity_;
};

}  // namespace

DRANET_CXX_PLUGIN(AmdPlugin)
