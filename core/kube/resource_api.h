#pragma once
// core/kube/resource_api.h — which resource.k8s.io version the API server is spoken to in.
//
// Kubernetes served DRA as resource.k8s.io/v1beta1 (1.32), v1beta2 (1.33) and v1 (GA, 1.34);
// a control plane may serve any subset of them (a 1.33 cluster often has v1beta1 alone). The
// driver speaks the newest one the API server serves, as the Go client falls back
// v1 → v1beta2 → v1beta1. The versions differ, for what the driver reads and writes, in:
//   - ResourceSlice devices: v1beta1 wraps a device's fields as `devices[].basic{attributes…}`;
//     v1beta2 and v1 have them flat (`devices[].attributes`);
//   - list attribute values (`ints`…, alpha in 1.36 behind DRAListTypeAttributes): a control
//     plane that serves v1beta2 or v1beta1 but not v1 predates 1.34 and has none, so they are
//     only written in v1;
//   - the claim's spec.devices.requests shape (v1beta1 flat, v1beta2/v1 under `exactly`), which
//     the node driver never reads.
// ResourceClaim status (allocation results, configs, reservedFor, status.devices with
// conditions and networkData) has the same JSON in all three.
//
// ResourceApi finds the version on first use (GET /apis/resource.k8s.io, the APIGroup
// discovery document) and keeps it. A component that gets a 404 where the version not being
// served could be why calls Rediscover(), and the next use asks again (a control-plane
// upgrade may have switched the version off). A pinned ResourceApi never asks.
//
// Thread-safety: every method may be called from any thread; concurrent first uses share one
// discovery request.
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "base/log.h"
#include "kube/api_client.h"

namespace dranet::kube {

enum class ResourceApiVersion { kV1, kV1beta2, kV1beta1 };

// Newest first: the order the driver prefers them in.
inline constexpr ResourceApiVersion kSpokenResourceApiVersions[] = {
    ResourceApiVersion::kV1, ResourceApiVersion::kV1beta2, ResourceApiVersion::kV1beta1};

std::string_view VersionName(ResourceApiVersion version);  // "v1beta1"
std::string GroupVersion(ResourceApiVersion version);      // "resource.k8s.io/v1beta1"
std::string GroupVersionPath(ResourceApiVersion version);  // "/apis/resource.k8s.io/v1beta1"
// "v1beta1" or "resource.k8s.io/v1beta1"; nullopt for anything else.
std::optional<ResourceApiVersion> ParseResourceApiVersion(std::string_view text);
// v1beta1: a slice's device keeps its fields under `basic`.
bool WrapsDevicesInBasic(ResourceApiVersion version);
// Whether list attribute values (ints, bools, strings, versions) are written in `version`:
// only v1 (a cluster that serves an older version alone is older than list values).
bool HasListAttributes(ResourceApiVersion version);

// The versions ("v1beta1", "v1alpha3"…) an APIGroup discovery document lists, in its order.
std::vector<std::string> ServedVersions(const rapidjson::Value& api_group);
// The newest version of ours in an APIGroup discovery document; nullopt when it has none.
std::optional<ResourceApiVersion> NewestSpokenVersion(const rapidjson::Value& api_group);

class ResourceApi {
 public:
  // Discovers the version through `client` on first use. `client` and `log` must outlive it.
  ResourceApi(ApiClient& client, Logger& log);
  // Always `version`; never asks the API server.
  explicit ResourceApi(ResourceApiVersion version);
  ResourceApi(const ResourceApi&) = delete;
  ResourceApi& operator=(const ResourceApi&) = delete;

  // The version to speak. Throws ApiError when the API server cannot be asked, and ApiError
  // 404 (reason NotFound) naming what is served when it serves none of ours.
  ResourceApiVersion Version(std::stop_token stop = {});
  // The version in use, without asking; nullopt before the first discovery.
  std::optional<ResourceApiVersion> Known() const;
  // Something of `failed` answered 404 (a collection, or an object that may be gone): ask
  // again on the next Version(). Ignored when pinned, or when another thread has already
  // moved on from `failed`.
  void Rediscover(ResourceApiVersion failed);
  bool pinned() const { return client_ == nullptr; }

  // Version() of `api`, or v1 when there is none (callers that are only ever used against
  // clusters of 1.34 and later: tests, tools).
  static ResourceApiVersion Of(ResourceApi* api, std::stop_token stop = {});

 private:
  ApiClient* client_ = nullptr;
  Logger* log_ = nullptr;
  std::mutex discovery_mu_;  // held across the discovery request: one at a time
  mutable std::mutex mu_;     // the fields below
  std::optional<ResourceApiVersion> version_;
  std::optional<ResourceApiVersion> previous_;  // what was spoken before a Rediscover()
};

}  // namespace dranet::kube
