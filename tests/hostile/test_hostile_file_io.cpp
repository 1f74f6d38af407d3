// Atomic writes and the temporaries of writers killed mid-write: a later write removes those of
// dead processes and never the file of a live one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "bitlearn/io.h"

namespace bl {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& tag) {
  const std::string d = ::testing::TempDir() + "bl_hostile_io_" + std::to_string(::getpid()) + "_" + tag;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The id of a process that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST(HostileFileIo, StaleTemporariesOfDeadWritersAreRemoved) {
  const std::string d = fresh_dir("stale");
  const std::string target = d + "/ckpt.safetensors";
  const std::string stale = target + ".tmp." + std::to_string(dead_pid());
  write_file_atomic(stale, std::string(1000, 'x'));  // a partial write of a killed writer
  ASSERT_TRUE(fs::exists(stale));
  write_file_atomic(target, std::string("new"));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_EQ(read_file_text(target), "new");
}

TEST(HostileFileIo, TemporariesOfLiveWritersAndOtherFilesAreKept) {
  const std::string d = fresh_dir("live");
  const std::string target = d + "/ckpt.safetensors";
  // A live writer: a child that waits until it is killed.
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  const std::string live = target + ".tmp." + std::to_string(child);
  const std::string dead = std::to_string(dead_pid());
  const std::string other_target = d + "/other.safetensors.tmp." + dead;  // another file's temporary
  const std::string suffixed = target + ".tmp." + dead + ".bak";         // not a temporary's name
  const std::string named = target + ".tmp.abc";
  for (const auto& f : {live, other_target, suffixed, named}) write_file_atomic(f, std::string("keep"));
  write_file_atomic(target, std::string("new"));
  EXPECT_TRUE(fs::exists(live)) << "the temporary of a live writer was removed";
  EXPECT_TRUE(fs::exists(other_target));
  EXPECT_TRUE(fs::exists(suffixed));
  EXPECT_TRUE(fs::exists(named));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  // Now that writer is dead too; the next write removes its file.
  write_file_atomic(target, std::string("newer"));
  EXPECT_FALSE(fs::exists(live));
  EXPECT_EQ(read_file_text(target), "newer");
}

TEST(HostileFileIo, TargetInTheCurrentFolderWorks) {
  const std::string d = fresh_dir("cwd");
  const fs::path old = fs::current_path();
  fs::current_path(d);
  const std::string stale = std::string("plain.txt.tmp.") + std::to_string(dead_pid());
  write_file_atomic(stale, std::string("x"));
  write_file_atomic("plain.txt", std::string("y"));
  const bool removed = !fs::exists(stale);
  fs::current_path(old);
  EXPECT_TRUE(removed);
}

}  // namespace
}  // namespace bl
