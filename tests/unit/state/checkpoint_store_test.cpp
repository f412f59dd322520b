#include "state/checkpoint_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

  std::filesystem::path File() { return dir_.path() / "state/prepared-claims.json"; }

  TempDir dir_;
  std::ostringstream log_text_;
  Logger log_;
  std::vector<std::string> corrupt_messages_;
};

TEST_F(CheckpointStoreTest, StartsEmptyWithoutFile) {
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kNoFile);
  EXPECT_TRUE(store.All().empty());
  EXPECT_FALSE(std::filesystem::exists(File()));
}

TEST_F(CheckpointStoreTest, PutIsDurableAndReloads) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a"), SamplePlan("b", "pod-2")});
    EXPECT_EQ(store.writes(), 1U);  // one write for the whole call
  }
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.load_outcome(), LoadOutcome::kLoaded);
  ASSERT_EQ(reopened.All().size(), 2U);
  EXPECT_EQ(*reopened.Get("a"), SamplePlan("a"));
  EXPECT_EQ(*reopened.Get("b"), SamplePlan("b", "pod-2"));
  const std::string text = ReadFile(File());
  EXPECT_NE(text.find("\"kind\":\"DranetCheckpoint\""), std::string::npos);
  EXPECT_NE(text.find("\"version\":1"), std::string::npos);
  EXPECT_NE(text.find("\"bootId\":\"boot-1\""), std::string::npos);
  EXPECT_NE(text.find("\"checksum\":\"crc32:"), std::string::npos);
}

TEST_F(CheckpointStoreTest, RemoveIsIdempotentAndSkipsNoOpWrites) {
  CheckpointStore store(Options(), log_);
  store.Put({SamplePlan("a"), SamplePlan("b")});
  store.Remove({"a", "not-there"});
  EXPECT_EQ(store.writes(), 2U);
  store.Remove({"a", "not-there"});
  EXPECT_EQ(store.writes(), 2U);  // nothing changed, nothing written
  EXPECT_FALSE(store.Get("a"));
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

TEST_F(CheckpointStoreTest, GarbageFileIsSetAsideAndReported) {
  WriteFile(File(), "this is not json");
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt);
  EXPECT_TRUE(store.All().empty());
  ASSERT_EQ(corrupt_messages_.size(), 1U);
  EXPECT_NE(corrupt_messages_[0].find(File().string()), std::string::npos);
  auto aside = File();
  aside += ".corrupt";
  EXPECT_EQ(ReadFile(aside), "this is not json");
  EXPECT_NE(log_text_.str().find("state checkpoint corrupt"), std::string::npos);
  // A clean start that works: the next write and reload succeed.
  store.Put({SamplePlan("a")});
  CheckpointStore reopened(Options(), log_);
  EXPECT_EQ(reopened.load_outcome(), LoadOutcome::kLoaded);
  EXPECT_TRUE(reopened.Get("a"));
}

TEST_F(CheckpointStoreTest, TruncatedFileAtEveryLengthNeverLoadsPartialState) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a"), SamplePlan("b")});
  }
  const std::string full = ReadFile(File());
  for (std::size_t cut = 0; cut < full.size(); cut += 7) {
    WriteFile(File(), full.substr(0, cut));
    corrupt_messages_.clear();
    CheckpointStore store(Options(), log_);
    EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt) << "cut at " << cut;
    EXPECT_TRUE(store.All().empty()) << "cut at " << cut;
    EXPECT_EQ(corrupt_messages_.size(), 1U);
  }
}

TEST_F(CheckpointStoreTest, ChecksumCatchesValidJsonWithChangedContent) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a")});
  }
  std::string text = ReadFile(File());
  auto at = text.find("claim-a");
  text[at + 6] = 'z';  // still valid JSON, different claim name
  WriteFile(File(), text);
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt);
  ASSERT_EQ(corrupt_messages_.size(), 1U);
  EXPECT_NE(corrupt_messages_[0].find("checksum"), std::string::npos);
}

TEST_F(CheckpointStoreTest, UnknownVersionIsDiscarded) {
  std::string text = CheckpointJson({SamplePlan("a")}, "boot-1");
  text.replace(text.find("\"version\":1"), 11, "\"version\":9");
  WriteFile(File(), text);
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kCorrupt);
  EXPECT_NE(corrupt_messages_.at(0).find("version 9"), std::string::npos);
}

TEST_F(CheckpointStoreTest, StateOfAnEarlierBootIsDropped) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a")});
  }
  SetBootId("boot-2");
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kEarlierBoot);
  EXPECT_TRUE(store.All().empty());
  EXPECT_TRUE(corrupt_messages_.empty());  // not corruption: no Event
  EXPECT_FALSE(std::filesystem::exists(File()));
  EXPECT_NE(log_text_.str().find("earlier boot"), std::string::npos);
}

TEST_F(CheckpointStoreTest, LeftoverTempFileIsIgnoredAndRemoved) {
  {
    CheckpointStore store(Options(), log_);
    store.Put({SamplePlan("a")});
  }
  auto tmp = File();
  tmp += ".tmp";
  WriteFile(tmp, "{\"kind\":\"Dranet");  // a write that was cut off by a crash
  CheckpointStore store(Options(), log_);
  EXPECT_EQ(store.load_outcome(), LoadOutcome::kLoaded);
  EXPECT_TRUE(store.Get("a"));
  EXPECT_FALSE(std::filesystem::exists(tmp));
}

TEST_F(CheckpointStoreTest, FailedWriteThrowsAndChangesNothing) {
  CheckpointStore store(Options(), log_);
  store.Put({SamplePlan("a")});
  auto tmp = File();
  tmp += ".tmp";
  std::filesystem::create_directories(tmp);  // the temp file cannot be created
  EXPECT_THROW(store.Put({SamplePlan("b")}), std::system_error);
  EXPECT_THROW(store.Remove({"a"}), std::system_error);
  auto changed_a = SamplePlan("a");
  changed_a.pod_uids = {"another-pod"};
  EXPECT_THROW(store.Put({changed_a}), std::system_error);
  EXPECT_FALSE(store.Get("b"));
  ASSERT_TRUE(store.Get("a"));
  EXPECT_EQ(store.Get("a")->pod_uids, SamplePlan("a").pod_uids);
  std::filesystem::remove(tmp);
  // The next write holds none of the failed calls' changes either.
  store.Put({SamplePlan("c")});
  CheckpointStore reopened(Options(), log_);
  ASSERT_TRUE(reopened.Get("a"));
  EXPECT_EQ(reopened.Get("a")->pod_uids, SamplePlan("a").pod_uids);
  EXPECT_FALSE(reopened.Get("b"));
  EXPECT_TRUE(reopened.Get("c"));
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

}  // namespace
}  // namespace dranet::state
