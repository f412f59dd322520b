#include "state/checkpoint_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/json.h"
#include "base/files.h"
#include "state/crc32.h"
#include "base/fault_points.h"
#include "state/plan_json.h"

namespace dranet::state {
namespace {

constexpr std::size_t kMaxCheckpointBytes = 64 * 1024 * 1024;
constexpr const char* kKind = "DranetCheckpoint";

// The checksum of `claims_json`, the claims array's text, under `boot_id`;
// the array may come in pieces (CRC-32 runs on from one to the next).
std::string ChecksumOf(const std::string& boot_id, const std::vector<std::string_view>& claims_json) {
  uint32_t crc = Crc32("\n", Crc32(boot_id));
  for (std::string_view piece : claims_json) crc = Crc32(piece, crc);
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08" PRIx32, crc);
  return std::string("crc32:") + hex;
}

// `text` as a JSON string, quotes and escapes included.
std::string JsonString(std::string_view text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return {buffer.GetString(), buffer.GetSize()};
}

std::string Compact(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace

const char* LoadOutcomeName(LoadOutcome outcome) {
  switch (outcome) {
    case LoadOutcome::kNoFile: return "no-file";
    case LoadOutcome::kLoaded: return "loaded";
    case LoadOutcome::kEarlierBoot: return "earlier-boot";
    case LoadOutcome::kCorrupt: return "corrupt";
  }
  return "unknown";
}

std::string ReadBootId(const std::filesystem::path& procfs_root) {
  return ReadTrimmed(procfs_root / "sys/kernel/random/boot_id", 128).value_or("");
}

std::string CheckpointJson(const std::vector<inject::ClaimPlan>& claims, const std::string& boot_id) {
  std::vector<std::string> texts;
  for (const auto& plan : claims) texts.push_back(PlanToJson(plan));
  return CheckpointJsonOf(std::vector<std::string_view>(texts.begin(), texts.end()), boot_id);
}

std::string CheckpointJsonOf(const std::vector<std::string_view>& claim_texts, const std::string& boot_id) {
  // Written as rapidjson's compact writer would, the claims (the bulk of the
  // file) copied once: "[" + texts joined by "," + "]" is PlansToJson.
  std::vector<std::string_view> array;
  array.reserve(2 * claim_texts.size() + 1);
  std::size_t array_size = 2;
  for (std::size_t i = 0; i < claim_texts.size(); ++i) {
    array.push_back(i == 0 ? "[" : ",");
    array.push_back(claim_texts[i]);
    array_size += claim_texts[i].size() + (i == 0 ? 0 : 1);
  }
  array.push_back(claim_texts.empty() ? "[]" : "]");
  const std::string version = std::to_string(kCheckpointVersion);
  const std::string boot = JsonString(boot_id);
  const std::string checksum = ChecksumOf(boot_id, array);
  std::string out;
  out.reserve(array_size + boot.size() + checksum.size() + 64);
  out.append(R"({"kind":")").append(kKind).append(R"(","version":)").append(version);
  out.append(R"(,"bootId":)").append(boot).append(R"(,"checksum":")").append(checksum);
  out.append(R"(","claims":)");
  for (std::string_view piece : array) out.append(piece);
  out.append("}");
  return out;
}

CheckpointStore::CheckpointStore(CheckpointOptions options, Logger& log)
    : options_(std::move(options)), log_(log), path_(options_.state_dir / options_.file_name) {
  std::error_code ec;
  std::filesystem::create_directories(options_.state_dir, ec);
  if (ec)
    throw std::system_error(ec, "cannot create state directory " + options_.state_dir.string() +
                                    " (check --state-dir and its permissions)");
  boot_id_ = ReadBootId(options_.procfs_root);
  if (boot_id_.empty())
    log_.Warning("boot id unreadable; state is not tied to a boot",
                 {{"file", (options_.procfs_root / "sys/kernel/random/boot_id").string()}});
  Load();
}

void CheckpointStore::Discard(const std::string& problem) {
  load_outcome_ = LoadOutcome::kCorrupt;
  auto aside = path_;
  aside += ".corrupt";
  std::error_code ec;
  std::filesystem::rename(path_, aside, ec);
  const std::string message = "checkpoint " + path_.string() + " discarded: " + problem +
                              "; starting with no prepared claims (kubelet prepares them again)" +
                              (ec ? std::string() : "; the bad file is kept as " + aside.string());
  log_.Error("state checkpoint corrupt", {{"file", path_.string()},
                                          {"problem", problem},
                                          {"kept_as", ec ? std::string() : aside.string()}});
  if (options_.on_corrupt) {
    try {
      options_.on_corrupt(message);
    } catch (const std::exception& e) {
      log_.Warning("corrupt-state hook failed", {{"error", e.what()}});
    }
  }
}

void CheckpointStore::Load() {
  auto tmp = path_;
  tmp += ".tmp";
  std::error_code ec;
  if (std::filesystem::remove(tmp, ec))
    log_.Info("removed unfinished checkpoint write", {{"file", tmp.string()}});
  if (!std::filesystem::exists(path_, ec)) {
    load_outcome_ = LoadOutcome::kNoFile;
    log_.Info("no state checkpoint; starting empty", {{"file", path_.string()}});
    return;
  }
  auto content = ReadFileCapped(path_, kMaxCheckpointBytes + 1);
  if (!content) return Discard("cannot be read");
  if (content->size() > kMaxCheckpointBytes) return Discard("larger than 64 MiB");
  rapidjson::Document doc;
  if (!ParseJson(doc, *content).empty() || !doc.IsObject())
    return Discard("not a JSON object (torn or overwritten)");
  auto str = [&](const char* key) -> std::string {
    auto it = doc.FindMember(key);
    return it != doc.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
  };
  if (str("kind") != kKind) return Discard("kind is not " + std::string(kKind));
  auto version = doc.FindMember("version");
  if (version == doc.MemberEnd() || !version->value.IsInt())
    return Discard("version missing");
  if (version->value.GetInt() != kCheckpointVersion)
    return Discard("version " + std::to_string(version->value.GetInt()) + " is not supported (this build reads " +
                   std::to_string(kCheckpointVersion) + ")");
  auto claims = doc.FindMember("claims");
  if (claims == doc.MemberEnd() || !claims->value.IsArray()) return Discard("claims missing");
  const std::string file_boot = str("bootId");
  if (str("checksum") != ChecksumOf(file_boot, {Compact(claims->value)}))
    return Discard("checksum mismatch");
  std::vector<inject::ClaimPlan> plans;
  try {
    plans = PlansFromJson(claims->value);
  } catch (const std::exception& e) {
    return Discard(e.what());
  }
  if (!boot_id_.empty() && file_boot != boot_id_) {
    load_outcome_ = LoadOutcome::kEarlierBoot;
    log_.Info("state checkpoint is from an earlier boot; dropped",
              {{"file", path_.string()}, {"file_boot_id", file_boot}, {"boot_id", boot_id_},
               {"claims", plans.size()}});
    std::filesystem::remove(path_, ec);
    return;
  }
  for (auto& plan : plans) {
    std::string uid = plan.claim_uid;
    claim_json_.insert_or_assign(uid, PlanToJson(plan));
    claims_.insert_or_assign(std::move(uid), std::move(plan));
  }
  load_outcome_ = LoadOutcome::kLoaded;
  log_.Info("state checkpoint loaded", {{"file", path_.string()}, {"claims", claims_.size()}});
}

void CheckpointStore::Write() {
  std::vector<std::string_view> texts;
  texts.reserve(claim_json_.size());
  for (const auto& [uid, json] : claim_json_) texts.push_back(json);
  const std::string content = CheckpointJsonOf(texts, boot_id_);
  if (options_.before_write) options_.before_write();
  // The kill -9 points sit inside the real write, so a write that was not
  // atomic would leave a torn checkpoint behind for the fault tests to find.
  WriteFileAtomic(path_, content, [](AtomicWriteStep step) {
    if (step == AtomicWriteStep::kHalfWritten) DRANET_FAULT_POINT("state-write-torn");
    if (step == AtomicWriteStep::kBeforeRename) DRANET_FAULT_POINT("state-before-rename");
  });
  DRANET_FAULT_POINT("state-after-rename");
}

// Group commit: a caller queues its mutation; whoever finds no write in
// progress becomes the writer, takes every queued mutation (its own and
// those that arrived while the previous write ran), applies them in arrival
// order to a copy, writes that once and publishes it. Each caller returns
// when the write holding its mutation is durable, or throws that write's
// error with the store unchanged by its batch.
void CheckpointStore::Commit(Mutation& mine) {
  std::unique_lock lock(mu_);
  queue_.push_back(&mine);
  while (!mine.done) {
    if (writing_) {
      written_.wait(lock);
      continue;
    }
    writing_ = true;
    std::vector<Mutation*> batch(queue_.begin(), queue_.end());
    queue_.clear();
    // The batch applied to the claims' texts in place, with what each change
    // replaced so that a failed write can be undone; the plans themselves
    // change only once the file holds them.
    std::vector<std::pair<std::string, std::optional<std::string>>> undo;  // claim UID, text before
    for (Mutation* m : batch) {
      for (std::size_t i = 0; i < m->put.size(); ++i) {
        const std::string& uid = m->put[i].claim_uid;
        auto it = claim_json_.find(uid);
        if (it == claim_json_.end()) {
          undo.emplace_back(uid, std::nullopt);
          claim_json_.emplace(uid, std::move(m->put_json[i]));
        } else {
          undo.emplace_back(uid, std::exchange(it->second, std::move(m->put_json[i])));
        }
      }
      for (const auto& uid : m->remove) {
        auto it = claim_json_.find(uid);
        if (it == claim_json_.end()) continue;
        undo.emplace_back(uid, std::move(it->second));
        claim_json_.erase(it);
      }
    }
    std::exception_ptr error;
    if (!undo.empty()) {
      lock.unlock();  // readers and new callers go on while the file is written
      try {
        Write();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error) {
        for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
          if (it->second) claim_json_.insert_or_assign(it->first, std::move(*it->second));
          else claim_json_.erase(it->first);
        }
      } else {
        for (const Mutation* m : batch) {
          for (const auto& plan : m->put) claims_.insert_or_assign(plan.claim_uid, plan);
          for (const auto& uid : m->remove) claims_.erase(uid);
        }
        ++writes_;
        batched_mutations_ += batch.size();
      }
    }
    for (Mutation* m : batch) {
      m->done = true;
      m->error = error;
    }
    writing_ = false;
    written_.notify_all();
  }
  if (mine.error) std::rethrow_exception(mine.error);
}

void CheckpointStore::Put(const std::vector<inject::ClaimPlan>& plans) {
  if (plans.empty()) return;
  Mutation m;
  m.put = plans;
  m.put_json.reserve(plans.size());
  for (const auto& plan : plans) m.put_json.push_back(PlanToJson(plan));  // by the caller, not the writer
  Commit(m);
}

void CheckpointStore::Remove(const std::vector<std::string>& claim_uids) {
  if (claim_uids.empty()) return;
  Mutation m;
  m.remove = claim_uids;
  Commit(m);
}

std::optional<inject::ClaimPlan> CheckpointStore::Get(const std::string& claim_uid) const {
  std::lock_guard lock(mu_);
  auto it = claims_.find(claim_uid);
  if (it == claims_.end()) return std::nullopt;
  return it->second;
}

std::vector<inject::ClaimPlan> CheckpointStore::ForPod(const std::string& pod_uid) const {
  std::lock_guard lock(mu_);
  std::vector<inject::ClaimPlan> out;
  for (const auto& [uid, plan] : claims_)
    for (const auto& pod : plan.pod_uids)
      if (pod == pod_uid) {
        out.push_back(plan);
        break;
      }
  return out;
}

std::vector<inject::ClaimPlan> CheckpointStore::All() const {
  std::lock_guard lock(mu_);
  std::vector<inject::ClaimPlan> out;
  out.reserve(claims_.size());
  for (const auto& [uid, plan] : claims_) out.push_back(plan);
  return out;
}

uint64_t CheckpointStore::writes() const {
  std::lock_guard lock(mu_);
  return writes_;
}

std::size_t CheckpointStore::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

uint64_t CheckpointStore::committed_mutations() const {
  std::lock_guard lock(mu_);
  return batched_mutations_;
}

}  // namespace dranet::state
