#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mount.h>
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

}  // namespace
}  // namespace dranet
