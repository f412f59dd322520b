#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
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

}  // namespace
}  // namespace dranet
