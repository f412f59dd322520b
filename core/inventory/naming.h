#pragma once
// core/inventory/naming.h — device names and attribute-value limits.
//
// Device names follow DRANET so existing claim templates keep working:
//   PCI functions  "0000:8a:00.0" -> "pci-0000-8a-00-0"
//   netdevs        the interface name when it is a DNS-1123 label, else
//                  "net-" + lowercase unpadded RFC 4648 base32 of the name
//                  ("eth0.100" -> "net-mv2gqmbogeyda").
// String attribute values are capped to the API's 64-byte limit here, in one
// place, so no attribute can get a ResourceSlice rejected.
#include <cstddef>
#include <string>

#include "base/k8s_names.h"
#include <string_view>
#include <vector>

namespace dranet::inventory {

// resource.k8s.io/v1 DeviceAttribute string/version values: at most 64 bytes.
inline constexpr std::size_t kMaxAttributeValueBytes = 64;
// resource.k8s.io/v1 Device.name: a DNS-1123 label, at most 63 bytes.
inline constexpr std::size_t kMaxDeviceNameBytes = 63;

// DNS-1123 label rule, shared with the API client (base/k8s_names.h).
using dranet::IsDnsLabel;

// Lowercase RFC 4648 base32 without padding ("Eth0" -> "iv2gqma").
std::string EncodeBase32Lower(std::string_view bytes);

// "0000:8a:00.0" -> "pci-0000-8a-00-0".
std::string DeviceNameForPciAddress(std::string_view pci_address);

// "gpu0rdma0" -> "gpu0rdma0"; "mlx5_6" -> "net-nvwhqnk7gy".
std::string DeviceNameForInterface(std::string_view if_name);

// `value` cut to at most `max_bytes` without splitting a UTF-8 sequence.
// `truncated_out` (optional) is set to whether anything was cut.
// Bytes that are not UTF-8 are written "\xNN" first (base/utf8.h).
std::string CapAttributeValue(std::string_view value, bool* truncated_out = nullptr,
                              std::size_t max_bytes = kMaxAttributeValueBytes);

// Joins `items` with ',' keeping only whole items that fit in `max_bytes`
// (the ipv4/ipv6 attribute rule). Items are joined in the given order.
std::string JoinWholeItemsCapped(const std::vector<std::string>& items,
                                 std::size_t max_bytes = kMaxAttributeValueBytes);

// True for an extended PCI address "dddd:bb:dd.f" in lowercase or uppercase hex.
bool IsPciAddress(std::string_view text);

// True for a PCI root bus name as sysfs spells it: "pci0000:00".
bool IsPciRootBusName(std::string_view text);

}  // namespace dranet::inventory
