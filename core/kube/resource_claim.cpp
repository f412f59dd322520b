// core/kube/resource_claim.cpp — ResourceClaim parsing and the cached reader.
#include "kube/resource_claim.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "kube/json_fields.h"
#include "kube/list_watch.h"

namespace dranet::kube {
namespace {

std::string Serialise(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

template <typename Each>
void ForEachIn(const rapidjson::Value* array, Each each) {
  if (array == nullptr || !array->IsArray()) return;
  for (const auto& item : array->GetArray()) each(item);
}

std::string Key(const std::string& namespace_name, const std::string& name) {
  return namespace_name + "/" + name;
}

}  // namespace

std::vector<DeviceAllocationResult> ResourceClaim::ResultsFor(const std::string& driver,
                                                              const std::string& pool) const {
  std::vector<DeviceAllocationResult> mine;
  for (const auto& result : results)
    if (result.driver == driver && (pool.empty() || result.pool == pool)) mine.push_back(result);
  return mine;
}

ResourceClaim ParseResourceClaim(const rapidjson::Value& object) {
  ResourceClaim claim;
  claim.name = MetadataField(object, "name");
  if (claim.name.empty()) throw std::invalid_argument("ResourceClaim without metadata.name");
  claim.namespace_name = MetadataField(object, "namespace");
  claim.uid = MetadataField(object, "uid");
  claim.resource_version = MetadataField(object, "resourceVersion");
  if (const auto* metadata = Member(object, "metadata")) claim.generation = IntField(*metadata, "generation");

  const auto* status = Member(object, "status");
  const auto* allocation = status ? Member(*status, "allocation") : nullptr;
  const auto* devices = allocation ? Member(*allocation, "devices") : nullptr;
  claim.allocated = allocation != nullptr && allocation->IsObject();
  if (devices != nullptr) {
    ForEachIn(Member(*devices, "results"), [&claim](const rapidjson::Value& result) {
      claim.results.push_back({StringField(result, "request"), StringField(result, "driver"),
                               StringField(result, "pool"), StringField(result, "device"),
                               StringField(result, "shareID"), BoolField(result, "adminAccess")});
    });
    ForEachIn(Member(*devices, "config"), [&claim](const rapidjson::Value& config) {
      const auto* opaque = Member(config, "opaque");
      if (opaque == nullptr) return;
      OpaqueDeviceConfig parsed;
      parsed.source = StringField(config, "source");
      ForEachIn(Member(config, "requests"), [&parsed](const rapidjson::Value& request) {
        if (request.IsString()) parsed.requests.emplace_back(request.GetString());
      });
      parsed.driver = StringField(*opaque, "driver");
      if (const auto* parameters = Member(*opaque, "parameters")) parsed.parameters_json = Serialise(*parameters);
      claim.configs.push_back(std::move(parsed));
    });
  }
  if (status != nullptr) {
    ForEachIn(Member(*status, "reservedFor"), [&claim](const rapidjson::Value& consumer) {
      claim.reserved_for.push_back({StringField(consumer, "apiGroup"), StringField(consumer, "resource"),
                                    StringField(consumer, "name"), StringField(consumer, "uid")});
    });
  }
  return claim;
}

ResourceClaimReader::ResourceClaimReader(ApiClient& client, Logger& log,
                                         ResourceClaimReaderOptions options)
    : client_(client), log_(log), options_(std::move(options)) {
  if (options_.watch)
    watch_thread_ = NamedThread("claim-watch", [this] { WatchLoop(stop_.get_token()); });
}

ResourceClaimReader::~ResourceClaimReader() {
  stop_.request_stop();
  if (watch_thread_.joinable()) watch_thread_.join();
}

std::string ResourceClaimReader::CollectionPath(ResourceApiVersion version) const {
  const std::string prefix = GroupVersionPath(version);
  if (options_.namespace_name.empty()) return prefix + "/resourceclaims";
  return NamespacedPath(prefix, options_.namespace_name, "resourceclaims");
}

ResourceClaim ResourceClaimReader::Get(const std::string& namespace_name, const std::string& name,
                                       const std::string& uid, std::stop_token stop) {
  const std::string key = Key(namespace_name, name);
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    // A cached claim is only trusted when it is the one asked for; anything else (missing,
    // other UID, not yet allocated) could be the cache lagging behind, so ask the API server.
    if (it != cache_.end() && it->second.uid == uid && it->second.allocated) {
      ++cache_hits_;
      return it->second;
    }
    ++api_reads_;
  }
  rapidjson::Document object;
  ResourceApiVersion version = ResourceApi::Of(options_.resource_api, stop);
  for (bool asked_again = false;; asked_again = true) {
    try {
      object = client_.Get(NamespacedPath(GroupVersionPath(version), namespace_name, "resourceclaims", name), stop,
                           kMaxObjectBytes);
      break;
    } catch (const ApiError& error) {
      if (!error.IsNotFound()) throw;
      // Not found: the claim is gone, or the version is no longer served (a control-plane
      // upgrade). Once, ask which version is served (at most once per interval while the
      // answer looks like a missing claim); if it changed, read the claim there.
      if (!asked_again && options_.resource_api != nullptr && !options_.resource_api->pinned()) {
        options_.resource_api->RediscoverAfterObjectNotFound(version, error);
        const ResourceApiVersion now = options_.resource_api->Version(stop);
        if (now != version) {
          version = now;
          continue;
        }
      }
      throw ClaimError("ResourceClaim " + key + " (uid " + uid +
                       ") not found: it was deleted before it could be prepared");
    }
  }
  ResourceClaim claim = ParseResourceClaim(object);
  if (claim.uid != uid)
    throw ClaimError("ResourceClaim " + key + " has uid " + claim.uid + ", kubelet asked for uid " +
                     uid + ": the claim was deleted and re-created; the pod must be re-created");
  if (options_.watch) {
    std::lock_guard lock(mu_);
    auto& cached = cache_[key];
    // Never replace a newer cached version with an older read.
    if (cached.uid != claim.uid || cached.resource_version != claim.resource_version) cached = claim;
  }
  return claim;
}

uint64_t ResourceClaimReader::cache_hits() const {
  std::lock_guard lock(mu_);
  return cache_hits_;
}

uint64_t ResourceClaimReader::api_reads() const {
  std::lock_guard lock(mu_);
  return api_reads_;
}

std::size_t ResourceClaimReader::cached() const {
  std::lock_guard lock(mu_);
  return cache_.size();
}

bool ResourceClaimReader::synced() const {
  std::lock_guard lock(mu_);
  return synced_;
}

void ResourceClaimReader::WatchLoop(std::stop_token stop) {
  ListWatchOptions options;
  options.list.timeout_seconds = options_.watch_timeout_seconds;
  options.list.max_line_bytes = kMaxObjectBytes;  // one claim per event line
  ListWatchHandlers handlers;
  handlers.on_list = [this](const rapidjson::Document& list, bool) {
    std::map<std::string, ResourceClaim> fresh;
    if (const auto* items = Member(list, "items"); items && items->IsArray()) {
      for (const auto& item : items->GetArray()) {
        ResourceClaim claim = ParseResourceClaim(item);
        fresh.emplace(Key(claim.namespace_name, claim.name), std::move(claim));
      }
    }
    std::lock_guard lock(mu_);
    cache_ = std::move(fresh);
    synced_ = true;
  };
  handlers.on_event = [this](WatchEvent& event) {
    ResourceClaim claim = ParseResourceClaim(event.object);
    std::lock_guard lock(mu_);
    std::string key = Key(claim.namespace_name, claim.name);
    if (event.type == "DELETED") cache_.erase(key);
    else cache_[key] = std::move(claim);
  };
  // The version of the last (re)list: a 404 means it is no longer served.
  ResourceApiVersion watched = ResourceApiVersion::kV1;
  handlers.on_error = [this, &watched](const std::exception& error) {
    const auto* api_error = dynamic_cast<const ApiError*>(&error);
    if (api_error != nullptr && api_error->IsNotFound() && options_.resource_api != nullptr)
      options_.resource_api->Rediscover(watched);
  };
  RunListWatch(
      client_,
      [this, stop, &watched] {
        watched = ResourceApi::Of(options_.resource_api, stop);
        return CollectionPath(watched);
      },
      options, handlers, log_, stop);
}

}  // namespace dranet::kube
