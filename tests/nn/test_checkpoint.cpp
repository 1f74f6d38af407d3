// Checkpoints: same state -> same bytes, resumption equals the uninterrupted run (MLP, CNN with
// BatchNorm buffers, LSTM; also after SIGKILL of a training process), clear errors on bad files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/error.h"
#include "bitlearn/io.h"
#include "bitlearn/safetensors.h"
#include "nn/nn_test_util.h"

namespace bl::nn::testing {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "bl_ckpt_" + std::to_string(::getpid()) + "_" + name;
}

TrainConfig config_for(const Built& b, int64_t steps, const std::string& path) {
  TrainConfig cfg;
  cfg.steps = steps;
  cfg.batch_size = 16;
  cfg.data_seed = 9;
  cfg.input_shape = b.input_shape;
  cfg.schedule = cosine_lr(0.01f, 3, 20);
  cfg.checkpoint_path = path;
  cfg.resume = true;
  return cfg;
}

std::vector<uint8_t> bytes_of(const std::string& path) { return read_file_bytes(path, "checkpoint"); }

class CheckpointResume : public ::testing::TestWithParam<ModelKind> {};

TEST_P(CheckpointResume, ResumeAtStepKEqualsUninterruptedRun) {
  Dataset data = synthetic_images(80, 8, 4, 21);
  std::string full = temp_path("full.safetensors"), part = temp_path("part.safetensors");
  std::remove(full.c_str());
  std::remove(part.c_str());
  std::vector<float> full_losses;
  {
    Built b = build_model(GetParam(), 8, 4, 3);
    Adam opt(b.model->named_parameters(), 0.01f);
    full_losses = train_classifier(*b.model, opt, data, config_for(b, 20, full)).losses;
  }
  {
    Built b = build_model(GetParam(), 8, 4, 3);
    Adam opt(b.model->named_parameters(), 0.01f);
    train_classifier(*b.model, opt, data, config_for(b, 7, part));
  }
  std::vector<float> resumed_losses;
  {
    Built b = build_model(GetParam(), 8, 4, 3);
    Adam opt(b.model->named_parameters(), 0.01f);
    TrainResult r = train_classifier(*b.model, opt, data, config_for(b, 20, part));
    EXPECT_EQ(r.first_step, 7);
    resumed_losses = r.losses;
  }
  EXPECT_EQ(bytes_of(full), bytes_of(part));
  EXPECT_EQ(loss_bits(std::vector<float>(full_losses.begin() + 7, full_losses.end())), loss_bits(resumed_losses));
}

INSTANTIATE_TEST_SUITE_P(Models, CheckpointResume,
                         ::testing::Values(ModelKind::mlp, ModelKind::cnn, ModelKind::lstm),
                         ModelKindName());

TEST(NnCheckpoint, SameStateGivesSameBytes) {
  Dataset data = synthetic_images(64, 8, 4, 2);
  Built b = build_model(ModelKind::cnn, 8, 4, 1);
  SGD opt(b.model->named_parameters(), 0.05f, 0.9f, true, 1e-4f);
  TrainConfig cfg = config_for(b, 4, "");
  train_classifier(*b.model, opt, data, cfg);
  std::string p1 = temp_path("same1.safetensors"), p2 = temp_path("same2.safetensors"),
              p3 = temp_path("same3.safetensors");
  save_checkpoint(p1, *b.model, opt, 4);
  save_checkpoint(p2, *b.model, opt, 4);
  EXPECT_EQ(bytes_of(p1), bytes_of(p2));
  Built b2 = build_model(ModelKind::cnn, 8, 4, 77);
  SGD opt2(b2.model->named_parameters(), 0.05f, 0.9f, true, 1e-4f);
  CheckpointInfo info = load_checkpoint(p1, *b2.model, opt2);
  EXPECT_EQ(info.step, 4);
  save_checkpoint(p3, *b2.model, opt2, 4);
  EXPECT_EQ(bytes_of(p1), bytes_of(p3));
}

std::string load_error(const std::string& path, Module& m, Optimizer& o) {
  try {
    load_checkpoint(path, m, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NnCheckpoint, BadCheckpointsGiveClearErrors) {
  Built mlp = build_model(ModelKind::mlp, 8, 4, 1);
  Adam opt(mlp.model->named_parameters(), 0.01f);
  std::string p = temp_path("bad.safetensors");
  save_checkpoint(p, *mlp.model, opt, 0);
  Built lstm = build_model(ModelKind::lstm, 8, 4, 1);
  Adam opt_lstm(lstm.model->named_parameters(), 0.01f);
  EXPECT_NE(load_error(p, *lstm.model, opt_lstm).find("another model"), std::string::npos)
      << load_error(p, *lstm.model, opt_lstm);
  auto other_width = make_mlp(64, {16, 16}, 4, 1);
  Adam opt_w(other_width->named_parameters(), 0.01f);
  EXPECT_NE(load_error(p, *other_width, opt_w).find("shape"), std::string::npos);
  SGD sgd(mlp.model->named_parameters(), 0.1f);
  EXPECT_NE(load_error(p, *mlp.model, sgd).find("optimizer"), std::string::npos);
  std::vector<uint8_t> bytes = bytes_of(p);
  bytes.resize(bytes.size() - 10);
  write_file_atomic(p, bytes);
  EXPECT_NE(load_error(p, *mlp.model, opt), "");
}

// The child side of the SIGKILL test: trains slowly with frequent checkpoints until killed.
// Runs only when BL_NN_KILL_CHILD_PATH is set (by the parent test below).
TEST(NnCheckpointChild, TrainsUntilKilled) {
  const char* path = std::getenv("BL_NN_KILL_CHILD_PATH");
  if (path == nullptr) GTEST_SKIP() << "child of NnCheckpoint.SigkillMidRunThenResumeGivesSameBytes";
  Dataset data = synthetic_images(80, 8, 4, 21);
  Built b = build_model(ModelKind::mlp, 8, 4, 3);
  Adam opt(b.model->named_parameters(), 0.01f);
  TrainConfig cfg = config_for(b, 60, path);
  cfg.checkpoint_every = 3;
  cfg.on_step = [](int64_t, float) { std::this_thread::sleep_for(std::chrono::milliseconds(30)); };
  train_classifier(*b.model, opt, data, cfg);
}

int64_t checkpoint_step(const std::string& path) {
  try {
    return std::stoll(SafetensorsFile::open(path).metadata().at("step"));
  } catch (...) {
    return -1;
  }
}

TEST(NnCheckpoint, SigkillMidRunThenResumeGivesSameBytes) {
  std::string killed = temp_path("killed.safetensors"), full = temp_path("unkilled.safetensors");
  std::remove(killed.c_str());
  std::remove(full.c_str());
  std::string env_entry = "BL_NN_KILL_CHILD_PATH=" + killed;
  char* child_env[] = {env_entry.data(), nullptr};
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execle("/proc/self/exe", "bitlearn_tests", "--gtest_filter=NnCheckpointChild.TrainsUntilKilled",
             static_cast<char*>(nullptr), child_env);
    ::_exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (checkpoint_step(killed) < 12 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the child ended before the kill";
  int64_t k = checkpoint_step(killed);
  ASSERT_GE(k, 12);
  ASSERT_LT(k, 60) << "the child was not killed mid-run";
  Dataset data = synthetic_images(80, 8, 4, 21);
  {
    Built b = build_model(ModelKind::mlp, 8, 4, 3);
    Adam opt(b.model->named_parameters(), 0.01f);
    TrainResult r = train_classifier(*b.model, opt, data, config_for(b, 60, killed));
    EXPECT_EQ(r.first_step, k);
  }
  {
    Built b = build_model(ModelKind::mlp, 8, 4, 3);
    Adam opt(b.model->named_parameters(), 0.01f);
    train_classifier(*b.model, opt, data, config_for(b, 60, full));
  }
  EXPECT_EQ(bytes_of(killed), bytes_of(full));
}

}  // namespace
}  // namespace bl::nn::testing
