#pragma once
// core/kube/claim_status.h — writing status.devices of a ResourceClaim.
//
// After prepare (or when it fails), the driver reports per allocated device a list of
// conditions (Ready, NetworkReady, RDMALinkReady…) and networkData (interface name, IPs, MAC).
// It is written with server-side apply on the /status subresource, field manager = driver name,
// force = true: status.devices is a list-map keyed by driver+pool+device+shareID, so apply
// merges our entries and leaves other drivers' entries alone (a merge patch would replace the
// whole list). See k8s.io/api resource/v1 AllocatedDeviceStatus; v1beta2 and v1beta1 have the
// same JSON, so only the apiVersion and the path follow the version spoken.
//
// Thread-safety: ClaimStatusWriter::Apply may be called concurrently.
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/log.h"
#include "kube/api_client.h"
#include "kube/resource_api.h"

namespace dranet::kube {

// metav1.Condition. lastTransitionTime: RFC 3339; empty means "now" when rendered.
struct DeviceCondition {
  std::string type;     // "Ready"
  std::string status;   // "True", "False" or "Unknown"
  std::string reason;   // CamelCase, e.g. "NetworkDeviceReady"
  std::string message;  // human-readable; may be empty
  std::string last_transition_time;
  int64_t observed_generation = 0;  // 0: not written
};

// resource.k8s.io/v1 NetworkDeviceData.
struct NetworkDeviceData {
  std::string interface_name;     // ≤256
  std::vector<std::string> ips;   // CIDR form "192.0.2.5/24", ≤16
  std::string hardware_address;   // ≤128
};

struct AllocatedDeviceStatus {
  std::string driver;
  std::string pool;
  std::string device;
  std::string share_id;  // empty unless the allocation has one
  std::vector<DeviceCondition> conditions;  // ≤8
  std::optional<NetworkDeviceData> network_data;
};

// The apply body: {"apiVersion":"resource.k8s.io/<version>","kind":"ResourceClaim",
// "metadata":{"name","namespace"},"status":{"devices":[…]}} (apply refuses a body whose
// apiVersion is not the URL's). `now` fills empty lastTransitionTime fields. Entries beyond
// the API's limits are cut (with a log line).
std::string ClaimStatusApplyJson(const std::string& namespace_name, const std::string& name,
                                 const std::vector<AllocatedDeviceStatus>& devices,
                                 const std::string& now, Logger& log,
                                 ResourceApiVersion version = ResourceApiVersion::kV1);

// The current time as RFC 3339 UTC with seconds precision ("2025-01-01T00:00:00Z").
std::string NowRfc3339();

class ClaimStatusWriter {
 public:
  // `field_manager` is the driver name ("dra.net"). `client`, `log` and `resource_api` (the
  // version to speak; null: v1) must outlive the writer.
  ClaimStatusWriter(ApiClient& client, std::string field_manager, Logger& log,
                    ResourceApi* resource_api = nullptr);
  // Applies `devices` to claim namespace/name. Throws ApiError naming the claim on failure.
  void Apply(const std::string& namespace_name, const std::string& name,
             const std::vector<AllocatedDeviceStatus>& devices, std::stop_token stop = {});

 private:
  ApiClient& client_;
  std::string field_manager_;
  Logger& log_;
  ResourceApi* resource_api_;
};

}  // namespace dranet::kube
