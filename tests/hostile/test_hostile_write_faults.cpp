// Hostile conditions for writes: a checkpoint write that cannot complete (a read-only folder, a
// folder that is a file, a temporary name that cannot be created) is a bl::Error saying what became
// of the target, and the previous checkpoint stays byte for byte as it was.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "ml_linear/ml_test_util.h"
#include "bitlearn/io.h"
#include "bitlearn/nn/checkpoint.h"
#include "bitlearn/nn/layers.h"
#include "bitlearn/nn/module.h"
#include "bitlearn/nn/optim.h"
#include "core/error.h"

namespace bl::nn::testing {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "bl_hostile_write_" + std::to_string(::getpid()) + "_" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A Linear model with Adam; `steps` optimizer steps make its state (and the file) differ.
struct Trained {
  InitStream init{3};
  Linear model{4, 3, init};
  Adam opt{model.named_parameters(), 0.01f};
  explicit Trained(int steps) {
    for (int s = 0; s < steps; ++s) {
      for (auto& [name, v] : model.named_parameters()) v.set_grad(Tensor::full(v.shape(), 0.5));
      opt.step();
    }
  }
};

using ml_test::error_of;

TEST(HostileWriteFaults, TemporaryThatCannotBeCreatedKeepsThePreviousCheckpoint) {
  const std::string dir = fresh_dir("tmpblocked");
  const std::string path = dir + "/ckpt.safetensors";
  Trained first(1);
  save_checkpoint(path, first.model, first.opt, 1);
  const std::vector<uint8_t> before = read_file_bytes(path);
  // A directory where this process's temporary must go: the create fails (root included).
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  fs::create_directory(tmp);
  Trained second(2);
  const std::string msg = error_of([&] { save_checkpoint(path, second.model, second.opt, 2); });
  EXPECT_NE(msg.find("cannot create " + tmp), std::string::npos) << msg;
  EXPECT_NE(msg.find("the previous " + path + " is left unchanged"), std::string::npos) << msg;
  EXPECT_EQ(read_file_bytes(path), before);
  fs::remove_all(dir);
}

TEST(HostileWriteFaults, FolderThatIsAFileWritesNothing) {
  const std::string dir = fresh_dir("notafolder");
  const std::string file = dir + "/plain";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  Trained t(1);
  const std::string msg = error_of([&] { save_checkpoint(file + "/ckpt.safetensors", t.model, t.opt, 1); });
  EXPECT_NE(msg.find("cannot create"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Not a directory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nothing was written"), std::string::npos) << msg;
  EXPECT_EQ(fs::file_size(file), 0u);
  fs::remove_all(dir);
}

// The folder made immutable (chattr +i): no file can be created in it, even by root, which ignores
// permission bits. Skipped where the file system or the process cannot set the flag.
TEST(HostileWriteFaults, ReadOnlyFolderKeepsThePreviousCheckpoint) {
  const std::string dir = fresh_dir("immutable");
  const std::string path = dir + "/ckpt.safetensors";
  Trained first(1);
  save_checkpoint(path, first.model, first.opt, 1);
  const std::vector<uint8_t> before = read_file_bytes(path);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  int flags = 0;
  if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
    ::close(fd);
    GTEST_SKIP() << "the file system has no inode flags";
  }
  const int immutable = flags | FS_IMMUTABLE_FL;
  if (::ioctl(fd, FS_IOC_SETFLAGS, &immutable) != 0) {
    ::close(fd);
    GTEST_SKIP() << "cannot make a folder immutable here (no CAP_LINUX_IMMUTABLE)";
  }
  Trained second(2);
  const std::string msg = error_of([&] { save_checkpoint(path, second.model, second.opt, 2); });
  ::ioctl(fd, FS_IOC_SETFLAGS, &flags);
  ::close(fd);
  EXPECT_NE(msg.find("cannot create"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Operation not permitted"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the previous " + path + " is left unchanged"), std::string::npos) << msg;
  EXPECT_EQ(read_file_bytes(path), before);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace bl::nn::testing
