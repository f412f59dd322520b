#pragma once
// core/state/checkpoint_store.h — PreparedClaims backed by a crash-safe file.
//
// The checkpoint is one JSON document, <state_dir>/prepared-claims.json:
//   {"kind":"DranetCheckpoint","version":1,"bootId":"<boot id>",
//    "checksum":"crc32:<8 hex>","claims":[<ClaimPlan>...]}
// The checksum is CRC-32 of bootId + "\n" + the compact serialisation of
// "claims". Every mutation rewrites the whole file with WriteFileAtomic
// (temp + fsync + rename + fsync of the directory), however many claims it
// carries; concurrent mutations share one write (group commit: the calls
// that arrive while a write runs are written together by the next one). A
// reader never sees a half-written file.
//
// At construction the file is loaded:
//   - absent                      → empty store;
//   - written in an earlier boot  → dropped with a log line (pods of that
//     boot are gone; kubelet prepares again for the pods it restarts);
//   - unreadable, torn, bad checksum, unknown version, mistyped field
//                                 → moved aside to <file>.corrupt, a log line,
//     on_corrupt(message) (the daemon turns it into an Event), empty store.
// Construction never throws because of the file's content, so a bad file
// cannot crash-loop the daemon. It throws std::system_error only when the
// state directory cannot be created.
//
// Thread-safety: all methods may be called concurrently; mutations apply in
// arrival order and each is durable when it returns. A mutation whose write
// fails throws std::system_error naming the file and leaves the store
// unchanged (so do the others written with it: they throw too).
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"
#include "state/prepared_claims.h"

namespace dranet::state {

inline constexpr int kCheckpointVersion = 1;

struct CheckpointOptions {
  std::filesystem::path state_dir = "/var/run/dranet";  // --state-dir
  std::filesystem::path procfs_root = "/proc";          // boot id: <procfs_root>/sys/kernel/random/boot_id
  std::string file_name = "prepared-claims.json";
  // Called once from the constructor when the checkpoint had to be discarded
  // as corrupt; `message` names the file and the problem. May be empty.
  std::function<void(const std::string& message)> on_corrupt;
  // Tests only: called before each checkpoint write, without the store's
  // lock; what it throws fails that write. May be empty.
  std::function<void()> before_write;
};

// What construction found.
enum class LoadOutcome { kNoFile, kLoaded, kEarlierBoot, kCorrupt };
const char* LoadOutcomeName(LoadOutcome outcome);

class CheckpointStore final : public PreparedClaims {
 public:
  // Loads the checkpoint (see above). `log` must outlive the store.
  CheckpointStore(CheckpointOptions options, Logger& log);

  void Put(const std::vector<inject::ClaimPlan>& plans) override;
  void Remove(const std::vector<std::string>& claim_uids) override;
  std::optional<inject::ClaimPlan> Get(const std::string& claim_uid) const override;
  std::vector<inject::ClaimPlan> ForPod(const std::string& pod_uid) const override;
  std::vector<inject::ClaimPlan> All() const override;

  LoadOutcome load_outcome() const { return load_outcome_; }
  const std::filesystem::path& path() const { return path_; }
  const std::string& boot_id() const { return boot_id_; }
  // Completed checkpoint writes since construction.
  uint64_t writes() const;
  // Put/Remove calls those writes carried (>= writes(): calls share writes
  // under concurrency).
  uint64_t committed_mutations() const;
  // Mutations queued behind the write in progress (tests).
  std::size_t pending() const;

 private:
  struct Mutation {
    std::vector<inject::ClaimPlan> put;
    std::vector<std::string> put_json;  // PlanToJson of each of put
    std::vector<std::string> remove;
    bool done = false;
    std::exception_ptr error;
  };
  void Load();
  void Discard(const std::string& problem);
  // Queues `m` and returns once a write holding it is durable (see .cpp).
  void Commit(Mutation& m);
  // Writes the checkpoint of claim_json_ durably; throws std::system_error.
  // Called by the one writer of Commit, without mu_.
  void Write();

  CheckpointOptions options_;
  Logger& log_;
  std::filesystem::path path_;
  std::string boot_id_;
  LoadOutcome load_outcome_ = LoadOutcome::kNoFile;
  mutable std::mutex mu_;
  std::map<std::string, inject::ClaimPlan> claims_;  // by claim UID; what is on disk
  // The same claims as PlanToJson texts, and while a batch is written that
  // batch's too: only the writer (writing_) reads or changes them.
  std::map<std::string, std::string> claim_json_;
  std::deque<Mutation*> queue_;                       // waiting for the next write
  bool writing_ = false;                              // a caller is writing a batch
  std::condition_variable written_;                   // a batch finished
  uint64_t writes_ = 0;
  uint64_t batched_mutations_ = 0;
};

// The checkpoint document for `claims` under `boot_id` (exposed for tests).
std::string CheckpointJson(const std::vector<inject::ClaimPlan>& claims, const std::string& boot_id);
// The same from each claim's PlanToJson text, in order.
std::string CheckpointJsonOf(const std::vector<std::string_view>& claim_texts, const std::string& boot_id);

// The current boot id from <procfs_root>/sys/kernel/random/boot_id; empty
// when it cannot be read.
std::string ReadBootId(const std::filesystem::path& procfs_root);

}  // namespace dranet::state
