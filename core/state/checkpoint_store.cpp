#include "state/checkpoint_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
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
constexpr const char* kLockFileName = "claims.lock";
constexpr const char* kGenerationFileName = "claims.generation";

// flock() held for a scope; a no-op on an invalid fd.
class FileLock {
 public:
  FileLock(const UniqueFd& fd, int operation) : fd_(fd.get()) {
    if (fd_ < 0) return;
    while (::flock(fd_, operation) != 0) {
      if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "flock state lock");
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::flock(fd_, LOCK_UN);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};
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

std::filesystem::path CheckpointStore::ClaimFile(const std::string& claim_uid) const {
  // Kubernetes UIDs are plain names; anything else is spelled in hex so that
  // no UID can name another directory or a hidden file.
  constexpr std::size_t kMaxStem = 200;  // with ".json.corrupt", under NAME_MAX
  auto plain_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  };
  const bool plain = !claim_uid.empty() && plain_char(claim_uid[0]) && claim_uid[0] != '.' &&
                     std::all_of(claim_uid.begin(), claim_uid.end(), plain_char);
  std::string stem;
  if (plain) {
    stem = claim_uid;
  } else {
    static constexpr char kHex[] = "0123456789abcdef";
    stem = "~";
    for (unsigned char c : claim_uid) {
      stem += kHex[c >> 4];
      stem += kHex[c & 15];
    }
  }
  if (stem.size() > kMaxStem)
    throw std::system_error(ENAMETOOLONG, std::generic_category(),
                            "claim UID of " + std::to_string(claim_uid.size()) +
                                " bytes is too long to name its checkpoint file");
  return claims_dir_ / (stem + ".json");
}

CheckpointStore::CheckpointStore(CheckpointOptions options, Logger& log)
    : options_(std::move(options)), log_(log), claims_dir_(options_.state_dir / options_.claims_dir_name) {
  std::error_code ec;
  std::filesystem::create_directories(claims_dir_, ec);
  if (ec)
    throw std::system_error(ec, "cannot create state directory " + claims_dir_.string() +
                                    " (check --state-dir and its permissions)");
  boot_id_ = ReadBootId(options_.procfs_root);
  if (boot_id_.empty())
    log_.Warning("boot id unreadable; state is not tied to a boot",
                 {{"file", (options_.procfs_root / "sys/kernel/random/boot_id").string()}});
  OpenShared();
  FileLock exclusive(lock_fd_, LOCK_EX);
  seen_generation_ = Generation();
  Load();
}

CheckpointStore::~CheckpointStore() {
  if (generation_ != nullptr) ::munmap(generation_, sizeof(std::uint64_t));
}

void CheckpointStore::OpenShared() {
  const auto lock_path = options_.state_dir / kLockFileName;
  lock_fd_.Reset(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!lock_fd_.valid())
    throw std::system_error(errno, std::generic_category(), "cannot open " + lock_path.string());
  const auto counter_path = options_.state_dir / kGenerationFileName;
  UniqueFd counter(::open(counter_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!counter.valid())
    throw std::system_error(errno, std::generic_category(), "cannot open " + counter_path.string());
  {
    // Grown to its 8 bytes once, by whoever comes first (zeros: counter 0).
    FileLock exclusive(lock_fd_, LOCK_EX);
    struct stat st{};
    if (::fstat(counter.get(), &st) != 0 ||
        (st.st_size < static_cast<off_t>(sizeof(std::uint64_t)) && ::ftruncate(counter.get(), sizeof(std::uint64_t)) != 0))
      throw std::system_error(errno, std::generic_category(), "cannot size " + counter_path.string());
  }
  void* mapped = ::mmap(nullptr, sizeof(std::uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, counter.get(), 0);
  if (mapped == MAP_FAILED)
    throw std::system_error(errno, std::generic_category(), "cannot map " + counter_path.string());
  generation_ = static_cast<std::uint64_t*>(mapped);
}

uint64_t CheckpointStore::Generation() const {
  return std::atomic_ref<std::uint64_t>(*generation_).load(std::memory_order_acquire);
}

uint64_t CheckpointStore::BumpGeneration() {
  return std::atomic_ref<std::uint64_t>(*generation_).fetch_add(1, std::memory_order_acq_rel);
}

void CheckpointStore::RefreshLocked(std::unique_lock<std::mutex>& lock) {
  if (Generation() == seen_generation_) return;
  // This instance's own write changes claim_json_ without mu_: not during one.
  written_.wait(lock, [&] { return !writing_; });
  if (Generation() == seen_generation_) return;
  FileLock shared(lock_fd_, LOCK_SH);  // no instance writes while the files are read
  const uint64_t generation = Generation();
  std::map<std::string, inject::ClaimPlan> claims;
  std::map<std::string, std::string> texts;
  std::map<std::filesystem::path, std::pair<ino_t, std::string>> parsed;
  std::size_t reparsed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(claims_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& file = it->path();
    struct stat st{};
    if (file.extension() != ".json" || ::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (auto known = parsed_.find(file); known != parsed_.end() && known->second.first == st.st_ino) {
      const std::string& uid = known->second.second;
      auto plan = claims_.find(uid);
      auto text = claim_json_.find(uid);
      if (plan != claims_.end() && text != claim_json_.end()) {
        claims.emplace(uid, plan->second);
        texts.emplace(uid, text->second);
        parsed.emplace(file, known->second);
        continue;
      }
    }
    ++reparsed;
    auto content = LoadFile(file);
    if (!content || content->plans.size() != 1 || content->boot_id != boot_id_ ||
        ClaimFileIfAny(content->plans[0].claim_uid) != file)
      continue;  // set aside by LoadFile, or not a claim of this boot: Load's rules at the next start
    auto& plan = content->plans[0];
    parsed.emplace(file, std::pair{st.st_ino, plan.claim_uid});
    texts.emplace(plan.claim_uid, PlanToJson(plan));
    claims.emplace(plan.claim_uid, std::move(plan));
  }
  // A claim whose file this instance's failed write may have left changed
  // stays as this instance holds it: its next write puts the file right.
  for (const auto& uid : unsynced_) {
    claims.erase(uid);
    texts.erase(uid);
    if (auto plan = claims_.find(uid); plan != claims_.end()) claims.emplace(uid, plan->second);
    if (auto text = claim_json_.find(uid); text != claim_json_.end()) texts.emplace(uid, text->second);
  }
  log_.Verbose(1, "claims written by another instance; rescanned",
               {{"claims", claims.size()}, {"reparsed", reparsed}, {"before", claims_.size()}});
  claims_.swap(claims);
  claim_json_.swap(texts);
  parsed_.swap(parsed);
  seen_generation_ = generation;
  ++rescans_;
}

void CheckpointStore::Discard(const std::filesystem::path& file, const std::string& problem) {
  found_corrupt_ = true;
  auto aside = file;
  aside += ".corrupt";
  std::error_code ec;
  std::filesystem::rename(file, aside, ec);
  const std::string message = "checkpoint " + file.string() + " discarded: " + problem +
                              "; starting without its claims (kubelet prepares them again)" +
                              (ec ? std::string() : "; the bad file is kept as " + aside.string());
  log_.Error("state checkpoint corrupt", {{"file", file.string()},
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

std::optional<CheckpointStore::FileContent> CheckpointStore::LoadFile(const std::filesystem::path& file) {
  auto corrupt = [&](const std::string& problem) -> std::optional<FileContent> {
    Discard(file, problem);
    return std::nullopt;
  };
  auto content = ReadFileCapped(file, kMaxCheckpointBytes + 1);
  if (!content) return corrupt("cannot be read");
  if (content->size() > kMaxCheckpointBytes) return corrupt("larger than 64 MiB");
  rapidjson::Document doc;
  if (!ParseJson(doc, *content).empty() || !doc.IsObject())
    return corrupt("not a JSON object (torn or overwritten)");
  auto str = [&](const char* key) -> std::string {
    auto it = doc.FindMember(key);
    return it != doc.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
  };
  if (str("kind") != kKind) return corrupt("kind is not " + std::string(kKind));
  auto version = doc.FindMember("version");
  if (version == doc.MemberEnd() || !version->value.IsInt()) return corrupt("version missing");
  if (version->value.GetInt() != kCheckpointVersion)
    return corrupt("version " + std::to_string(version->value.GetInt()) + " is not supported (this build reads " +
                   std::to_string(kCheckpointVersion) + ")");
  auto claims = doc.FindMember("claims");
  if (claims == doc.MemberEnd() || !claims->value.IsArray()) return corrupt("claims missing");
  FileContent out;
  out.boot_id = str("bootId");
  if (str("checksum") != ChecksumOf(out.boot_id, {Compact(claims->value)})) return corrupt("checksum mismatch");
  try {
    out.plans = PlansFromJson(claims->value);
  } catch (const std::exception& e) {
    return corrupt(e.what());
  }
  return out;
}

bool CheckpointStore::Adopt(FileContent content) {
  if (!boot_id_.empty() && content.boot_id != boot_id_) {
    ++earlier_boot_files_;
    earlier_boot_claims_ += content.plans.size();
    return false;
  }
  for (auto& plan : content.plans) {
    if (claims_.count(plan.claim_uid)) continue;  // a claim file is never older than the single file
    std::string uid = plan.claim_uid;
    claim_json_.emplace(uid, PlanToJson(plan));
    claims_.emplace(std::move(uid), std::move(plan));
  }
  return true;
}

std::optional<std::filesystem::path> CheckpointStore::ClaimFileIfAny(const std::string& claim_uid) const {
  try {
    return ClaimFile(claim_uid);
  } catch (const std::system_error&) {
    return std::nullopt;  // a UID too long for any file name
  }
}

void CheckpointStore::Load() {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(claims_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& file = it->path();
    if (file.extension() == ".tmp") {
      std::error_code removed;
      if (std::filesystem::remove(file, removed))
        log_.Info("removed unfinished checkpoint write", {{"file", file.string()}});
    } else if (file.extension() == ".json") {
      files.push_back(file);  // .corrupt files stay for a post-mortem
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    auto content = LoadFile(file);
    if (!content) continue;
    if (content->plans.size() != 1 || ClaimFileIfAny(content->plans[0].claim_uid) != file) {
      Discard(file, content->plans.size() == 1
                        ? "holds claim " + content->plans[0].claim_uid + ", which is not the claim its name says"
                        : "holds " + std::to_string(content->plans.size()) + " claims, not one");
      continue;
    }
    if (!Adopt(std::move(*content))) std::filesystem::remove(file, ec);
  }
  LoadLegacyFile();

  if (found_corrupt_) load_outcome_ = LoadOutcome::kCorrupt;
  else if (!claims_.empty()) load_outcome_ = LoadOutcome::kLoaded;
  else if (earlier_boot_files_ > 0) load_outcome_ = LoadOutcome::kEarlierBoot;
  else load_outcome_ = LoadOutcome::kNoFile;
  if (earlier_boot_files_ > 0)
    log_.Info("state checkpoint is from an earlier boot; dropped",
              {{"dir", claims_dir_.string()}, {"files", earlier_boot_files_}, {"claims", earlier_boot_claims_},
               {"boot_id", boot_id_}});
  if (files.empty() && !legacy_pending_ && load_outcome_ == LoadOutcome::kNoFile)
    log_.Info("no state checkpoint; starting empty", {{"dir", claims_dir_.string()}});
  else
    log_.Info("state checkpoint loaded", {{"dir", claims_dir_.string()}, {"claims", claims_.size()}});
}

void CheckpointStore::LoadLegacyFile() {
  const auto legacy = options_.state_dir / options_.legacy_file_name;
  auto tmp = legacy;
  tmp += ".tmp";
  std::error_code ec;
  if (std::filesystem::remove(tmp, ec)) log_.Info("removed unfinished checkpoint write", {{"file", tmp.string()}});
  if (!std::filesystem::exists(legacy, ec)) return;
  auto content = LoadFile(legacy);
  if (!content) return;
  // A claim whose UID cannot name a file cannot be kept (nor prepared by
  // this version).
  std::erase_if(content->plans, [&](const inject::ClaimPlan& plan) {
    if (ClaimFileIfAny(plan.claim_uid)) return false;
    log_.Error("claim of the single-file checkpoint dropped: its UID is too long to name a claim file",
               {{"file", legacy.string()}, {"claim", plan.claim_namespace + "/" + plan.claim_name}});
    return true;
  });
  std::set<std::string> uids;
  for (const auto& plan : content->plans) uids.insert(plan.claim_uid);
  const auto known_before = claims_.size();
  if (!Adopt(std::move(*content))) {
    std::filesystem::remove(legacy, ec);
    return;
  }
  // Converted: each claim to its file, then the single file removed. Until
  // that is done the single file stays (claim files win over it at load).
  legacy_pending_ = true;
  try {
    Write(uids);
    log_.Info("single-file checkpoint converted to claim files",
              {{"file", legacy.string()}, {"dir", claims_dir_.string()}, {"claims", claims_.size() - known_before}});
  } catch (const std::exception& e) {
    unsynced_.insert(uids.begin(), uids.end());
    log_.Error("single-file checkpoint not converted; kept until the next checkpoint write",
               {{"file", legacy.string()}, {"error", e.what()}});
  }
}

void CheckpointStore::Write(const std::set<std::string>& claim_uids) {
  if (options_.before_write) options_.before_write();
  struct Change {
    std::filesystem::path file;
    std::filesystem::path tmp;  // empty: the claim is gone, its file removed
  };
  std::vector<Change> changes;
  changes.reserve(claim_uids.size());
  bool wrote_one = false;
  try {
    for (const auto& uid : claim_uids) {
      Change change{ClaimFile(uid), {}};
      if (auto it = claim_json_.find(uid); it != claim_json_.end()) {
        change.tmp = change.file;
        change.tmp += ".tmp";
        // The kill -9 points sit inside the real write, so a write that was
        // not atomic would leave a torn claim file for the fault tests to find.
        WriteFileSynced(change.tmp, CheckpointJsonOf({it->second}, boot_id_), [first = !wrote_one] {
          if (first) DRANET_FAULT_POINT("state-write-torn");
        });
        wrote_one = true;
      }
      changes.push_back(std::move(change));
    }
  } catch (...) {
    for (const auto& c : changes)
      if (!c.tmp.empty()) ::unlink(c.tmp.c_str());
    throw;
  }
  DRANET_FAULT_POINT("state-before-rename");
  for (auto c = changes.begin(); c != changes.end(); ++c) {
    const bool failed = c->tmp.empty() ? ::unlink(c->file.c_str()) != 0 && errno != ENOENT
                                       : ::rename(c->tmp.c_str(), c->file.c_str()) != 0;
    if (!failed) continue;
    const int error = errno;
    for (auto rest = c; rest != changes.end(); ++rest)
      if (!rest->tmp.empty()) ::unlink(rest->tmp.c_str());
    throw std::system_error(error, std::generic_category(),
                            (c->tmp.empty() ? "remove " : "rename to ") + c->file.string());
  }
  SyncDirectory(claims_dir_);
  DRANET_FAULT_POINT("state-after-rename");
  if (legacy_pending_) {
    const auto legacy = options_.state_dir / options_.legacy_file_name;
    std::error_code ec;
    std::filesystem::remove(legacy, ec);
    if (!ec) {
      try {
        SyncDirectory(options_.state_dir);
        legacy_pending_ = false;
      } catch (const std::system_error& e) {
        ec = e.code();
      }
    }
    if (ec) log_.Warning("single-file checkpoint not removed", {{"file", legacy.string()}, {"error", ec.message()}});
  }
}

// Group commit: a caller queues its mutation; whoever finds no write in
// progress becomes the writer, takes every queued mutation (its own and
// those that arrived while the previous write ran), applies them in arrival
// order to the claims' texts, writes the files of the claims they touch once
// and publishes them. Each caller returns when the write holding its
// mutation is durable, or throws that write's error with the store
// unchanged by its batch.
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
    std::set<std::string> touched = unsynced_;
    for (const auto& [uid, before] : undo) touched.insert(uid);
    std::exception_ptr error;
    if (!touched.empty()) {
      lock.unlock();  // readers and new callers go on while the files are written
      uint64_t before = 0;
      try {
        FileLock exclusive(lock_fd_, LOCK_EX);
        Write(touched);
        // Only a write that succeeded is announced: what a failed one left
        // is mended by this instance's next write, which is.
        before = BumpGeneration();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      // Only this write since the last look: the files are what this
      // instance holds. Otherwise the next read rescans.
      if (!error && before == seen_generation_) seen_generation_ = before + 1;
      if (error) {
        for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
          if (it->second) claim_json_.insert_or_assign(it->first, std::move(*it->second));
          else claim_json_.erase(it->first);
        }
        unsynced_ = std::move(touched);  // some of their files may hold the failed batch
      } else {
        unsynced_.clear();
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
  for (const auto& plan : plans) ClaimFile(plan.claim_uid);  // a UID that cannot name a file fails here, alone
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

std::unique_lock<std::mutex> CheckpointStore::ReadLock() const {
  std::unique_lock lock(mu_);
  // Reading follows the files: the cache is made equal to them first.
  const_cast<CheckpointStore*>(this)->RefreshLocked(lock);
  return lock;
}

std::optional<inject::ClaimPlan> CheckpointStore::Get(const std::string& claim_uid) const {
  auto lock = ReadLock();
  auto it = claims_.find(claim_uid);
  if (it == claims_.end()) return std::nullopt;
  return it->second;
}

std::vector<inject::ClaimPlan> CheckpointStore::ForPod(const std::string& pod_uid) const {
  auto lock = ReadLock();
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
  auto lock = ReadLock();
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

uint64_t CheckpointStore::rescans() const {
  std::lock_guard lock(mu_);
  return rescans_;
}

uint64_t CheckpointStore::committed_mutations() const {
  std::lock_guard lock(mu_);
  return batched_mutations_;
}

}  // namespace dranet::state
