#include <gtest/gtest.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "base/files.h"

namespace dranet {
namespace {

namespace fs = std::filesystem;

class AtomicWriteTest : public ::testing::Test {
 protected:
  AtomicWriteTest() {
    std::string pattern = (fs::temp_directory_path() / "dranet-atomic-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  ~AtomicWriteTest() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// What a process killed at each step leaves behind: the old file whole, the
// new content only in the temp file — never a torn file at the real path.
TEST_F(AtomicWriteTest, StepsSeeTheNewContentOnlyInTheTempFile) {
  const fs::path file = dir_ / "state.json";
  WriteFileAtomic(file, "old content");
  const std::string content = "0123456789abcdefghij";
  std::vector<std::string> seen;
  WriteFileAtomic(file, content, [&](AtomicWriteStep step) {
    seen.push_back(std::string(step == AtomicWriteStep::kHalfWritten ? "half" : "before-rename") + ": " +
                   ReadFileCapped(file).value_or("<none>") + " | " +
                   ReadFileCapped(fs::path(file.string() + ".tmp")).value_or("<none>"));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"half: old content | 0123456789",
                                            "before-rename: old content | " + content}));
  EXPECT_EQ(ReadFileCapped(file), content);
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
}

// A write the filesystem cannot hold (a full tmpfs: ENOSPC) fails naming the
// file and leaves neither a temp file nor a changed file behind.
TEST_F(AtomicWriteTest, AWriteThatDoesNotFitLeavesNoTempFileAndTheOldFileWhole) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (mounts a small tmpfs)";
  const fs::path small = dir_ / "small";
  fs::create_directory(small);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  struct Unmount {
    fs::path dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{small};
  const fs::path file = small / "state.json";
  WriteFileAtomic(file, "old content");
  try {
    WriteFileAtomic(file, std::string(1 << 20, 'x'));
    ADD_FAILURE() << "a 1 MiB write into a 64 KiB tmpfs succeeded";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOSPC) << e.what();
    EXPECT_NE(std::string(e.what()).find("state.json.tmp"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  EXPECT_EQ(ReadFileCapped(file), "old content");
}

// A symlink planted at the temp path (the state directory is shared with
// whoever can write there) is replaced, never written through, and the
// rename installs a regular file, not the link.
TEST_F(AtomicWriteTest, ASymlinkAtTheTempPathIsReplacedNotFollowed) {
  const fs::path outside = dir_ / "outside";
  fs::create_directory(outside);
  const fs::path victim = outside / "victim";
  WriteFileAtomic(victim, "victim content");
  const fs::path file = dir_ / "state.json";
  fs::create_symlink(victim, file.string() + ".tmp");
  WriteFileAtomic(file, "new content");
  EXPECT_EQ(ReadFileCapped(victim), "victim content");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(file)));
  EXPECT_EQ(ReadFileCapped(file), "new content");
  EXPECT_FALSE(fs::exists(fs::symlink_status(file.string() + ".tmp")));
}

// A hard link at the temp path is a file someone else created: its content
// (another name's) stays as it was.
TEST_F(AtomicWriteTest, AFileAlreadyAtTheTempPathIsReplacedNotWrittenInto) {
  const fs::path victim = dir_ / "victim";
  WriteFileAtomic(victim, "victim content");
  const fs::path file = dir_ / "state.json";
  fs::create_hard_link(victim, file.string() + ".tmp");
  WriteFileAtomic(file, "new content");
  EXPECT_EQ(ReadFileCapped(victim), "victim content");
  EXPECT_EQ(ReadFileCapped(file), "new content");
  EXPECT_EQ(fs::hard_link_count(file), 1U);
}

// A FIFO at the temp path is removed like any other file: the write neither
// blocks on it nor feeds it (a reader is kept open so that a write into it
// would show instead of hanging).
TEST_F(AtomicWriteTest, AFifoAtTheTempPathIsReplaced) {
  const fs::path file = dir_ / "state.json";
  const fs::path tmp = file.string() + ".tmp";
  ASSERT_EQ(::mkfifo(tmp.c_str(), 0600), 0) << std::strerror(errno);
  const int reader = ::open(tmp.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  WriteFileAtomic(file, "new content");
  char buffer[64];
  EXPECT_LE(::read(reader, buffer, sizeof buffer), 0) << "the content went into the FIFO";
  ::close(reader);
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(file)));
  EXPECT_EQ(ReadFileCapped(file), "new content");
}

// A directory at the temp path is not removed: the write fails naming the
// temp file, and the old file and the directory stay as they were.
TEST_F(AtomicWriteTest, ADirectoryAtTheTempPathFailsNamingIt) {
  const fs::path file = dir_ / "state.json";
  WriteFileAtomic(file, "old content");
  const fs::path tmp = file.string() + ".tmp";
  fs::create_directories(tmp / "inside");
  try {
    WriteFileAtomic(file, "new content");
    ADD_FAILURE() << "wrote over a directory";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EISDIR) << e.what();
    EXPECT_NE(std::string(e.what()).find(tmp.string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(ReadFileCapped(file), "old content");
  EXPECT_TRUE(fs::is_directory(tmp / "inside"));
}

}  // namespace
}  // namespace dranet
