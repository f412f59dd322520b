#include "plugins/device_abi.h"

#include <stdexcept>

#include "base/k8s_names.h"
#include "plugins/attribute_rules.h"

namespace dranet::plugins {

const char* DeviceAbi::Keep(const std::string& s) { return strings_.emplace_back(s).c_str(); }

DeviceAbi::DeviceAbi(const inventory::Device& d) {
  attrs_.reserve(d.attributes.size());
  for (const auto& [name, value] : d.attributes) {
    // The C ABI has no list kind: list attributes (resource.kubernetes.io/numaNode
    // under DRAListTypeAttributes) are not shown; numa_node carries the node.
    if (std::holds_alternative<inventory::IntList>(value)) continue;
    dranet_attr_t a{};
    a.struct_size = sizeof a;
    a.name = Keep(name);
    if (const auto* s = std::get_if<std::string>(&value)) {
      a.type = DRANET_ATTR_STRING;
      a.str_value = Keep(*s);
    } else if (const auto* i = std::get_if<int64_t>(&value)) {
      a.type = DRANET_ATTR_INT;
      a.int_value = *i;
    } else if (const auto* b = std::get_if<bool>(&value)) {
      a.type = DRANET_ATTR_BOOL;
      a.int_value = *b ? 1 : 0;
    } else {
      a.type = DRANET_ATTR_VERSION;
      a.str_value = Keep(std::get<inventory::SemVer>(value).value);
    }
    attrs_.push_back(a);
  }
  device_.struct_size = sizeof device_;
  device_.numa_node = d.numa_node;
  device_.name = Keep(d.name);
  device_.pci_address = Keep(d.pci_address);
  device_.if_name = Keep(d.if_name);
  device_.rdma_device = Keep(d.rdma_device);
  device_.driver = Keep(d.driver);
  device_.pci_vendor = d.pci_vendor_id;
  device_.pci_device = d.pci_device_id;
  device_.attrs = attrs_.empty() ? nullptr : attrs_.data();
  device_.n_attrs = static_cast<uint32_t>(attrs_.size());
}

inventory::Device DeviceFromAbi(const dranet_device_t& in, const std::string& plugin_name,
                                std::vector<std::string>& rejected_attributes) {
  auto str = [](const char* s) { return s ? std::string(s) : std::string(); };
  inventory::Device d;
  d.name = str(in.name);
  if (!IsDnsLabel(d.name))
    throw std::invalid_argument("device name \"" + d.name + "\" is not a DNS label of at most 63 characters");
  d.pci_address = str(in.pci_address);
  d.if_name = str(in.if_name);
  d.rdma_device = str(in.rdma_device);
  d.driver = str(in.driver);
  d.pci_vendor_id = in.pci_vendor;
  d.pci_device_id = in.pci_device;
  d.numa_node = in.numa_node;
  if (in.n_attrs > 0 && in.attrs == nullptr) throw std::invalid_argument("n_attrs > 0 but attrs is NULL");
  for (uint32_t i = 0; i < in.n_attrs && i < 64; ++i) {
    std::string why;
    if (auto a = AcceptAttribute(in.attrs[i], plugin_name, why)) {
      d.attributes.insert(std::move(*a));
    } else {
      rejected_attributes.push_back(why);
    }
  }
  return d;
}

}  // namespace dranet::plugins
