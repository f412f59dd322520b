#pragma once
// tests/fakes/metadata/fake_metadata_server.h — a fake cloud metadata
// service (Azure IMDS and GCE metadata server) on loopback HTTP/1.1.
//
// Serves recorded responses from a directory tree (a node snapshot's
// metadata/azure or metadata/gce folder) over real TCP on 127.0.0.1 with an
// ephemeral port (Boost.Beast), so plugins are tested through the host's
// real HTTP client. See README.md for the file layout:
//   GET /a/b/c?q          -> <root>/a/b/c@<encoded q>, else <root>/a/b/c
//   GET /a/b/ (or a dir)  -> <root>/a/b/index (same query rule)
//   GET /a/b/c/d missing  -> member "d" of the JSON object in file <root>/a/b/c,
//                            (any depth; a string leaf is served as text)
// Like the real services it insists on its header: paths under /metadata
// need "Metadata: true" (else 400, Azure's answer; also 400 with
// X-Forwarded-For or without api-version), paths under /computeMetadata need
// "Metadata-Flavor: Google" (else 403, GCE's answer) and answers carry
// "Metadata-Flavor: Google"; paths under /latest (AWS IMDSv2, Alibaba)
// need a session token from PUT /latest/api/token (with the service's TTL
// header) else 401, and paths under /opc (OCI IMDS v2) need
// "Authorization: Bearer Oracle" else 401.
// Faults on demand: delay, any status, dropped connection, garbage body,
// huge body. Every request is counted.
//
// Thread-safety: every public method may be called from any thread while
// the server runs.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace dranet::fakes {

struct MetadataFault {
  enum class Action {
    kServe,    // answer normally (after `delay`)
    kStatus,   // answer `status` with a short text body
    kDrop,     // close the connection without answering
    kGarbage,  // 200 with a body that is not JSON
    kHuge,     // 200 with a valid JSON body of `huge_bytes`
  };
  std::string path_contains;  // substring of the request target; empty matches all
  Action action = Action::kStatus;
  int status = 500;
  std::chrono::milliseconds delay{0};  // waited before acting
  std::size_t huge_bytes = 1u << 20;
  int times = -1;  // requests it applies to; -1 until ClearFaults()
};

struct MetadataRequest {
  std::string target;  // path + query
  int status = 0;      // answered status; 0: connection dropped; -1: not answered yet
};

class FakeMetadataServer {
 public:
  // Serves `root` on 127.0.0.1:`port` (0: a free port) from background threads.
  explicit FakeMetadataServer(std::filesystem::path root, uint16_t port = 0);
  ~FakeMetadataServer();
  FakeMetadataServer(const FakeMetadataServer&) = delete;
  FakeMetadataServer& operator=(const FakeMetadataServer&) = delete;

  // The session tokens PUT /latest/api/token hands out.
  static constexpr const char* kAwsToken = "fake-aws-imdsv2-token";
  static constexpr const char* kAlibabaToken = "fake-alibaba-metadata-token";

  uint16_t port() const;
  std::string url() const;  // "http://127.0.0.1:<port>"

  void InjectFault(MetadataFault fault);
  void ClearFaults();

  std::vector<MetadataRequest> Requests() const;
  // Requests whose target contains `path_contains` (empty: all).
  std::size_t Hits(const std::string& path_contains = "") const;
  void ClearRequests();

  // The file name a query maps to: characters other than [A-Za-z0-9._~=,-]
  // are percent-encoded, e.g. "recursive=true&alt=json" -> "recursive=true%26alt=json".
  static std::string EncodeQuery(const std::string& query);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dranet::fakes
