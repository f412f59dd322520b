#pragma once
// tests/fakes/apiserver/fake_apiserver.h — a fake Kubernetes API server on loopback HTTP.
//
// Speaks the real REST/JSON wire protocol (Boost.Beast, HTTP/1.1, keep-alive, chunked watch
// streams) for what dranet uses:
//   resource.k8s.io/v1 resourceslices   list (fieldSelector, labelSelector), watch, get,
//                                       create (name or generateName), update, delete
//                                       (preconditions), delete-collection
//   resource.k8s.io/v1 resourceclaims   list/watch (all namespaces or one), get, create,
//                                       server-side apply on /status (status.devices merged
//                                       per driver+pool+device+shareID)
//   v1 nodes                            get, list, create
//   v1 events                           create, list
//   /apis/resource.k8s.io               the APIGroup discovery document
// resource.k8s.io is served in the versions ServeResourceVersions() names (v1 alone by
// default, a 1.34+ control plane); other versions answer 404 like an API server that does not
// serve them. Each version keeps its own objects (no conversion between versions), and writes
// are checked for that version's shape: a body whose apiVersion is not the URL's is refused
// (400, as create/update/apply are), v1beta1 slice devices need `basic` (422, as 1.32
// validation) and must not carry fields outside it, v1/v1beta2 devices must not carry
// `basic` (kubernetes api/openapi-spec/v3 apis__resource.k8s.io__v1beta1_openapi.json: a
// Device has `name` and `basic`, "besides the name, exactly one field must be set"), and
// list attribute values are refused outside v1, as the 1.32/1.33 servers that serve only
// the betas do (they have no such fields) — the fake refuses an unknown field
// (400) where a real server in its default mode would drop it with a warning and store a
// device without attributes, so that a wrong shape fails a test at once.
// with resourceVersion semantics (one cluster-wide counter; 409 on a stale update or a failed
// delete precondition; 410 for a watch or list from a compacted version), bookmarks, bearer
// token checks, a request log, and fault injection (status codes with Retry-After, dropped
// connections, latency, "down" mode that closes every connection).
//
// Thread-safety: every public method may be called from any thread while serving.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dranet::fakes {

struct FakeFault {
  std::string method;         // "GET", "PUT"…; empty matches every method
  std::string path_contains;  // substring of the request target; empty matches all
  int status = 500;           // answered status; 0 closes the connection without an answer
  int retry_after_seconds = -1;  // ≥0 adds a Retry-After header
  std::chrono::milliseconds delay{0};  // waited before answering (or before the fault)
  int times = 1;              // requests it applies to; -1 until ClearFaults()
};

struct RecordedRequest {
  std::string method;
  std::string target;  // path + query
  int status = 0;      // answered status (0: connection dropped)
};

// Checks an object about to be stored; returns an error message (answered as 422 Invalid) or
// an empty string. `object_json` is the request body.
using FakeValidator = std::function<std::string(const std::string& object_json)>;

class FakeApiServer {
 public:
  // Listens on 127.0.0.1:`port` (0: any free port) and serves on background threads.
  explicit FakeApiServer(uint16_t port = 0);
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  uint16_t port() const;
  std::string url() const;  // "http://127.0.0.1:<port>"

  // Requests must carry "Authorization: Bearer <token>" (401 otherwise). Empty: no check.
  void RequireToken(const std::string& token);
  void InjectFault(FakeFault fault);
  void ClearFaults();
  // While down, every connection is closed at once and open watches end.
  void SetDown(bool down);
  // Forgets watch history: watches and lists from older resourceVersions get 410 Gone.
  void CompactHistory();
  // Ends every open watch with an ERROR event carrying 410 Expired, as the API server does
  // when a watcher falls too far behind; clients must relist.
  void ExpireWatches();
  // Idle time after which an open watch with allowWatchBookmarks gets a BOOKMARK.
  void SetBookmarkInterval(std::chrono::milliseconds interval);
  // The resource.k8s.io versions served ("v1", "v1beta2", "v1beta1"), newest first as the
  // discovery document lists them; empty: the group is not served at all.
  void ServeResourceVersions(std::vector<std::string> versions);
  // Validates bodies of creates/updates of `resource` (e.g. "resourceslices").
  void SetValidator(const std::string& resource, FakeValidator validator);
  // A ResourceSlice device's taints are stored with timeAdded stamped (Kubernetes 1.36+);
  // with DropDeviceTaints(true) they are dropped from every write instead, as a server
  // without the DRADeviceTaints feature drops the field.
  void DropDeviceTaints(bool drop);
  // allowMultipleAllocations and capacities' requestPolicy dropped from every write, as a
  // server without DRAConsumableCapacity (before 1.36) drops them.
  void DropConsumableCapacity(bool drop);
  // What GET /version answers ("v1.37.2" by default).
  void SetServerVersion(std::string git_version);

  std::vector<RecordedRequest> Requests() const;
  // Requests whose method matches (empty: any) and whose target contains `path_contains`.
  std::size_t CountRequests(const std::string& method, const std::string& path_contains) const;
  void ClearRequests();
  // TCP connections accepted so far (clients that keep theirs open reuse them).
  std::size_t AcceptedConnections() const;

  // Direct store access, bypassing HTTP (and faults). `collection` is a collection path such as
  // "/api/v1/nodes" or "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims".
  // PutObject creates or replaces; it returns the stored object (uid, resourceVersion set).
  std::string PutObject(const std::string& collection, const std::string& object_json);
  std::optional<std::string> GetObject(const std::string& collection, const std::string& name) const;
  std::vector<std::string> ListObjects(const std::string& collection) const;
  bool DeleteObject(const std::string& collection, const std::string& name);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dranet::fakes
