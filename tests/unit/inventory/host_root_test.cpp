// HostRootProblem: which paths dranetd and dranetctl take as --host-root.
#include "inventory/host_root.h"

#include <gtest/gtest.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "test_support.h"

namespace dranet::inventory {
namespace {

namespace fs = std::filesystem;

class HostRootTest : public ::testing::Test {
 protected:
  HostRootTest() {
    std::string pattern = (fs::temp_directory_path() / "dranet-host-root-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  ~HostRootTest() override {
    std::error_code error;
    fs::permissions(dir_ / "locked", fs::perms::owner_all, error);
    fs::remove_all(dir_, error);
  }
  fs::path dir_;
};

TEST_F(HostRootTest, TheLiveRootAndNodeRootsAreAccepted) {
  EXPECT_EQ(HostRootProblem("/"), "");
  EXPECT_EQ(HostRootProblem("//"), "");
  EXPECT_EQ(HostRootProblem(testing::NodeSnapshot("nd-gb300-v6")), "");
  // Not a snapshot: a node's root mounted elsewhere, read through its sys/.
  fs::create_directories(dir_ / "node/sys/class/net");
  EXPECT_EQ(HostRootProblem(dir_ / "node"), "");
  EXPECT_EQ(HostRootProblem((dir_ / "node").string() + "/"), "");
  // A symlink to a root is the root (the caller's link, followed).
  fs::create_directory_symlink(dir_ / "node", dir_ / "link");
  EXPECT_EQ(HostRootProblem(dir_ / "link"), "");
}

TEST_F(HostRootTest, WhatCannotBeARootIsRefusedNamingThePathAndWhy) {
  const fs::path missing = dir_ / "missing";
  EXPECT_EQ(HostRootProblem(missing), missing.string() + ": does not exist");
  EXPECT_EQ(HostRootProblem(""), "\"\": does not exist");
  fs::create_directory_symlink(missing, dir_ / "dangling");
  EXPECT_EQ(HostRootProblem(dir_ / "dangling"), (dir_ / "dangling").string() + ": does not exist");
  const fs::path file = dir_ / "file";
  std::ofstream(file) << "not a directory\n";
  EXPECT_EQ(HostRootProblem(file), file.string() + ": not a directory");
  EXPECT_EQ(HostRootProblem(file / "sub"), (file / "sub").string() + ": not a directory");
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_EQ(HostRootProblem(fifo), fifo.string() + ": not a directory");  // and no wait for a writer
  const fs::path empty = dir_ / "empty";
  fs::create_directory(empty);
  EXPECT_EQ(HostRootProblem(empty), empty.string() + ": empty directory");
}

// HostRootProblem(root) as an unprivileged user: root reads any directory,
// so as root the check runs in a child that has become nobody. nullopt when
// it cannot become nobody here.
std::optional<std::string> ProblemAsUnprivileged(const fs::path& root) {
  if (::geteuid() != 0) return HostRootProblem(root);
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    const std::string problem = HostRootProblem(root);
    const bool written = ::write(pipe_fds[1], problem.data(), problem.size()) == static_cast<ssize_t>(problem.size());
    ::_exit(written ? 0 : 3);
  }
  ::close(pipe_fds[1]);
  std::string out;
  char buffer[512];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return std::nullopt;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed: " + std::to_string(status);
  return out;
}

TEST_F(HostRootTest, AnUnreadableDirectoryIsRefusedWithTheReason) {
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_exec);  // nobody may pass through
  const fs::path locked = dir_ / "locked";
  fs::create_directories(locked / "sys");
  // Neither listed nor entered; then listed but not entered.
  if (!ProblemAsUnprivileged(locked)) GTEST_SKIP() << "cannot run as an unprivileged user (uid 65534) here";
  for (auto perms : {fs::perms::none, fs::perms::owner_read | fs::perms::others_read}) {
    fs::permissions(locked, perms);
    EXPECT_EQ(ProblemAsUnprivileged(locked), locked.string() + ": cannot be read: Permission denied");
  }
  fs::permissions(locked, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  EXPECT_EQ(ProblemAsUnprivileged(locked), "");
}

}  // namespace
}  // namespace dranet::inventory
