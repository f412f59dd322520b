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
// served could be why tells it, and the next use asks again (a control-plane upgrade may have
// switched the version off):
//   - a collection (list or watch) answering 404 calls Rediscover(): a collection is never
//     missing while its version is served, so the next use always asks;
//   - an object (a claim read by name) answering 404 calls RediscoverAfterObjectNotFound():
//     usually the object is simply gone, so the next use asks only when the 404 is not the
//     API server's NotFound Status (an unserved version's path is not routed at all and gets
//     a plain "404 page not found") or when the last discovery is older than
//     `min_object_rediscovery_interval`. Unknown claims cost at most one discovery per
//     interval, not one each.
// A pinned ResourceApi never asks.
//
// Thread-safety: every method may be called from any thread; concurrent first uses, and
// concurrent uses after a 404, share one discovery request.
#include <chrono>
#include <functional>
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

// How long a discovery answer is trusted against objects that answer 404 (named claims). A
// version switch is a control-plane upgrade or downgrade (a few a year); a claim that is
// gone is routine (deleted before its pod started, or a kubelet retrying an old pod), and
// asking again for each costs the API server one discovery GET per 404 on every node. 30 s
// bounds that to two a minute per node, and a switch within 30 s of the last discovery
// delays a claim read by at most 30 s (the kubelet retries prepare); collection 404s (slice
// publishing, the claim watch) and unrouted 404s are followed at once either way.
inline constexpr std::chrono::seconds kMinObjectRediscoveryInterval{30};

struct ResourceApiOptions {
  // See kMinObjectRediscoveryInterval.
  std::chrono::milliseconds min_object_rediscovery_interval = kMinObjectRediscoveryInterval;
  // The clock discoveries are timed with; empty: std::chrono::steady_clock::now. Tests
  // replace it to move time without sleeping.
  std::function<std::chrono::steady_clock::time_point()> now;
};

class ResourceApi {
 public:
  // Discovers the version through `client` on first use. `client` and `log` must outlive it.
  ResourceApi(ApiClient& client, Logger& log, ResourceApiOptions options = {});
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
  // An object read in `failed` answered `not_found` (a 404): Rediscover() when the answer is
  // not a NotFound Status (reason empty: the path itself is not served) or when the last
  // discovery is at least `min_object_rediscovery_interval` old; otherwise the object is
  // taken to be gone and the version kept.
  void RediscoverAfterObjectNotFound(ResourceApiVersion failed, const ApiError& not_found);
  bool pinned() const { return client_ == nullptr; }

  // Version() of `api`, or v1 when there is none (callers that are only ever used against
  // clusters of 1.34 and later: tests, tools).
  static ResourceApiVersion Of(ResourceApi* api, std::stop_token stop = {});

 private:
  std::chrono::steady_clock::time_point Now() const;
  void ForgetLocked(ResourceApiVersion failed);

  ApiClient* client_ = nullptr;
  Logger* log_ = nullptr;
  ResourceApiOptions options_;
  std::mutex discovery_mu_;  // held across the discovery request: one at a time
  mutable std::mutex mu_;     // the fields below
  std::optional<ResourceApiVersion> version_;
  std::optional<ResourceApiVersion> previous_;  // what was spoken before a Rediscover()
  std::chrono::steady_clock::time_point discovered_at_;  // of the last successful discovery
};

}  // namespace dranet::kube
