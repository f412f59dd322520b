// core/kube/slice_publisher.cpp — the reconcile loop behind SlicePublisher.
#include "kube/slice_publisher.h"

#include <algorithm>
#include <set>

#include "kube/json_fields.h"
#include "kube/list_watch.h"

namespace dranet::kube {
namespace {

// Leaves out of a device (inventory::Device or SliceDevice) the fields the API server drops.
template <class Device>
void StripFields(Device& device, bool taints, bool sharing) {
  if (taints) device.taints.clear();
  if (sharing) {
    device.allow_multiple_allocations = false;
    device.capacity.clear();
  }
}

// All devices of the slices in `slices`, sorted by name: the pool's content, whatever the
// split into slices.
std::vector<SliceDevice> PoolContent(const std::vector<const ResourceSlice*>& slices) {
  std::vector<SliceDevice> devices;
  for (const auto* slice : slices) devices.insert(devices.end(), slice->devices.begin(), slice->devices.end());
  std::sort(devices.begin(), devices.end(),
            [](const SliceDevice& a, const SliceDevice& b) { return a.name < b.name; });
  return devices;
}

std::vector<SliceDevice> PoolContent(const std::vector<ResourceSlice>& slices) {
  std::vector<const ResourceSlice*> pointers;
  for (const auto& slice : slices) pointers.push_back(&slice);
  return PoolContent(pointers);
}


std::string DeletePreconditions(const ResourceSlice& slice) {
  return R"({"apiVersion":"v1","kind":"DeleteOptions","preconditions":{"uid":")" + slice.uid +
         R"(","resourceVersion":")" + slice.resource_version + R"("}})";
}

}  // namespace

SlicePublisher::SlicePublisher(ApiClient& client, SlicePublisherOptions options, Logger& log)
    : client_(client), options_(std::move(options)), log_(log), random_(std::random_device{}()) {
  if (options_.pool_name.empty()) options_.pool_name = options_.node_name;
  publish_thread_ = NamedThread("slice-publish", [this] { PublishLoop(stop_.get_token()); });
  if (options_.watch)
    watch_thread_ = NamedThread("slice-watch", [this] { WatchLoop(stop_.get_token()); });
}

SlicePublisher::~SlicePublisher() {
  stop_.request_stop();
  {
    std::lock_guard lock(mu_);  // no wake-up lost between a predicate check and a wait
  }
  wake_.notify_all();
  synced_.notify_all();
  publish_thread_.join();
  if (watch_thread_.joinable()) watch_thread_.join();
}

uint64_t SlicePublisher::Publish(std::vector<inventory::Device> devices) {
  // Report invalid devices once per inventory, not on every pass that rebuilds the slices.
  for (const auto& device : devices)
    if (std::string reason = ValidateDevice(device); !reason.empty())
      log_.Warning("device not published", {{"device", device.name}, {"reason", reason}});
  std::lock_guard lock(mu_);
  devices_ = std::move(devices);
  has_devices_ = true;
  dirty_ = true;
  last_publish_ = std::chrono::steady_clock::now();
  ++wake_ups_;
  wake_.notify_all();
  return ++published_sequence_;
}

bool SlicePublisher::WaitForSync(uint64_t sequence, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return synced_.wait_for(lock, stop_.get_token(), timeout,
                          [&] { return synced_sequence_ >= sequence; });
}

SlicePublisherStats SlicePublisher::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::string SlicePublisher::CollectionPath(ResourceApiVersion version) const {
  return GroupVersionPath(version) + "/resourceslices";
}

std::string SlicePublisher::FieldSelector() const {
  return "spec.nodeName=" + options_.node_name + ",spec.driver=" + options_.driver;
}

std::chrono::milliseconds SlicePublisher::NextBackoff(int failures) {
  auto base = options_.min_backoff * (int64_t{1} << std::min(failures - 1, 20));
  auto capped = std::min<std::chrono::milliseconds>(base, options_.max_backoff);
  std::uniform_int_distribution<int64_t> jitter(0, capped.count() / 2);
  std::lock_guard lock(mu_);
  return std::chrono::milliseconds(capped.count() - capped.count() / 2 + jitter(random_));
}

void SlicePublisher::ScheduleRepair(const char* why, const std::string& slice_name) {
  std::lock_guard lock(mu_);
  if (!has_devices_) return;
  log_.Info("ResourceSlice changed by someone else; repairing", {{"slice", slice_name}, {"change", why}});
  ++stats_.repairs_scheduled;
  SchedulePass();
}

void SlicePublisher::SchedulePass() {
  dirty_ = true;
  ++wake_ups_;
  wake_.notify_all();
}

void SlicePublisher::PublishLoop(std::stop_token stop) {
  int failures = 0;
  auto next_attempt = std::chrono::steady_clock::now();
  auto next_resync = std::chrono::steady_clock::now() + options_.resync_interval;
  while (!stop.stop_requested()) {
    std::vector<inventory::Device> devices;
    uint64_t sequence = 0;
    {
      std::unique_lock lock(mu_);
      // Wait for work that is due: a change (after the coalescing window and any backoff), or
      // the periodic resync.
      while (!stop.stop_requested()) {
        auto now = std::chrono::steady_clock::now();
        auto due = std::max(next_attempt, last_publish_ + options_.coalesce_window);
        bool resync_due = options_.resync_interval.count() > 0 && now >= next_resync && has_devices_;
        if ((dirty_ && now >= due) || resync_due) break;
        auto until = dirty_ ? due : (options_.resync_interval.count() > 0
                                         ? next_resync
                                         : now + std::chrono::hours(24));
        const uint64_t seen = wake_ups_;
        wake_.wait_until(lock, stop, until, [&] { return wake_ups_ != seen; });
      }
      if (stop.stop_requested()) return;
      devices = devices_;
      sequence = published_sequence_;
      dirty_ = false;
    }
    next_resync = std::chrono::steady_clock::now() + options_.resync_interval;
    try {
      Reconcile(devices, stop);
      failures = 0;
      next_attempt = std::chrono::steady_clock::now();
      bool newer;
      {
        std::lock_guard lock(mu_);
        newer = sequence > synced_sequence_;
        synced_sequence_ = std::max(synced_sequence_, sequence);
        synced_.notify_all();
      }
      if (newer && options_.on_synced) options_.on_synced();
    } catch (const ApiError& error) {
      if (stop.stop_requested()) return;
      ++failures;
      // A conflict means our view was stale: go again at once, the next list is fresh.
      auto delay = error.IsConflict() && failures <= 3 ? std::chrono::milliseconds(0)
                                                       : NextBackoff(failures);
      log_.Warning("publishing ResourceSlices failed; will retry",
                   {{"node", options_.node_name}, {"error", error.what()},
                    {"retry_in_ms", delay.count()}, {"failures", failures}});
      next_attempt = std::chrono::steady_clock::now() + delay;
      std::lock_guard lock(mu_);
      ++stats_.errors;
      dirty_ = true;
    }
  }
}

void SlicePublisher::ResolveNodeUid(std::stop_token stop) {
  if (!node_uid_.empty()) return;
  try {
    rapidjson::Document node = client_.Get("/api/v1/nodes/" + options_.node_name, stop);
    if (node.IsObject() && node.HasMember("metadata") && node["metadata"].IsObject() &&
        node["metadata"].HasMember("uid") &&
        node["metadata"]["uid"].IsString())
      node_uid_ = node["metadata"]["uid"].GetString();
  } catch (const ApiError& error) {
    if (error.status() == 0) throw;  // API server unreachable: the whole pass fails anyway
    // 404/403: publish without an owner; the next pass tries again.
    log_.Warning("cannot read the Node; publishing ResourceSlices without ownerReference",
                 {{"node", options_.node_name}, {"error", error.what()}});
  }
}

bool SlicePublisher::HeldByAnother(const std::string& name, std::stop_token stop) {
  rapidjson::Document held;
  try {
    held = client_.Get(CollectionPath(ResourceApi::Of(options_.resource_api, stop)) + "/" + name, stop);
  } catch (const ApiError& error) {
    if (error.IsNotFound()) return false;  // gone meanwhile: the retry creates it
    throw;
  }
  const auto& spec = held.IsObject() && held.HasMember("spec") ? held["spec"] : held;
  auto field = [&](const char* key) {
    return spec.IsObject() && spec.HasMember(key) && spec[key].IsString() ? std::string(spec[key].GetString()) : "";
  };
  return field("driver") != options_.driver || field("nodeName") != options_.node_name;
}

void SlicePublisher::Reconcile(const std::vector<inventory::Device>& inventory, std::stop_token stop) {
  ResolveNodeUid(stop);
  const ResourceApiVersion version = ResourceApi::Of(options_.resource_api, stop);
  const std::string collection = CollectionPath(version);
  ListOptions list_options;
  list_options.field_selector = FieldSelector();
  rapidjson::Document list;
  try {
    list = client_.List(collection, list_options, stop);
  } catch (const ApiError& error) {
    // A collection is never missing while its version is served.
    if (error.IsNotFound() && options_.resource_api) options_.resource_api->Rediscover(version);
    throw;
  }
  std::vector<inventory::Device> scalar_only;
  if (!HasListAttributes(version) && AnyListAttribute(inventory)) {
    if (!warned_lists_dropped_)
      log_.Warning("list attributes need resource.k8s.io/v1; publishing each list's first value",
                   {{"spoken", GroupVersion(version)}, {"gate", "DRAListTypeAttributes"}});
    warned_lists_dropped_ = true;
    scalar_only = WithScalarAttributes(inventory);
  }
  const std::vector<inventory::Device>* chosen = scalar_only.empty() ? &inventory : &scalar_only;
  std::vector<inventory::Device> stripped;
  if ((taints_dropped_ &&
       std::any_of(chosen->begin(), chosen->end(), [](const auto& d) { return !d.taints.empty(); })) ||
      (sharing_dropped_ &&
       std::any_of(chosen->begin(), chosen->end(), [](const auto& d) { return d.allow_multiple_allocations; }))) {
    stripped = *chosen;
    for (auto& d : stripped) StripFields(d, taints_dropped_, sharing_dropped_);
    chosen = &stripped;
  }
  const auto& devices = *chosen;

  std::vector<ResourceSlice> stored;
  if (list.HasMember("items") && list["items"].IsArray()) {
    for (const auto& item : list["items"].GetArray()) {
      try {
        stored.push_back(ParseSlice(item));
      } catch (const std::invalid_argument& error) {
        log_.Warning("ignoring unreadable ResourceSlice", {{"error", error.what()}});
      }
    }
  }
  // Our pool's slices at its current (highest) generation are what consumers see.
  int64_t generation = 0;
  for (const auto& slice : stored)
    if (slice.pool_name == options_.pool_name) generation = std::max(generation, slice.pool_generation);
  std::vector<const ResourceSlice*> current;
  for (const auto& slice : stored)
    if (slice.pool_name == options_.pool_name && slice.pool_generation == generation)
      current.push_back(&slice);

  int64_t last_generation = 0;
  {
    std::lock_guard lock(mu_);
    last_generation = stats_.pool_generation;
  }
  SliceParams params{options_.driver, options_.node_name, options_.pool_name,
                     std::max<int64_t>(generation, 1), node_uid_};
  // Invalid devices were reported by Publish(); building is silent here.
  std::vector<ResourceSlice> desired = BuildSlices(params, devices, NullLogger());
  // A current slice that is none of ours (by name, after renames).
  auto has_strangers = [&] {
    std::set<std::string> names;
    for (const auto& slice : desired) {
      auto r = renamed_.find(slice.name);
      names.insert(r == renamed_.end() ? slice.name : r->second);
    }
    return std::any_of(current.begin(), current.end(), [&](const ResourceSlice* s) { return !names.count(s->name); });
  };
  if (current.empty() && last_generation > 0) {
    // Our slices are gone (deleted by someone): never go back to an old generation number.
    params.generation = last_generation + 1;
    desired = BuildSlices(params, devices, NullLogger());
  } else if (!current.empty() && (PoolContent(current) != PoolContent(desired) || has_strangers())) {
    // A slice of the pool we would not write (another writer's, such as the
    // driver this one replaces) must not stand beside ours in one generation.
    params.generation = generation + 1;
    desired = BuildSlices(params, devices, NullLogger());
  }

  std::vector<std::string> generated_names;
  for (auto& slice : desired) {
    generated_names.push_back(slice.name);
    if (auto r = renamed_.find(slice.name); r != renamed_.end()) slice.name = r->second;
  }
  // What the watch compares its events with, before the writes: the events of
  // this pass's own creates, updates and deletes can arrive before it ends.
  {
    std::lock_guard lock(mu_);
    desired_.clear();
    for (const auto& slice : desired) desired_.emplace(slice.name, slice);
  }

  std::map<std::string, const ResourceSlice*> stored_by_name;
  for (const auto& slice : stored) stored_by_name.emplace(slice.name, &slice);
  uint64_t creates = 0, updates = 0, deletes = 0;
  std::set<std::string> wanted;
  for (std::size_t i = 0; i < desired.size(); ++i) {
    const ResourceSlice& slice = desired[i];
    const std::string& generated_name = generated_names[i];
    wanted.insert(slice.name);
    auto it = stored_by_name.find(slice.name);
    std::string path = collection + "/" + slice.name;
    if (it == stored_by_name.end()) {
      try {
        NoteDroppedFields(slice, NoteOwnWrite(client_.Create(collection, SliceToJson(slice, version), stop)));
      } catch (const ApiError& error) {
        // The name may be held by a slice that is not ours (another driver
        // or node): then ours goes under another name from the next pass on,
        // which the conflict makes immediate.
        if (error.IsConflict() && HeldByAnother(slice.name, stop)) {
          const std::string other = generated_name + "-" + std::to_string(++renames_);
          log_.Warning("a ResourceSlice that is not ours holds the name; publishing under another",
                       {{"name", slice.name}, {"as", other}});
          renamed_[generated_name] = other;
        }
        throw;
      }
      ++creates;
      log_.Info("ResourceSlice created", {{"slice", slice.name}, {"devices", slice.devices.size()},
                                          {"generation", slice.pool_generation}});
    } else if (!SemanticallyEqual(slice, *it->second)) {
      ResourceSlice update = slice;
      update.resource_version = it->second->resource_version;
      NoteDroppedFields(slice, NoteOwnWrite(client_.Update(path, SliceToJson(update, version), stop)));
      ++updates;
      log_.Info("ResourceSlice updated", {{"slice", slice.name}, {"devices", slice.devices.size()},
                                          {"generation", slice.pool_generation}});
    }
  }
  for (const auto& slice : stored) {
    if (wanted.count(slice.name)) continue;
    RememberOwnWrite("deleted:" + slice.name);
    client_.Delete(collection + "/" + slice.name, DeletePreconditions(slice), stop);
    ++deletes;
    log_.Info("ResourceSlice deleted", {{"slice", slice.name}, {"pool", slice.pool_name}});
  }

  std::lock_guard lock(mu_);
  stats_.creates += creates;
  stats_.updates += updates;
  stats_.deletes += deletes;
  ++stats_.passes;
  if (creates + updates + deletes == 0) ++stats_.unchanged_passes;
  stats_.pool_generation = params.generation;
  stats_.slices = desired_.size();
  stats_.taints_dropped = taints_dropped_;
  stats_.sharing_dropped = sharing_dropped_;
}

void SlicePublisher::RememberOwnWrite(std::string key) {
  std::lock_guard lock(mu_);
  own_writes_.push_back(std::move(key));
  if (own_writes_.size() > kOwnWritesKept) own_writes_.pop_front();
}

const rapidjson::Value& SlicePublisher::NoteOwnWrite(const rapidjson::Value& returned) {
  if (returned.IsObject()) {
    const std::string version = MetadataField(returned, "resourceVersion");
    if (!version.empty()) RememberOwnWrite("rv:" + version);
  }
  return returned;
}

bool SlicePublisher::TakeOwnWrite(const std::string& key) {
  auto it = std::find(own_writes_.begin(), own_writes_.end(), key);
  if (it == own_writes_.end()) return false;
  own_writes_.erase(it);
  return true;
}

void SlicePublisher::NoteDroppedFields(const ResourceSlice& sent, const rapidjson::Value& returned) {
  if ((taints_dropped_ && sharing_dropped_) || !returned.IsObject()) return;
  std::map<std::string, const SliceDevice*> kept;
  ResourceSlice parsed;
  try {
    parsed = ParseSlice(returned);
  } catch (const std::invalid_argument&) {
    return;
  }
  for (const auto& device : parsed.devices) kept[device.name] = &device;
  bool dropped_taints = false, dropped_sharing = false;
  std::string device_name;
  for (const auto& device : sent.devices) {
    auto it = kept.find(device.name);
    if (it == kept.end()) continue;
    if (!taints_dropped_ && !device.taints.empty() && it->second->taints.empty()) dropped_taints = true;
    if (!sharing_dropped_ && device.allow_multiple_allocations && !it->second->allow_multiple_allocations)
      dropped_sharing = true;
    if ((dropped_taints || dropped_sharing) && device_name.empty()) device_name = device.name;
  }
  if (dropped_taints) {
    taints_dropped_ = true;
    log_.Warning("the API server drops device taints (Kubernetes before 1.36, or its DRADeviceTaints gate off): "
                 "unhealthy devices are published without them; the kubelet still hears of their health",
                 {{"slice", sent.name}, {"device", device_name}});
  }
  if (dropped_sharing) {
    sharing_dropped_ = true;
    log_.Error("the API server drops allowMultipleAllocations (Kubernetes before 1.36, or its DRAConsumableCapacity "
               "gate off): shareable devices are published for one claim at a time",
               {{"slice", sent.name}, {"device", device_name}});
  }
  if (!dropped_taints && !dropped_sharing) return;
  std::lock_guard lock(mu_);
  // The watch's events of this write are ours, not someone else's change.
  for (auto& [name, slice] : desired_)
    for (auto& d : slice.devices) StripFields(d, taints_dropped_, sharing_dropped_);
  SchedulePass();  // the pool again without them, so that it compares equal
}

void SlicePublisher::WatchLoop(std::stop_token stop) {
  ListWatchOptions options;
  options.list.field_selector = FieldSelector();
  options.list.timeout_seconds = options_.watch_timeout_seconds;
  options.min_backoff = options_.min_backoff;
  options.max_backoff = options_.max_backoff;
  ListWatchHandlers handlers;
  handlers.on_list = [this](const rapidjson::Document&, bool first) {
    {
      std::lock_guard lock(mu_);
      own_writes_.clear();  // their events will not come now; the pass below compares anew
    }
    // Anything may have happened while we were not watching: check on every relist.
    if (!first) ScheduleRepair("relisted", "*");
  };
  handlers.on_event = [this](WatchEvent& event) {
    std::string name = MetadataField(event.object, "name");
    bool expected = false;
    {
      std::lock_guard lock(mu_);
      auto it = desired_.find(name);
      if (TakeOwnWrite(event.type == "DELETED" ? "deleted:" + name
                                               : "rv:" + MetadataField(event.object, "resourceVersion"))) {
        expected = true;  // one of ours, however late it comes
      } else if (event.type == "DELETED") {
        expected = it == desired_.end();  // we deleted it, or never wanted it
      } else if (it != desired_.end()) {
        try {
          expected = SemanticallyEqual(it->second, ParseSlice(event.object));
        } catch (const std::invalid_argument&) {
        }
      }
    }
    if (!expected) ScheduleRepair(event.type.c_str(), name);
  };
  // The version of the last (re)list, for the 404 that says it is no longer served.
  ResourceApiVersion watched = ResourceApiVersion::kV1;
  handlers.on_error = [this, &watched](const std::exception& error) {
    const auto* api_error = dynamic_cast<const ApiError*>(&error);
    if (api_error == nullptr || !api_error->IsNotFound() || options_.resource_api == nullptr) return;
    options_.resource_api->Rediscover(watched);
    std::lock_guard lock(mu_);
    if (has_devices_) SchedulePass();  // publish in what is served now, not at the next resync
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
