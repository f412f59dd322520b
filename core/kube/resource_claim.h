#pragma once
// core/kube/resource_claim.h — reading ResourceClaims for NodePrepareResources.
//
// ResourceClaim holds the fields prepare needs (k8s.io/api resource/v1): identity, the
// allocation results, the opaque configs (class and claim) and the pods it is reserved for.
// ResourceClaimReader returns the claim the kubelet named, checked against the UID the kubelet
// gave: from its cache when a watch keeps one, otherwise (or on a miss or a stale UID) with a
// GET. A claim deleted and re-created under the same name has a new UID; preparing the old one
// must fail with an error that says so.
//
// The watch is optional because claims cannot be field-selected by node: a cluster-wide watch
// on every node costs the API server one stream per node and memory for every claim. Without
// it each prepare costs one GET (the kubelet calls prepare once per claim and pod).
//
// Claims are read in the resource.k8s.io version `resource_api` says (v1 without one); the
// fields read here have the same JSON in v1, v1beta2 and v1beta1. A claim not found makes the
// reader ask which version is served, and read it there if that changed (an upgrade that
// switched the version off); as claims that are gone are routine, that asking is limited to
// once per ResourceApi's min_object_rediscovery_interval unless the 404 says the path itself
// is not served (ResourceApi::RediscoverAfterObjectNotFound). A 404 of the watch's list makes
// the next list ask.
//
// Thread-safety: Get() may be called concurrently (prepare calls run in parallel).
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>

#include "base/log.h"
#include "kube/api_client.h"
#include "kube/resource_api.h"

namespace dranet::kube {

// status.allocation.devices.results[]
struct DeviceAllocationResult {
  std::string request;  // "<request>" or "<request>/<subrequest>"
  std::string driver;
  std::string pool;
  std::string device;
  std::string share_id;  // empty unless the device allows multiple allocations
  bool admin_access = false;
  friend bool operator==(const DeviceAllocationResult&, const DeviceAllocationResult&) = default;
};

// status.allocation.devices.config[] entries with an opaque config.
struct OpaqueDeviceConfig {
  std::string source;                 // "FromClass" or "FromClaim"
  std::vector<std::string> requests;  // empty: applies to every request
  std::string driver;
  std::string parameters_json;        // opaque.parameters, re-serialised
  friend bool operator==(const OpaqueDeviceConfig&, const OpaqueDeviceConfig&) = default;
};

// status.reservedFor[]
struct ClaimConsumer {
  std::string api_group;
  std::string resource;  // "pods"
  std::string name;
  std::string uid;
  friend bool operator==(const ClaimConsumer&, const ClaimConsumer&) = default;
};

struct ResourceClaim {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  bool allocated = false;
  std::vector<DeviceAllocationResult> results;
  std::vector<OpaqueDeviceConfig> configs;
  std::vector<ClaimConsumer> reserved_for;
  // The results for `driver` (and `pool` when not empty): what this node must prepare.
  std::vector<DeviceAllocationResult> ResultsFor(const std::string& driver,
                                                 const std::string& pool = {}) const;
};

// Reads a ResourceClaim API object. Throws std::invalid_argument without metadata.name.
ResourceClaim ParseResourceClaim(const rapidjson::Value& object);

// A claim that cannot be prepared: not found, or not the one the kubelet meant.
class ClaimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ResourceClaimReaderOptions {
  bool watch = false;           // keep a cache with a cluster-wide (or one-namespace) watch
  std::string namespace_name;   // watch only this namespace; empty: all
  int watch_timeout_seconds = 300;
  // The resource.k8s.io version to speak; null: v1. Must outlive the reader.
  ResourceApi* resource_api = nullptr;
};

class ResourceClaimReader {
 public:
  // `client` and `log` must outlive the reader. Starts the watch thread when asked.
  ResourceClaimReader(ApiClient& client, Logger& log, ResourceClaimReaderOptions options = {});
  ~ResourceClaimReader();
  ResourceClaimReader(const ResourceClaimReader&) = delete;
  ResourceClaimReader& operator=(const ResourceClaimReader&) = delete;

  // The claim namespace/name whose UID is `uid`. Throws ClaimError when it does not exist or
  // has another UID, ApiError when the API server cannot be asked.
  ResourceClaim Get(const std::string& namespace_name, const std::string& name,
                    const std::string& uid, std::stop_token stop = {});

  uint64_t cache_hits() const;
  uint64_t api_reads() const;
  std::size_t cached() const;
  // True once the watch has listed (and the cache is complete); always false without watch.
  bool synced() const;

 private:
  void WatchLoop(std::stop_token stop);
  std::string CollectionPath(ResourceApiVersion version) const;

  ApiClient& client_;
  Logger& log_;
  ResourceClaimReaderOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, ResourceClaim> cache_;  // "namespace/name"
  bool synced_ = false;
  uint64_t cache_hits_ = 0;
  uint64_t api_reads_ = 0;
  std::stop_source stop_;
  std::thread watch_thread_;
};

}  // namespace dranet::kube
