#pragma once
// core/kube/slice_publisher.h — keeps the node's ResourceSlices equal to its inventory.
//
// Publish(devices) hands over the latest inventory and returns at once; a background thread
// ("slice-publish") brings the API server in line:
//   1. list our slices (fieldSelector spec.nodeName=<node>,spec.driver=<driver>);
//   2. build the desired slices (BuildSlices) at the stored pool generation; if the devices
//      differ from what the stored slices at that generation hold, bump the generation by one
//      (the API documents that every content change bumps it, in every slice of the pool);
//   3. create/update only the slices that differ semantically, delete slices that are no longer
//      wanted (other pools of ours, surplus indices) with uid+resourceVersion preconditions.
// Nothing changed → no write at all. Bursts of Publish() within the coalescing window become
// one pass. A second thread ("slice-watch") watches our slices and schedules a pass when one is
// edited or deleted by someone else, so external changes are repaired. Failed passes are
// retried with jittered exponential backoff (the API client retries single calls first), so a
// fleet of nodes does not return in lock-step after an API server outage.
//
// The slices are written in the resource.k8s.io version `resource_api` says (v1 without one);
// a 404 for the collection (from a pass or the watch) makes it ask the API server again, and
// a pass follows at once. A version without list values
// gets list attributes cut to their first value, with one warning.
//
// Device taints (inventory::Device::taints) are published as given. An API server that does
// not keep them (before Kubernetes 1.36, or DRADeviceTaints off: the field is dropped on
// write) is found out from the object a create or update returns: one warning, and from then
// on taints are left out, so that the slices compare equal and are not written again. The
// same for allowMultipleAllocations and its capacities (DRAConsumableCapacity off): an error,
// and shareable devices published for one claim at a time.
//
// The Node's UID (for the ownerReference that lets the garbage collector delete our slices
// with the Node) is read once from GET /api/v1/nodes/<node>; while the Node cannot be read
// the slices are published without an owner and fixed up later.
//
// Thread-safety: Publish(), WaitForSync() and Stats() may be called from any thread.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "inventory/device.h"
#include "kube/api_client.h"
#include "kube/resource_api.h"
#include "kube/resource_slice.h"

namespace dranet::kube {

struct SlicePublisherOptions {
  std::string driver{kDefaultDriverName};
  std::string node_name;  // required
  std::string pool_name;  // empty: the node name
  // Publish() calls closer together than this are published together.
  std::chrono::milliseconds coalesce_window{100};
  // Backoff between failed passes: doubles from min to max, with jitter.
  std::chrono::milliseconds min_backoff{500};
  std::chrono::milliseconds max_backoff{60'000};
  // A pass (one LIST, normally no write) at least this often, as a safety net; 0 disables.
  std::chrono::seconds resync_interval{600};
  bool watch = true;  // repair external edits as they happen
  int watch_timeout_seconds = 300;
  // The resource.k8s.io version to speak; null: v1. Must outlive the publisher.
  ResourceApi* resource_api = nullptr;
  // Called on the publisher's thread, none of its locks held, each time a
  // pass has put a newer inventory on the API server (WaitForSync would now
  // return true for it): a waiter can sleep instead of polling.
  std::function<void()> on_synced;
};

// Counters since construction (metrics come later).
struct SlicePublisherStats {
  uint64_t creates = 0;
  uint64_t updates = 0;
  uint64_t deletes = 0;
  uint64_t errors = 0;          // failed passes
  uint64_t passes = 0;          // completed passes
  uint64_t unchanged_passes = 0;  // completed passes that wrote nothing
  uint64_t repairs_scheduled = 0;  // passes asked for by the watch
  int64_t pool_generation = 0;  // generation of the last completed pass
  std::size_t slices = 0;       // slices after the last completed pass
  bool taints_dropped = false;  // the API server dropped the taints it was sent (they are left out since)
  bool sharing_dropped = false;  // the API server dropped allowMultipleAllocations (left out since)
  uint64_t writes() const { return creates + updates + deletes; }
};

class SlicePublisher {
 public:
  // `client` and `log` must outlive the publisher. Starts the background threads.
  SlicePublisher(ApiClient& client, SlicePublisherOptions options, Logger& log);
  // Stops the threads (in-flight calls are cancelled) and returns; slices stay published.
  ~SlicePublisher();
  SlicePublisher(const SlicePublisher&) = delete;
  SlicePublisher& operator=(const SlicePublisher&) = delete;

  // Sets the inventory to publish. Returns its sequence number (1, 2, …) for WaitForSync().
  uint64_t Publish(std::vector<inventory::Device> devices);
  // Waits until the inventory with `sequence` (or a later one) is on the API server.
  bool WaitForSync(uint64_t sequence, std::chrono::milliseconds timeout);
  SlicePublisherStats Stats() const;

 private:
  void PublishLoop(std::stop_token stop);
  void WatchLoop(std::stop_token stop);
  // One reconcile pass; throws ApiError on failure.
  void Reconcile(const std::vector<inventory::Device>& devices, std::stop_token stop);
  // After a create or update: whether the API server kept the taints `sent` carries.
  // Taints or allowMultipleAllocations sent but not in the object returned: left out from then on.
  void NoteDroppedFields(const ResourceSlice& sent, const rapidjson::Value& returned);
  // own_writes_ (below): remembers a key; the resourceVersion a write got
  // back (returns `returned`); takes a key an event matches (mu_ held).
  void RememberOwnWrite(std::string key);
  const rapidjson::Value& NoteOwnWrite(const rapidjson::Value& returned);
  bool TakeOwnWrite(const std::string& key);
  // Whether the slice called `name` belongs to another driver or node.
  bool HeldByAnother(const std::string& name, std::stop_token stop);
  void ResolveNodeUid(std::stop_token stop);
  void ScheduleRepair(const char* why, const std::string& slice_name);
  void SchedulePass();  // mu_ held
  std::chrono::milliseconds NextBackoff(int failures);
  std::string CollectionPath(ResourceApiVersion version) const;
  std::string FieldSelector() const;

  ApiClient& client_;
  SlicePublisherOptions options_;
  Logger& log_;
  std::string node_uid_;  // publish thread only

  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::vector<inventory::Device> devices_;
  bool has_devices_ = false;
  bool dirty_ = false;
  uint64_t wake_ups_ = 0;  // bumped with every notify of wake_, so waits see the news
  uint64_t published_sequence_ = 0;  // last Publish()
  uint64_t synced_sequence_ = 0;     // last one on the server
  std::chrono::steady_clock::time_point last_publish_{};
  std::map<std::string, ResourceSlice> desired_;  // by name, as of the latest pass (set before its writes)
  // This publisher's own writes whose watch events have not arrived yet:
  // "rv:<resourceVersion>" of each create and update it got back, and
  // "deleted:<name>" of each delete (the newest kOwnWritesKept). An event of
  // an earlier pass can arrive after the next pass changed desired_; it is
  // recognised here, not taken for someone else's change.
  std::deque<std::string> own_writes_;
  static constexpr std::size_t kOwnWritesKept = 1024;
  // Generated slice names held by objects that are not ours, and the names
  // used instead (publisher thread only).
  std::map<std::string, std::string> renamed_;
  int renames_ = 0;
  bool warned_lists_dropped_ = false;  // publisher thread only
  bool taints_dropped_ = false;        // publisher thread only (copied into stats_)
  bool sharing_dropped_ = false;       // publisher thread only (copied into stats_)
  SlicePublisherStats stats_;
  std::condition_variable_any synced_;
  std::mt19937 random_;

  std::stop_source stop_;
  std::thread publish_thread_;
  std::thread watch_thread_;
};

}  // namespace dranet::kube
