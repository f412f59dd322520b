#pragma once
// core/state/checkpoint_store.h — PreparedClaims backed by crash-safe files.
//
// One file per prepared claim, <state_dir>/claims/<claim UID>.json, each a
// checkpoint document holding that one claim:
//   {"kind":"DranetCheckpoint","version":1,"bootId":"<boot id>",
//    "checksum":"crc32:<8 hex>","claims":[<ClaimPlan>]}
// The checksum is CRC-32 of bootId + "\n" + the compact serialisation of
// "claims". A claim UID that is not a plain name ([A-Za-z0-9][A-Za-z0-9._-]*)
// is spelled "~" + its bytes in hex. A mutation writes only the claims it
// changes: each as <file>.tmp, fsynced, then renamed over the claim's file
// (removals unlink it), then one fsync of the directory; so a write costs
// the same however many claims the node holds. Concurrent mutations share
// one write (group commit: the calls that arrive while a write runs are
// written together by the next one). A reader never sees a half-written
// file; a crash leaves each claim whole or absent.
//
// Earlier versions kept every claim in one document, <state_dir>/
// prepared-claims.json (same format, all claims in "claims"); a store that
// finds one converts it to claim files at start and removes it.
//
// At construction the files are loaded; per file:
//   - written in an earlier boot  → removed (pods of that boot are gone;
//     kubelet prepares again for the pods it restarts), one log line;
//   - unreadable, torn, bad checksum, unknown version, mistyped field, or a
//     claim file holding another claim than its name says
//                                 → moved aside to <file>.corrupt, a log line,
//     on_corrupt(message) (the daemon turns it into an Event); the other
//     files still load;
//   - leftover <file>.tmp (a write cut off by a crash) → removed.
// Construction never throws because of the files' content, so a bad file
// cannot crash-loop the daemon. It throws std::system_error only when the
// state directory cannot be created.
//
// Shared by the instances of a node: during a DaemonSet rollout the old and
// the new dranetd use one state directory, and a claim one prepared the
// other may unprepare, or see at a pod's start. So:
//   - <state_dir>/claims.lock is flock()ed exclusively for every write and
//     for the load at construction (which removes leftover .tmp files: never
//     those of a write in progress), and shared while a reader rescans;
//   - <state_dir>/claims.generation holds a counter, mapped shared, that every
//     write bumps; a reader (Get, ForPod, All) that finds it moved since it
//     last looked rescans the claim files first (only the files whose inode
//     changed are parsed again), so what another instance wrote is seen at
//     once. One atomic load per read when nothing changed.
//
// Thread-safety: all methods may be called concurrently; mutations apply in
// arrival order and each is durable when it returns. A mutation whose write
// fails throws std::system_error naming the file and leaves the store
// unchanged (so do the others written with it: they throw too); claims
// whose files that write may have changed are written again, from the
// store, by the next write.
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"
#include "base/unique_fd.h"
#include "state/prepared_claims.h"

namespace dranet::state {

inline constexpr int kCheckpointVersion = 1;

struct CheckpointOptions {
  std::filesystem::path state_dir = "/var/run/dranet";  // --state-dir
  std::filesystem::path procfs_root = "/proc";          // boot id: <procfs_root>/sys/kernel/random/boot_id
  std::string claims_dir_name = "claims";                // one file per claim
  std::string legacy_file_name = "prepared-claims.json";  // the single file of earlier versions
  // Called once from the constructor when the checkpoint had to be discarded
  // as corrupt; `message` names the file and the problem. May be empty.
  std::function<void(const std::string& message)> on_corrupt;
  // Tests only: called before each checkpoint write, without the store's
  // lock; what it throws fails that write. May be empty.
  std::function<void()> before_write;
};

// What construction found: kCorrupt when any file was corrupt (the others are
// loaded still), else kLoaded when any claim was loaded, else kEarlierBoot
// when files of an earlier boot were dropped, else kNoFile.
enum class LoadOutcome { kNoFile, kLoaded, kEarlierBoot, kCorrupt };
const char* LoadOutcomeName(LoadOutcome outcome);

class CheckpointStore final : public PreparedClaims {
 public:
  // Loads the checkpoint (see above). `log` must outlive the store.
  CheckpointStore(CheckpointOptions options, Logger& log);
  ~CheckpointStore() override;
  CheckpointStore(const CheckpointStore&) = delete;
  CheckpointStore& operator=(const CheckpointStore&) = delete;

  void Put(const std::vector<inject::ClaimPlan>& plans) override;
  void Remove(const std::vector<std::string>& claim_uids) override;
  std::optional<inject::ClaimPlan> Get(const std::string& claim_uid) const override;
  std::vector<inject::ClaimPlan> ForPod(const std::string& pod_uid) const override;
  std::vector<inject::ClaimPlan> All() const override;

  LoadOutcome load_outcome() const { return load_outcome_; }
  // The directory of the claim files.
  const std::filesystem::path& claims_dir() const { return claims_dir_; }
  // The file of claim `claim_uid` in claims_dir(); throws std::system_error
  // (ENAMETOOLONG) for a UID too long to name a file.
  std::filesystem::path ClaimFile(const std::string& claim_uid) const;
  const std::string& boot_id() const { return boot_id_; }
  // Completed checkpoint writes since construction.
  uint64_t writes() const;
  // Put/Remove calls those writes carried (>= writes(): calls share writes
  // under concurrency).
  uint64_t committed_mutations() const;
  // Mutations queued behind the write in progress (tests).
  std::size_t pending() const;
  // Rescans that found another instance's writes (tests, logs).
  uint64_t rescans() const;

 private:
  struct Mutation {
    std::vector<inject::ClaimPlan> put;
    std::vector<std::string> put_json;  // PlanToJson of each of put
    std::vector<std::string> remove;
    bool done = false;
    std::exception_ptr error;
  };
  // What one checkpoint file held.
  struct FileContent {
    std::string boot_id;
    std::vector<inject::ClaimPlan> plans;
  };
  void Load();
  // The claims of the checkpoint document at `file`; nullopt (the file set
  // aside and reported) when it is corrupt.
  std::optional<FileContent> LoadFile(const std::filesystem::path& file);
  // Loads and converts the single file of earlier versions, if any.
  void LoadLegacyFile();
  // Adds plans read from disk; false (and the plans skipped) when they
  // belong to an earlier boot.
  bool Adopt(FileContent content);
  // ClaimFile, or nullopt for a UID too long to name a file.
  std::optional<std::filesystem::path> ClaimFileIfAny(const std::string& claim_uid) const;
  void Discard(const std::filesystem::path& file, const std::string& problem);
  // Queues `m` and returns once a write holding it is durable (see .cpp).
  void Commit(Mutation& m);
  // Makes the files of `claim_uids` match claim_json_ (written where the
  // claim is there, removed where not) durably; throws std::system_error.
  // Called by the one writer of Commit, without mu_.
  // The caller holds claims.lock exclusively.
  void Write(const std::set<std::string>& claim_uids);
  // Opens claims.lock and maps claims.generation; throws std::system_error.
  void OpenShared();
  // The shared write counter (0 when it could not be mapped).
  uint64_t Generation() const;
  // Bumps it; returns the value before.
  uint64_t BumpGeneration();
  // Under mu_: when another instance wrote since this one last looked, waits
  // for this instance's own write to end and rescans the claim files.
  void RefreshLocked(std::unique_lock<std::mutex>& lock);
  // mu_, locked after RefreshLocked (the readers' way in).
  std::unique_lock<std::mutex> ReadLock() const;

  CheckpointOptions options_;
  Logger& log_;
  std::filesystem::path claims_dir_;
  std::string boot_id_;
  LoadOutcome load_outcome_ = LoadOutcome::kNoFile;
  bool found_corrupt_ = false;
  std::size_t earlier_boot_files_ = 0;
  std::size_t earlier_boot_claims_ = 0;
  // The single file of earlier versions awaits removal after the next
  // successful write (writer only).
  bool legacy_pending_ = false;
  mutable std::mutex mu_;
  std::map<std::string, inject::ClaimPlan> claims_;  // by claim UID; what is on disk
  // The same claims as PlanToJson texts, and while a batch is written that
  // batch's too: only the writer (writing_) reads or changes them.
  std::map<std::string, std::string> claim_json_;
  // Claims whose files a failed write may have left unlike claim_json_; the
  // next write writes them too (writer only).
  std::set<std::string> unsynced_;
  std::deque<Mutation*> queue_;                       // waiting for the next write
  bool writing_ = false;                              // a caller is writing a batch
  std::condition_variable written_;                   // a batch finished
  uint64_t writes_ = 0;
  uint64_t batched_mutations_ = 0;
  UniqueFd lock_fd_;                      // claims.lock
  std::uint64_t* generation_ = nullptr;   // claims.generation, mapped shared
  uint64_t seen_generation_ = 0;          // the counter when claims_ was last made equal to the files
  // Each claim file as last parsed: its inode and claim UID (rescans parse
  // only files that were replaced).
  std::map<std::filesystem::path, std::pair<ino_t, std::string>> parsed_;
  uint64_t rescans_ = 0;
};

// The checkpoint document for `claims` under `boot_id` (exposed for tests).
std::string CheckpointJson(const std::vector<inject::ClaimPlan>& claims, const std::string& boot_id);
// The same from each claim's PlanToJson text, in order.
std::string CheckpointJsonOf(const std::vector<std::string_view>& claim_texts, const std::string& boot_id);

// The current boot id from <procfs_root>/sys/kernel/random/boot_id; empty
// when it cannot be read.
std::string ReadBootId(const std::filesystem::path& procfs_root);

}  // namespace dranet::state
