#pragma once
// core/kubelet/profile_provider.h — the profile provider that prepare and
// unprepare consult for a device whose claim config sets `profile`.
//
// A profile names user intent that dranet does not resolve itself (an IP
// address from an external IPAM, an overlay's routes). As in DRANET, prepare
// sends the provider the device's identifiers, the claim UID and the merged
// NetworkConfig (with "profile"), and merges the NetworkConfig it answers on
// top; unprepare asks it to release what it allocated for that claim.
// Providers must be idempotent per (device, claim UID): the kubelet retries
// prepare.
//
// Implementations: webhook_profile_provider.h (--profile-provider=webhook),
// plugin_profile_provider.h (--profile-provider=cloud).
#include <stdexcept>
#include <stop_token>
#include <string>

#include "inventory/device.h"

namespace dranet::kubelet {

// DRANET's DeviceIdentifiers (JSON: "name", "mac_address", "pci_address").
struct ProfileDevice {
  std::string name;         // the DRA device name, e.g. "pci-0000-8a-00-0"
  std::string mac_address;  // dra.net/mac; empty when the device has none
  std::string pci_address;  // dra.net/pciAddress; empty when not a PCI device
  // The whole device as discovered, at GetProfileConfig; nullptr at
  // ReleaseProfileConfig (the netdev may sit in a pod by then).
  const inventory::Device* device = nullptr;
};

// A provider that refused, failed or could not be reached. what() names the
// provider, the call, and the HTTP status and body or the transport failure.
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thread-safety: implementations allow concurrent calls from several threads.
class ProfileProvider {
 public:
  virtual ~ProfileProvider() = default;

  // The NetworkConfig JSON object that `config_json` (the merged config, with
  // "profile") resolves to for this device and claim, to be merged on top of
  // it. The answer is one JSON object but not yet validated as a
  // NetworkConfig: the caller parses it. Blocks for at most the provider's
  // call timeout, and returns soon after `stop` is requested (the caller's
  // deadline passed), throwing ProfileError that says so. Throws ProfileError.
  virtual std::string GetProfileConfig(const ProfileDevice& device, const std::string& claim_uid,
                                       const std::string& config_json, std::stop_token stop = {}) = 0;

  // Frees what GetProfileConfig allocated for this device and claim; called
  // with the same arguments as that call. Providers answer success for what
  // is already released, so a retried unprepare is harmless. `stop` as for
  // GetProfileConfig. Throws ProfileError.
  virtual void ReleaseProfileConfig(const ProfileDevice& device, const std::string& claim_uid,
                                    const std::string& config_json, std::stop_token stop = {}) = 0;

  // The provider for logs and errors, e.g. "webhook http://127.0.0.1:8080".
  virtual std::string Describe() const = 0;
};

}  // namespace dranet::kubelet
