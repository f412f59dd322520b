// core/kube/resource_api.cpp — see resource_api.h.
#include "kube/resource_api.h"

#include <utility>

#include "kube/json_fields.h"

namespace dranet::kube {
namespace {

constexpr std::string_view kGroup = "resource.k8s.io";

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

std::string_view VersionName(ResourceApiVersion version) {
  switch (version) {
    case ResourceApiVersion::kV1: return "v1";
    case ResourceApiVersion::kV1beta2: return "v1beta2";
    case ResourceApiVersion::kV1beta1: return "v1beta1";
  }
  return "v1";
}

std::string GroupVersion(ResourceApiVersion version) {
  return std::string(kGroup) + "/" + std::string(VersionName(version));
}

std::string GroupVersionPath(ResourceApiVersion version) { return "/apis/" + GroupVersion(version); }

std::optional<ResourceApiVersion> ParseResourceApiVersion(std::string_view text) {
  if (text.starts_with(kGroup) && text.size() > kGroup.size() && text[kGroup.size()] == '/')
    text.remove_prefix(kGroup.size() + 1);
  for (ResourceApiVersion version : kSpokenResourceApiVersions)
    if (VersionName(version) == text) return version;
  return std::nullopt;
}

bool WrapsDevicesInBasic(ResourceApiVersion version) { return version == ResourceApiVersion::kV1beta1; }

bool HasListAttributes(ResourceApiVersion version) { return version == ResourceApiVersion::kV1; }

std::vector<std::string> ServedVersions(const rapidjson::Value& api_group) {
  std::vector<std::string> served;
  const auto* versions = Member(api_group, "versions");
  if (versions == nullptr || !versions->IsArray()) return served;
  for (const auto& entry : versions->GetArray()) {
    std::string name = StringField(entry, "version");
    if (!name.empty()) served.push_back(std::move(name));
  }
  return served;
}

std::optional<ResourceApiVersion> NewestSpokenVersion(const rapidjson::Value& api_group) {
  const std::vector<std::string> served = ServedVersions(api_group);
  for (ResourceApiVersion version : kSpokenResourceApiVersions)
    for (const auto& name : served)
      if (name == VersionName(version)) return version;
  return std::nullopt;
}

ResourceApi::ResourceApi(ApiClient& client, Logger& log, ResourceApiOptions options)
    : client_(&client), log_(&log), options_(std::move(options)) {}

ResourceApi::ResourceApi(ResourceApiVersion version) : version_(version) {}

ResourceApiVersion ResourceApi::Version(std::stop_token stop) {
  if (auto known = Known()) return *known;
  std::lock_guard discovery(discovery_mu_);
  if (auto known = Known()) return *known;  // another caller discovered it meanwhile
  rapidjson::Document group;
  try {
    group = client_->Get("/apis/" + std::string(kGroup), stop, kMaxObjectBytes);
  } catch (const ApiError& error) {
    if (!error.IsNotFound()) throw;
    throw ApiError(404, "NotFound",
                   "the API server serves no " + std::string(kGroup) +
                       " API: Dynamic Resource Allocation is not enabled on this cluster (this driver needs "
                       "Kubernetes 1.32 or later with resource.k8s.io v1, v1beta2 or v1beta1 served)");
  }
  const auto version = NewestSpokenVersion(group);
  if (!version) {
    const auto served = ServedVersions(group);
    throw ApiError(404, "NotFound",
                   "the API server serves " + std::string(kGroup) + " " +
                       (served.empty() ? std::string("without versions") : Join(served)) +
                       ", none of which this driver speaks (v1, v1beta2, v1beta1: Kubernetes 1.32 or later)");
  }
  std::optional<ResourceApiVersion> before;
  {
    std::lock_guard lock(mu_);
    version_ = version;
    before = previous_;
    discovered_at_ = Now();
  }
  const std::string served = Join(ServedVersions(group));
  if (!before) {
    log_->Info("speaking " + GroupVersion(*version), {{"served", served}});
  } else if (*before != *version) {
    log_->Warning("the API server's resource.k8s.io versions changed; switching",
                  {{"from", GroupVersion(*before)}, {"to", GroupVersion(*version)}, {"served", served}});
  } else {
    log_->Verbose(1, "still speaking " + GroupVersion(*version), {{"served", served}});
  }
  return *version;
}

std::optional<ResourceApiVersion> ResourceApi::Known() const {
  std::lock_guard lock(mu_);
  return version_;
}

void ResourceApi::Rediscover(ResourceApiVersion failed) {
  if (pinned()) return;
  std::lock_guard lock(mu_);
  ForgetLocked(failed);
}

void ResourceApi::RediscoverAfterObjectNotFound(ResourceApiVersion failed, const ApiError& not_found) {
  if (pinned()) return;
  std::lock_guard lock(mu_);
  // The API server answers a missing object with a NotFound Status; a path it does not route
  // (a version it does not serve) gets its mux's plain "404 page not found", no reason.
  const bool object_missing = not_found.reason() == "NotFound";
  if (object_missing && Now() - discovered_at_ < options_.min_object_rediscovery_interval) return;
  ForgetLocked(failed);
}

void ResourceApi::ForgetLocked(ResourceApiVersion failed) {
  // Another caller already forgot it (its discovery is shared through discovery_mu_), or has
  // moved on to another version.
  if (version_ != failed) return;
  log_->Verbose(1, "a " + GroupVersion(failed) + " collection or object was not found; asking which versions are served");
  previous_ = version_;
  version_.reset();
}

std::chrono::steady_clock::time_point ResourceApi::Now() const {
  return options_.now ? options_.now() : std::chrono::steady_clock::now();
}

ResourceApiVersion ResourceApi::Of(ResourceApi* api, std::stop_token stop) {
  return api == nullptr ? ResourceApiVersion::kV1 : api->Version(std::move(stop));
}

}  // namespace dranet::kube
