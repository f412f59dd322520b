// core/simulate/aligned_templates.cpp — one ResourceClaimTemplate per GPU
// with the NICs closest to it, from the affinity attributes both drivers
// publish.
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "simulate/simulate.h"

namespace dranet::simulate {
namespace {

constexpr const char* kPciBusId = "resource.kubernetes.io/pciBusID";
constexpr const char* kPcieRoot = "resource.kubernetes.io/pcieRoot";
constexpr const char* kNumaNode = "resource.kubernetes.io/numaNode";

const inventory::AttributeValue* Find(const inventory::Attributes& attrs, const std::string& key) {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

std::string StringAttr(const inventory::Attributes& attrs, const std::string& key) {
  const auto* v = Find(attrs, key);
  return v && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : "";
}

// An int, or an int list's first item: a NUMA node list starts with the
// device's own node (DRAListTypeAttributes).
std::optional<int64_t> IntAttr(const inventory::Attributes& attrs, const std::string& key) {
  const auto* v = Find(attrs, key);
  if (v && std::holds_alternative<int64_t>(*v)) return std::get<int64_t>(*v);
  if (v && std::holds_alternative<inventory::IntList>(*v) && !std::get<inventory::IntList>(*v).empty())
    return std::get<inventory::IntList>(*v).front();
  return std::nullopt;
}

// "domain/id" -> device.attributes["domain"].id
std::string AttrRef(const std::string& qualified) {
  auto slash = qualified.find('/');
  return "device.attributes[" + cel::StringLiteral(qualified.substr(0, slash)) + "]." + qualified.substr(slash + 1);
}

struct Gpu {
  const SliceDevice* device;
  std::string bus_id;        // for matching nearestGpu
  std::string id_attribute;  // attribute that identifies it in a selector
  std::string id_value;
  std::optional<int64_t> numa;
};

std::optional<Gpu> DescribeGpu(const SliceDevice& d) {
  // Only whole GPUs: skip MIG / partition devices.
  std::string type = StringAttr(d.attributes, d.driver + "/type");
  if (!type.empty() && type != "gpu" && type != "amdgpu") return std::nullopt;
  Gpu g{&d, "", "", "", std::nullopt};
  for (const std::string& key : {std::string(kPciBusId), d.driver + "/pciAddr", d.driver + "/pcieBusID"}) {
    g.bus_id = StringAttr(d.attributes, key);
    if (!g.bus_id.empty()) {
      g.id_attribute = key;
      g.id_value = g.bus_id;
      break;
    }
  }
  if (g.id_attribute.empty()) {
    g.id_value = StringAttr(d.attributes, d.driver + "/uuid");
    if (g.id_value.empty()) return std::nullopt;  // nothing a selector can name it by
    g.id_attribute = d.driver + "/uuid";
  }
  for (const std::string& key : {std::string(kNumaNode), d.driver + "/numaNode", d.driver + "/numa"}) {
    if ((g.numa = IntAttr(d.attributes, key))) break;
  }
  return g;
}

std::optional<int64_t> NicNuma(const inventory::Device& nic) {
  if (auto n = IntAttr(nic.attributes, kNumaNode)) return n;
  return IntAttr(nic.attributes, "dra.net/numaNode");
}

// The NICs for one GPU by the first basis that yields any.
std::vector<const inventory::Device*> NearestNics(const Gpu& gpu, const std::vector<const inventory::Device*>& nics,
                                                  std::string& basis) {
  std::vector<const inventory::Device*> out;
  auto collect = [&](auto&& pred, const char* name) {
    for (const auto* n : nics) {
      if (pred(*n)) out.push_back(n);
    }
    if (!out.empty()) basis = name;
    return !out.empty();
  };
  if (!gpu.bus_id.empty() && collect([&](const inventory::Device& n) {
        return StringAttr(n.attributes, "nvidia.dra.net/nearestGpu") == gpu.bus_id ||
               StringAttr(n.attributes, "amd.dra.net/nearestGpu") == gpu.bus_id;
      }, "nearestGpu")) {
    return out;
  }
  std::string root = StringAttr(gpu.device->attributes, kPcieRoot);
  if (!root.empty() &&
      collect([&](const inventory::Device& n) { return StringAttr(n.attributes, kPcieRoot) == root; }, "pcieRoot")) {
    return out;
  }
  if (gpu.numa && collect([&](const inventory::Device& n) { return NicNuma(n) == gpu.numa; }, "numaNode")) {
    return out;
  }
  basis = "none";
  return out;
}

// How the template names the chosen NICs: the first attribute all carry.
std::string NicSelector(const std::vector<const inventory::Device*>& nics) {
  for (const char* key : {"dra.net/rdmaDevice", "dra.net/ifName", "dra.net/pciAddress"}) {
    std::vector<std::string> values;
    for (const auto* n : nics) {
      std::string v = StringAttr(n->attributes, key);
      if (v.empty()) break;
      values.push_back(cel::StringLiteral(v));
    }
    if (values.size() != nics.size()) continue;
    if (values.size() == 1) return AttrRef(key) + " == " + values[0];
    std::string list;
    for (std::size_t i = 0; i < values.size(); ++i) list += (i ? ", " : "") + values[i];
    return AttrRef(key) + " in [" + list + "]";
  }
  return "";
}

// Attributes the GPU and every chosen NIC carry with values a matchAttribute
// constraint accepts (AttributeValuesMatch).
std::vector<std::string> SharedAttributes(const Gpu& gpu, const std::vector<const inventory::Device*>& nics) {
  std::vector<std::string> out;
  for (const char* key : {kPcieRoot, kNumaNode}) {
    std::vector<const inventory::AttributeValue*> values{Find(gpu.device->attributes, key)};
    for (const auto* n : nics) values.push_back(Find(n->attributes, key));
    if (std::find(values.begin(), values.end(), nullptr) == values.end() && AttributeValuesMatch(values))
      out.push_back(key);
  }
  return out;
}

std::string GpuClass(const std::string& driver) {
  for (const auto& c : WellKnownDeviceClasses()) {
    if (c.name == driver) return c.name;
  }
  return driver;
}

void EmitSelector(YAML::Emitter& out, const std::string& expression) {
  out << YAML::Key << "selectors" << YAML::Value << YAML::BeginSeq;
  out << YAML::BeginMap << YAML::Key << "cel" << YAML::Value << YAML::BeginMap << YAML::Key << "expression"
      << YAML::Value << YAML::DoubleQuoted << expression << YAML::EndMap << YAML::EndMap;
  out << YAML::EndSeq;
}

std::string Render(const AlignedTemplate& t, const Gpu& gpu, const std::string& nic_selector,
                   const std::vector<std::string>& shared, const AlignedTemplateOptions& options) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "resource.k8s.io/" + options.api_version;
  // v1beta1 requests carry deviceClassName, selectors and count themselves; later versions
  // put them under `exactly`.
  const bool exactly = options.api_version != "v1beta1";
  out << YAML::Key << "kind" << YAML::Value << "ResourceClaimTemplate";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.name;
  if (!options.namespace_name.empty()) out << YAML::Key << "namespace" << YAML::Value << options.namespace_name;
  out << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "devices" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "requests" << YAML::Value << YAML::BeginSeq;
  // The GPU, by its bus ID (or UUID).
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "gpu";
  if (exactly) out << YAML::Key << "exactly" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "deviceClassName" << YAML::Value << GpuClass(t.gpu_driver);
  EmitSelector(out, AttrRef(gpu.id_attribute) + " == " + cel::StringLiteral(gpu.id_value));
  if (exactly) out << YAML::EndMap;
  out << YAML::EndMap;
  // Its NICs.
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "nic";
  if (exactly) out << YAML::Key << "exactly" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "deviceClassName" << YAML::Value << options.nic_class;
  if (t.nic_devices.size() > 1) out << YAML::Key << "count" << YAML::Value << t.nic_devices.size();
  EmitSelector(out, nic_selector);
  if (exactly) out << YAML::EndMap;
  out << YAML::EndMap;
  out << YAML::EndSeq;
  if (!shared.empty()) {
    out << YAML::Key << "constraints" << YAML::Value << YAML::BeginSeq;
    for (const auto& key : shared) {
      out << YAML::BeginMap << YAML::Key << "requests" << YAML::Value << YAML::Flow << YAML::BeginSeq << "gpu"
          << "nic" << YAML::EndSeq << YAML::Key << "matchAttribute" << YAML::Value << key << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

std::vector<AlignedTemplate> GenerateAlignedTemplates(const std::vector<inventory::Device>& ours,
                                                      const std::vector<SliceDevice>& gpus,
                                                      const AlignedTemplateOptions& options) {
  // Candidate NICs: physical functions, RDMA-capable ones when there are any.
  std::vector<const inventory::Device*> nics;
  for (const auto& d : ours) {
    if (!d.pci_address.empty() && !d.rdma_device.empty()) nics.push_back(&d);
  }
  if (nics.empty()) {
    for (const auto& d : ours) {
      if (!d.pci_address.empty()) nics.push_back(&d);
    }
  }
  std::sort(nics.begin(), nics.end(), [](const auto* a, const auto* b) { return a->name < b->name; });

  std::vector<const SliceDevice*> sorted;
  for (const auto& g : gpus) {
    if (g.driver != "dra.net") sorted.push_back(&g);
  }
  std::sort(sorted.begin(), sorted.end(), [](const SliceDevice* a, const SliceDevice* b) {
    return std::tie(a->driver, a->name) < std::tie(b->driver, b->name);
  });

  std::vector<AlignedTemplate> out;
  for (const SliceDevice* d : sorted) {
    std::optional<Gpu> gpu = DescribeGpu(*d);
    if (!gpu) continue;
    AlignedTemplate t;
    t.name = d->name + "-aligned";
    t.gpu_driver = d->driver;
    t.gpu_device = d->name;
    std::vector<const inventory::Device*> chosen = NearestNics(*gpu, nics, t.basis);
    if (options.nics_per_gpu > 0 && chosen.size() > static_cast<std::size_t>(options.nics_per_gpu)) {
      chosen.resize(static_cast<std::size_t>(options.nics_per_gpu));
    }
    std::string selector = NicSelector(chosen);
    if (chosen.empty() || selector.empty()) {
      t.basis = "none";
      out.push_back(std::move(t));  // reported, with no YAML: nothing to pair it with
      continue;
    }
    for (const auto* n : chosen) t.nic_devices.push_back(n->name);
    t.yaml = Render(t, *gpu, selector, SharedAttributes(*gpu, chosen), options);
    out.push_back(std::move(t));
  }
  return out;
}

std::string RenderTemplates(const std::vector<AlignedTemplate>& templates) {
  std::string out;
  for (const auto& t : templates) {
    if (t.yaml.empty()) continue;
    if (!out.empty()) out += "---\n";
    out += t.yaml;
  }
  return out;
}

}  // namespace dranet::simulate
