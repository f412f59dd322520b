#pragma once
// Shared helpers for the inventory tests.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "base/log.h"
#include "inventory/inventory.h"

namespace dranet::inventory::testing {

inline std::filesystem::path NodeSnapshot(const std::string& name) {
  return std::filesystem::path(DRANET_TEST_NODES_DIR) / name;
}

// A logger whose output the test can inspect.
struct CapturedLog {
  std::ostringstream out;
  Logger log{out};
  std::string text() const { return out.str(); }
};

inline const Device* FindDevice(const std::vector<Device>& devices, const std::string& name) {
  for (const auto& device : devices) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

inline std::vector<std::string> DeviceNames(const std::vector<Device>& devices) {
  std::vector<std::string> names;
  for (const auto& device : devices) names.push_back(device.name);
  return names;
}

template <typename T>
T Attribute(const Device& device, std::string_view key) {
  auto it = device.attributes.find(std::string(key));
  if (it == device.attributes.end()) {
    ADD_FAILURE() << device.name << " has no attribute " << key;
    return T{};
  }
  if (!std::holds_alternative<T>(it->second)) {
    ADD_FAILURE() << device.name << " attribute " << key << " has another type";
    return T{};
  }
  return std::get<T>(it->second);
}

inline bool HasAttribute(const Device& device, std::string_view key) {
  return device.attributes.count(std::string(key)) > 0;
}

}  // namespace dranet::inventory::testing
