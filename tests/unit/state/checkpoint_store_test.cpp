#include "state/checkpoint_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <memory>
#include <sstream>
#include <system_error>
#include <thread>

#include "state_test_support.h"

namespace dranet::state {
namespace {

using testing::ReadFile;
using testing::SamplePlan;
using testing::TempDir;
using testing::WriteFile;

class CheckpointStoreTest : public ::testing::Test {
 protected:
  CheckpointStoreTest() : log_(log_text_) { SetBootId("boot-1"); }

  void SetBootId(const std::string& id) {
    WriteFile(dir_.path() / "proc/sys/kernel/random/boot_id", id + "\n");
  }

  CheckpointOptions Options() {
    CheckpointOptions o;
    o.state_dir = dir_.path() / "state";
    o.procfs_root = dir_.path() / "proc";
    o.on_corrupt = [this](const std::string& message) { corrupt_messages_.push_back(message); };
    return o;
  }

  std::filesystem::path ClaimFile(const std::string& uid) { return dir_.path() / ("state/claims/" + uid + ".json"); }
  std::filesystem::path LegacyFile() { return dir_.path() / "state/prepared-claims.json"; }
  static std::filesystem::path Aside(std::filesystem::path file) { return file += ".corrupt"; }
  static std::filesystem::path Temp(std::filesystem::path file) { return file += ".tmp"; }
  // The names in the claims directory, sorted.
  std::vector<std::string> ClaimDirectory() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path() / "state/claims"))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  TempDir dir_;
  std::ostringstream log_text_;
  Logger log_;
  std::vector<std::string> corrupt_messages_;
};

TEST_F(CheckpointStoreTest, StartsEmptyWithoutFile) {
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kNoFile);
  EXPECT_TRUE(store.All().empty());
  EXPECT_TRUE(ClaimDirectory().empty());
  EXPECT_FALSE(std::filesystem::exists(LegacyFile()));
  EXPECT_NE(log_text_.str().find("no state checkpoint"), std::string::npos);
}

TEST_F(CheckpointStoreTest, PutIsDurableAndReloads) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a"), SamplePlan("b", "pod-2")});
    EXPECT_EQ(store.writes(), 1U);  // one write for the whole call
  }
  EXPECT_EQ(ClaimDirectory(), (std::vector<std::string>{"a.json", "b.json"}));
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.load_outcome(), LoadOutcome::kLoaded);
  ASSERT_EQ(reopened.All().size(), 2U);
  EXPECT_EQ(*reopened.Get("a"), SamplePlan("a"));
  EXPECT_EQ(*reopened.Get("b"), SamplePlan("b", "pod-2"));
  // Each file is the checkpoint document of its one claim.
  EXPECT_EQ(ReadFile(ClaimFile("a")), CheckpointJson({SamplePlan("a")}, "boot-1"));
  const std::string text = ReadFile(ClaimFile("b"));
  EXPECT_EQ(text.rfind(R"({"kind":"DranetCheckpoint","version":1,"bootId":"boot-1","checksum":"crc32:)", 0), 0U)
      << text;
  EXPECT_NE(text.find(R"("claimUID":"b")"), std::string::npos);
  EXPECT_EQ(text.find(R"("claimUID":"a")"), std::string::npos);
}

// The cost of a write does not grow with the claims the node holds: files of
// claims a mutation does not change are not rewritten.
TEST_F(CheckpointStoreTest, AWriteTouchesOnlyTheClaimsItChanges) {
  CheckpointStore store(Options(), log_);
  std::vector<inject::ClaimPlan> many;
  for (int i = 0; i < 40; ++i) many.push_back(SamplePlan("held-" + std::to_string(i)));
  store.Put(many);
  auto identity = [&](const std::string& uid) {
    struct stat st {};
    EXPECT_EQ(::stat(ClaimFile(uid).c_str(), &st), 0) << uid;
    return std::make_pair(st.st_ino, st.st_mtim.tv_nsec + st.st_mtim.tv_sec * 1000000000LL);
  };
  std::vector<std::pair<ino_t, long long>> before;
  for (const auto& plan : many) before.push_back(identity(plan.claim_uid));
  const auto a_before = identity("held-7");
  store.Put({SamplePlan("new")});
  auto changed = SamplePlan("held-7");
  changed.pod_uids = {"pod-9"};
  store.Put({changed});
  store.Remove({"held-3"});
  EXPECT_FALSE(std::filesystem::exists(ClaimFile("held-3")));
  EXPECT_NE(identity("held-7"), a_before) << "the changed claim's file is replaced";
  for (std::size_t i = 0; i < many.size(); ++i) {
    if (i == 3 || i == 7) continue;
    EXPECT_EQ(identity(many[i].claim_uid), before[i]) << many[i].claim_uid << " was rewritten";
  }
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.All().size(), 40U);
  EXPECT_EQ(reopened.Get("held-7")->pod_uids, std::vector<std::string>{"pod-9"});
}

TEST_F(CheckpointStoreTest, RemoveIsIdempotentAndSkipsNoOpWrites) {
  CheckpointStore store(Options(), log_);
  store.Put({SamplePlan("a"), SamplePlan("b")});
  store.Remove({"a", "not-there"});
  EXPECT_EQ(store.writes(), 2U);
  store.Remove({"a", "not-there"});
  EXPECT_EQ(store.writes(), 2U);  // nothing changed, nothing written
  EXPECT_FALSE(store.Get("a"));
  EXPECT_EQ(ClaimDirectory(), std::vector<std::string>{"b.json"});
  CheckpointStore reopened(Options(), log_);
  EXPECT_FALSE(reopened.Get("a"));
  EXPECT_TRUE(reopened.Get("b"));
}

TEST_F(CheckpointStoreTest, ForPodFindsSharedClaims) {
  CheckpointStore store(Options(), log_);
  auto shared = SamplePlan("shared");
  shared.pod_uids = {"pod-1", "pod-2"};
  store.Put({shared, SamplePlan("own", "pod-2"), SamplePlan("other", "pod-3")});
  auto for_pod2 = store.ForPod("pod-2");
  ASSERT_EQ(for_pod2.size(), 2U);
  EXPECT_EQ(store.ForPod("pod-1").size(), 1U);
  EXPECT_TRUE(store.ForPod("pod-9").empty());
}

// A UID is data from the API server: whatever it holds, its file stays a
// plain name inside the claims directory.
TEST_F(CheckpointStoreTest, UidsThatAreNotPlainNamesAreSpelledInHex) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("../../escape"), SamplePlan(".hidden"), SamplePlan("a/b")});
    EXPECT_THROW(store.Put({SamplePlan(std::string(201, 'x')), SamplePlan("fine")}), std::system_error)
        << "a UID too long for a file name fails its call";
    EXPECT_FALSE(store.Get("fine"));
  }
  EXPECT_EQ(ClaimDirectory(), (std::vector<std::string>{"~2e2e2f2e2e2f657363617065.json", "~2e68696464656e.json",
                                                        "~612f62.json"}));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "escape.json"));
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.load_outcome(), LoadOutcome::kLoaded);
  EXPECT_TRUE(reopened.Get("../../escape"));
  EXPECT_TRUE(reopened.Get(".hidden"));
  EXPECT_TRUE(reopened.Get("a/b"));
}

TEST_F(CheckpointStoreTest, GarbageFileIsSetAsideAndReportedAndTheOthersLoad) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a"), SamplePlan("b")});
  }
  WriteFile(ClaimFile("a"), "this is not json");
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt);
  EXPECT_FALSE(store.Get("a"));
  EXPECT_TRUE(store.Get("b")) << "one bad file costs only its own claim";
  ASSERT_EQ(corrupt_messages_.size(), 1U);
  EXPECT_NE(corrupt_messages_[0].find(ClaimFile("a").string()), std::string::npos);
  EXPECT_EQ(ReadFile(Aside(ClaimFile("a"))), "this is not json");
  EXPECT_NE(log_text_.str().find("state checkpoint corrupt"), std::string::npos);
  // A clean start that works: the next write and reload succeed.
  store.Put({SamplePlan("a")});
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.load_outcome(), LoadOutcome::kLoaded);
  EXPECT_TRUE(reopened.Get("a"));
  EXPECT_TRUE(reopened.Get("b"));
}

TEST_F(CheckpointStoreTest, TruncatedFileAtEveryLengthNeverLoadsPartialState) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a"), SamplePlan("b")});
  }
  const std::string full = ReadFile(ClaimFile("a"));
  ASSERT_GT(full.size(), 500U);
  for (std::size_t cut = 0; cut < full.size(); cut += 7) {
    WriteFile(ClaimFile("a"), full.substr(0, cut));
    corrupt_messages_.clear();
    CheckpointStore store(Options(), log_);
    EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt) << "cut at " << cut;
    EXPECT_FALSE(store.Get("a")) << "cut at " << cut;
    EXPECT_TRUE(store.Get("b")) << "cut at " << cut;
    EXPECT_EQ(corrupt_messages_.size(), 1U);
  }
}

TEST_F(CheckpointStoreTest, ChecksumCatchesValidJsonWithChangedContent) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a")});
  }
  std::string text = ReadFile(ClaimFile("a"));
  auto at = text.find("claim-a");
  ASSERT_NE(at, std::string::npos);
  text[at + 6] = 'z';  // still valid JSON, different claim name
  WriteFile(ClaimFile("a"), text);
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt);
  ASSERT_EQ(corrupt_messages_.size(), 1U);
  EXPECT_NE(corrupt_messages_[0].find("checksum"), std::string::npos);
}

TEST_F(CheckpointStoreTest, AClaimFileUnderAnotherClaimsNameIsCorrupt) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a")});
  }
  std::filesystem::copy_file(ClaimFile("a"), ClaimFile("b"));
  WriteFile(ClaimFile("two"), CheckpointJson({SamplePlan("x"), SamplePlan("y")}, "boot-1"));
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt);
  EXPECT_EQ(store.All().size(), 1U);
  EXPECT_TRUE(store.Get("a"));
  ASSERT_EQ(corrupt_messages_.size(), 2U);
  EXPECT_NE(corrupt_messages_[0].find("not the claim its name says"), std::string::npos) << corrupt_messages_[0];
  EXPECT_NE(corrupt_messages_[1].find("2 claims, not one"), std::string::npos) << corrupt_messages_[1];
  EXPECT_TRUE(std::filesystem::exists(Aside(ClaimFile("b"))));
}

TEST_F(CheckpointStoreTest, UnknownVersionIsDiscarded) {
  std::string text = CheckpointJson({SamplePlan("a")}, "boot-1");
  text.replace(text.find("\"version\":1"), 11, "\"version\":9");
  WriteFile(ClaimFile("a"), text);
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt);
  EXPECT_NE(corrupt_messages_.at(0).find("version 9"), std::string::npos);
}

TEST_F(CheckpointStoreTest, StateOfAnEarlierBootIsDropped) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a"), SamplePlan("b")});
  }
  SetBootId("boot-2");
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kEarlierBoot);
  EXPECT_TRUE(store.All().empty());
  EXPECT_TRUE(corrupt_messages_.empty());  // not corruption: no Event
  EXPECT_TRUE(ClaimDirectory().empty());
  EXPECT_NE(log_text_.str().find("earlier boot"), std::string::npos);
}

TEST_F(CheckpointStoreTest, LeftoverTempFilesAreIgnoredAndRemoved) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a")});
  }
  WriteFile(Temp(ClaimFile("b")), "{\"kind\":\"Dranet");  // a write that was cut off by a crash
  WriteFile(Temp(LegacyFile()), "{\"kind\":\"Dranet");  // one of an earlier version
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kLoaded);
  EXPECT_TRUE(store.Get("a"));
  EXPECT_FALSE(store.Get("b"));
  EXPECT_EQ(ClaimDirectory(), std::vector<std::string>{"a.json"});
  EXPECT_FALSE(std::filesystem::exists(Temp(LegacyFile())));
}

// A <uid>.json.tmp symlink planted in the claims directory after the load
// is replaced, not written through: the file it points to keeps its content
// and the claim file is a regular file.
TEST_F(CheckpointStoreTest, ASymlinkPlantedAtAClaimsTempFileIsNotFollowed) {
  const auto victim = dir_.path() / "victim";
  WriteFile(victim, "victim content");
  CheckpointStore store(Options(), log_);
  std::filesystem::create_directories(ClaimFile("a").parent_path());
  std::filesystem::create_symlink(victim, Temp(ClaimFile("a")));
  store.Put({SamplePlan("a")});
  EXPECT_EQ(ReadFile(victim), "victim content");
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::symlink_status(ClaimFile("a"))));
  EXPECT_EQ(ReadFile(ClaimFile("a")), CheckpointJson({SamplePlan("a")}, "boot-1"));
  EXPECT_EQ(ClaimDirectory(), std::vector<std::string>{"a.json"});
}

TEST_F(CheckpointStoreTest, WhatCannotBeRemovedOrNamedDoesNotStopTheLoad) {
  {
    CheckpointStore store(Options(), log_);
    for (int i = 0; i < 20; ++i) store.Put({SamplePlan("c" + std::to_string(i))});
  }
  std::filesystem::create_directories(Temp(ClaimFile("stuck")) / "inside");  // a .tmp that cannot be removed
  WriteFile(ClaimFile("long"), CheckpointJson({SamplePlan(std::string(300, 'u'))}, "boot-1"));
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.All().size(), 20U);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt) << "the file of a UID no file can be named for";
  EXPECT_TRUE(std::filesystem::exists(Aside(ClaimFile("long"))));
}

// Earlier versions kept every claim in prepared-claims.json.
TEST_F(CheckpointStoreTest, TheSingleFileOfEarlierVersionsIsConverted) {
  WriteFile(LegacyFile(), CheckpointJson({SamplePlan("a"), SamplePlan("b", "pod-2")}, "boot-1"));
  {
    CheckpointStore store(Options(), log_);
    EXPECT_EQ(store.load_outcome(), LoadOutcome::kLoaded);
    EXPECT_EQ(store.All().size(), 2U);
    EXPECT_FALSE(std::filesystem::exists(LegacyFile()));
    EXPECT_EQ(ClaimDirectory(), (std::vector<std::string>{"a.json", "b.json"}));
    EXPECT_NE(log_text_.str().find("converted to claim files"), std::string::npos) << log_text_.str();
    EXPECT_EQ(store.writes(), 0U);
  }
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(*reopened.Get("a"), SamplePlan("a"));
  EXPECT_EQ(*reopened.Get("b"), SamplePlan("b", "pod-2"));
}

// A crash during the conversion leaves both: the claim files are never older.
TEST_F(CheckpointStoreTest, ClaimFilesWinOverTheSingleFile) {
  auto newer = SamplePlan("a");
  newer.pod_uids = {"pod-new"};
  {
    CheckpointStore store(Options(), log_);
    store.Put({newer});
  }
  WriteFile(LegacyFile(), CheckpointJson({SamplePlan("a"), SamplePlan("b")}, "boot-1"));
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(*store.Get("a"), newer);
  EXPECT_TRUE(store.Get("b"));
  EXPECT_FALSE(std::filesystem::exists(LegacyFile()));
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(*reopened.Get("a"), newer);
  EXPECT_TRUE(reopened.Get("b"));
}

TEST_F(CheckpointStoreTest, ASingleFileThatCannotBeConvertedIsKeptUntilTheNextWrite) {
  WriteFile(LegacyFile(), CheckpointJson({SamplePlan("a")}, "boot-1"));
  std::filesystem::create_directories(Temp(ClaimFile("a")) / "blocker");  // a's file cannot be written
  {
    CheckpointStore store(Options(), log_);
    EXPECT_EQ(store.load_outcome(), LoadOutcome::kLoaded);
    EXPECT_TRUE(store.Get("a"));
    EXPECT_TRUE(std::filesystem::exists(LegacyFile())) << "still the only copy of claim a";
    EXPECT_NE(log_text_.str().find("not converted"), std::string::npos);
    std::filesystem::remove_all(Temp(ClaimFile("a")));
    store.Put({SamplePlan("c")});  // writes a too, then drops the single file
    EXPECT_FALSE(std::filesystem::exists(LegacyFile()));
  }
  EXPECT_EQ(ClaimDirectory(), (std::vector<std::string>{"a.json", "c.json"}));
  CheckpointStore reopened(Options(), log_);
  EXPECT_TRUE(reopened.Get("a"));
  EXPECT_TRUE(reopened.Get("c"));
}

// Earlier versions kept claims of any UID; one too long to name a file is
// dropped with an error instead of failing every write after it.
TEST_F(CheckpointStoreTest, AClaimOfTheSingleFileWhoseUidCannotNameAFileIsDropped) {
  WriteFile(LegacyFile(), CheckpointJson({SamplePlan("a"), SamplePlan(std::string(300, 'u'))}, "boot-1"));
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.All().size(), 1U);
  EXPECT_TRUE(store.Get("a"));
  EXPECT_FALSE(std::filesystem::exists(LegacyFile()));
  EXPECT_NE(log_text_.str().find("too long to name a claim file"), std::string::npos);
  store.Put({SamplePlan("b")});
  EXPECT_EQ(ClaimDirectory(), (std::vector<std::string>{"a.json", "b.json"}));
}

TEST_F(CheckpointStoreTest, ASingleFileOfAnEarlierBootOrCorruptIsNotConverted) {
  WriteFile(LegacyFile(), CheckpointJson({SamplePlan("a")}, "boot-0"));
  {
    CheckpointStore store(Options(), log_);
    EXPECT_EQ(store.load_outcome(), LoadOutcome::kEarlierBoot);
    EXPECT_TRUE(store.All().empty());
    EXPECT_FALSE(std::filesystem::exists(LegacyFile()));
  }
  WriteFile(LegacyFile(), "{\"kind\":\"DranetCheckpoint\",\"vers");
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt);
  EXPECT_TRUE(std::filesystem::exists(Aside(LegacyFile())));
  EXPECT_TRUE(ClaimDirectory().empty());
}

TEST_F(CheckpointStoreTest, FailedWriteThrowsAndChangesNothing) {
  auto options = Options();
  bool fail = false;
  options.before_write = [&] {
    if (fail) throw std::system_error(std::make_error_code(std::errc::io_error), "checkpoint write");
  };
  CheckpointStore store(options, log_);
  store.Put({SamplePlan("a")});
  std::filesystem::create_directories(Temp(ClaimFile("b")));  // b's file cannot be created
  EXPECT_THROW(store.Put({SamplePlan("b")}), std::system_error);
  std::filesystem::remove(Temp(ClaimFile("b")));
  fail = true;
  EXPECT_THROW(store.Remove({"a"}), std::system_error);
  auto changed_a = SamplePlan("a");
  changed_a.pod_uids = {"another-pod"};
  EXPECT_THROW(store.Put({changed_a}), std::system_error);
  EXPECT_FALSE(store.Get("b"));
  ASSERT_TRUE(store.Get("a"));
  EXPECT_EQ(store.Get("a")->pod_uids, SamplePlan("a").pod_uids);
  fail = false;
  // The next write holds none of the failed calls' changes either.
  store.Put({SamplePlan("c")});
  EXPECT_EQ(ClaimDirectory(), (std::vector<std::string>{"a.json", "c.json"}));
  CheckpointStore reopened(Options(), log_);
  ASSERT_TRUE(reopened.Get("a"));
  EXPECT_EQ(reopened.Get("a")->pod_uids, SamplePlan("a").pod_uids);
  EXPECT_FALSE(reopened.Get("b"));
  EXPECT_TRUE(reopened.Get("c"));
}

// A write that fails after renaming some of its files leaves them on disk;
// the next write puts them back as the store holds them.
TEST_F(CheckpointStoreTest, APartlyAppliedWriteIsMendedByTheNext) {
  CheckpointStore store(Options(), log_);
  store.Put({SamplePlan("keep")});
  std::filesystem::create_directories(ClaimFile("b") / "blocker");  // b's rename fails: its name is a directory
  EXPECT_THROW(store.Put({SamplePlan("a"), SamplePlan("b")}), std::system_error);
  EXPECT_FALSE(store.Get("a"));
  EXPECT_TRUE(std::filesystem::exists(ClaimFile("a"))) << "renamed before b failed";
  std::filesystem::remove_all(ClaimFile("b"));
  store.Put({SamplePlan("c")});
  EXPECT_EQ(ClaimDirectory(), (std::vector<std::string>{"c.json", "keep.json"}));
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.All().size(), 2U);
  EXPECT_FALSE(reopened.Get("a"));
}

TEST_F(CheckpointStoreTest, WorksWithoutBootId) {
  std::filesystem::remove_all(dir_.path() / "proc");
  {
    CheckpointStore store(Options(), log_);
    EXPECT_TRUE(store.boot_id().empty());
    store.Put({SamplePlan("a")});
  }
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.load_outcome(), LoadOutcome::kLoaded);
}

TEST_F(CheckpointStoreTest, ConcurrentPutsAreAllKept) {
  CheckpointStore store(Options(), log_);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&store, t] {
      for (int i = 0; i < 10; ++i) store.Put({SamplePlan("c" + std::to_string(t) + "-" + std::to_string(i))});
    });
  for (auto& t : threads) t.join();
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.All().size(), 80U);
}

// Group commit: the calls that queue while a write runs share the next one,
// and each returns only once that write is on disk.
TEST_F(CheckpointStoreTest, CallsQueuedDuringAWriteShareTheNextOne) {
  auto options = Options();
  std::atomic<int> write_count{0};
  CheckpointStore* store_ptr = nullptr;
  options.before_write = [&] {
    if (write_count++ != 0) return;
    // Hold the first write until the other seven callers are queued.
    for (int i = 0; i < 5000 && store_ptr->pending() < 7; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  CheckpointStore store(options, log_);
  store_ptr = &store;
  std::thread first([&] { store.Put({SamplePlan("first")}); });
  while (write_count.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<std::thread> others;
  for (int t = 0; t < 7; ++t) others.emplace_back([&store, t] { store.Put({SamplePlan("q" + std::to_string(t))}); });
  first.join();
  for (auto& t : others) t.join();
  EXPECT_EQ(store.writes(), 2U) << "one write for the first call, one for the seven queued behind it";
  EXPECT_EQ(store.committed_mutations(), 8U);
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.All().size(), 8U);
}

TEST_F(CheckpointStoreTest, AFailedSharedWriteFailsEveryCallInIt) {
  auto options = Options();
  std::atomic<int> write_count{0};
  CheckpointStore* store_ptr = nullptr;
  options.before_write = [&] {
    const int n = write_count++;
    if (n == 0)
      for (int i = 0; i < 5000 && store_ptr->pending() < 4; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (n == 1) throw std::system_error(std::make_error_code(std::errc::no_space_on_device), "checkpoint write");
  };
  CheckpointStore store(options, log_);
  store_ptr = &store;
  std::thread first([&] { store.Put({SamplePlan("first")}); });
  while (write_count.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::atomic<int> failed{0};
  std::vector<std::thread> others;
  for (int t = 0; t < 3; ++t)
    others.emplace_back([&, t] {
      try {
        store.Put({SamplePlan("q" + std::to_string(t))});
      } catch (const std::system_error&) {
        ++failed;
      }
    });
  others.emplace_back([&] {
    try {
      store.Remove({"first"});
    } catch (const std::system_error&) {
      ++failed;
    }
  });
  first.join();
  for (auto& t : others) t.join();
  EXPECT_EQ(failed.load(), 4) << "all four shared the failed write";
  EXPECT_EQ(store.All().size(), 1U);
  EXPECT_TRUE(store.Get("first")) << "the failed batch's Remove did not apply";
  store.Put({SamplePlan("after")});
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.All().size(), 2U);
}

// Two instances on one state directory, as the old and the new dranetd of a
// rollout: what one writes, the other reads at once.
TEST_F(CheckpointStoreTest, TwoInstancesSeeEachOthersWrites) {
  CheckpointStore old_one(Options(), log_);
  old_one.Put({SamplePlan("by-old")});
  CheckpointStore new_one(Options(), log_);
  EXPECT_EQ(*new_one.Get("by-old"), SamplePlan("by-old"));

  new_one.Put({SamplePlan("by-new", "pod-2")});
  EXPECT_EQ(*old_one.Get("by-new"), SamplePlan("by-new", "pod-2")) << "a pod the new one prepared starts on the old";
  EXPECT_EQ(old_one.ForPod("pod-2").size(), 1U);
  EXPECT_EQ(old_one.rescans(), 1U);

  new_one.Remove({"by-old"});  // prepared by the old, unprepared by the new
  EXPECT_FALSE(old_one.Get("by-old"));
  EXPECT_EQ(old_one.All().size(), 1U);
  EXPECT_EQ(old_one.rescans(), 2U);

  // Its own writes alone never make an instance rescan.
  old_one.Put({SamplePlan("again")});
  old_one.Remove({"again"});
  EXPECT_EQ(old_one.All().size(), 1U);
  EXPECT_EQ(old_one.rescans(), 2U);
  EXPECT_EQ(new_one.All().size(), 1U);
  EXPECT_EQ(new_one.rescans(), 1U) << "once for the old one's two writes";
}

// A claim both instances write (the kubelet retried a prepare on the other
// one) ends as the last write left it, in both.
TEST_F(CheckpointStoreTest, TheLastWriteOfAClaimWinsInBoth) {
  CheckpointStore a(Options(), log_);
  CheckpointStore b(Options(), log_);
  a.Put({SamplePlan("same", "pod-a")});
  b.Put({SamplePlan("same", "pod-b")});
  EXPECT_EQ(a.Get("same")->pod_uids, (std::vector<std::string>{"pod-b"}));
  EXPECT_EQ(b.Get("same")->pod_uids, (std::vector<std::string>{"pod-b"}));
  b.Remove({"same"});
  EXPECT_TRUE(a.All().empty());
}

// An instance starting while another writes waits for that write: its load
// (which removes leftover .tmp files) never takes a write in progress for a
// crash's leftover.
TEST_F(CheckpointStoreTest, AStartWaitsForAnotherInstancesWrite) {
  std::atomic<bool> in_write{false}, release{false};
  auto writer_options = Options();
  writer_options.before_write = [&] {
    in_write = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  CheckpointStore writer(writer_options, log_);
  std::thread put([&] { writer.Put({SamplePlan("in-flight")}); });
  while (!in_write) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::atomic<bool> started{false};
  std::unique_ptr<CheckpointStore> starting;
  std::thread start([&] {
    starting = std::make_unique<CheckpointStore>(Options(), log_);
    started = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(started.load()) << "the load ran during another instance's write";
  release = true;
  put.join();
  start.join();
  EXPECT_EQ(*starting->Get("in-flight"), SamplePlan("in-flight"));
  EXPECT_EQ(*writer.Get("in-flight"), SamplePlan("in-flight"));
}

// A rescan parses only the files another instance replaced.
TEST_F(CheckpointStoreTest, ARescanParsesOnlyReplacedFiles) {
  std::ostringstream verbose_text;
  Logger verbose(verbose_text, Logger::Format::kJson, 1);
  CheckpointStore a(Options(), verbose);
  CheckpointStore b(Options(), log_);
  std::vector<inject::ClaimPlan> many;
  for (int i = 0; i < 20; ++i) many.push_back(SamplePlan("c" + std::to_string(i)));
  b.Put(many);
  EXPECT_EQ(a.All().size(), 20U);
  b.Put({SamplePlan("c3", "pod-9")});
  verbose_text.str("");
  EXPECT_EQ(a.Get("c3")->pod_uids, (std::vector<std::string>{"pod-9"}));
  EXPECT_NE(verbose_text.str().find("\"reparsed\":\"1\""), std::string::npos) << verbose_text.str();
}

}  // namespace
}  // namespace dranet::state
