#pragma once
// core/plugins/device_abi.h — an inventory::Device rendered as the C
// structs of the ABI. The object owns every string it points to, so it can
// outlive the caller's device list (a call that missed its deadline may
// still read it). Not movable: its pointers point into itself.
#include <deque>
#include <string>
#include <vector>

#include <dranet/plugin.h>

#include "inventory/device.h"

namespace dranet::plugins {

class DeviceAbi {
 public:
  explicit DeviceAbi(const inventory::Device& device);
  DeviceAbi(const DeviceAbi&) = delete;
  DeviceAbi& operator=(const DeviceAbi&) = delete;
  const dranet_device_t* get() const { return &device_; }

 private:
  const char* Keep(const std::string& s);
  std::deque<std::string> strings_;  // deque: growth never moves elements
  std::vector<dranet_attr_t> attrs_;
  dranet_device_t device_{};
};

// The inventory form of a device reported by a discovery plugin; attributes
// pass the same rules as annotate's. Throws std::invalid_argument naming
// the problem when the device itself is unusable.
inventory::Device DeviceFromAbi(const dranet_device_t& device, const std::string& plugin_name,
                                std::vector<std::string>& rejected_attributes);

}  // namespace dranet::plugins
