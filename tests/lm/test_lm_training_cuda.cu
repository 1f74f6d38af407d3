// Language-model training on CUDA gives the per-step parameter hashes, losses and checkpoint
// bytes of the CPU, under several launch shapes, micro-batchings and a mid-run device switch.
// Skips without a GPU.
#include <gtest/gtest.h>

#include "bitlearn/io.h"
#include "kernels/launch.h"
#include "lm/lm_test_util.h"
#include "ops/op_util.h"

namespace bl::lm {
namespace {

using testing::temp_dir;
using testing::tiny_options;

struct DeviceRun {
  std::vector<std::string> hashes;
  std::vector<float> losses;
  std::vector<uint8_t> checkpoint;
};

DeviceRun run(TrainOptions o) {
  const TrainResult r = train(o);
  DeviceRun out;
  for (const auto& s : r.steps) {
    out.hashes.push_back(s.params_sha256);
    out.losses.push_back(s.loss);
  }
  if (!o.checkpoint.empty()) out.checkpoint = read_file_bytes(o.checkpoint);
  return out;
}

class LmCuda : public ::testing::TestWithParam<std::string> {};

TEST_P(LmCuda, TrainingMatchesCpuBitForBit) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = temp_dir("cuda_" + GetParam());
  TrainOptions o = tiny_options(dir, GetParam());
  o.checkpoint = dir + "/cpu.ckpt";
  const DeviceRun cpu = run(o);
  int shape = 0;
  for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
    ScopedLaunchConfig scoped(cfg);
    TrainOptions g = o;
    g.device = "cuda:0";
    g.checkpoint = dir + "/gpu" + std::to_string(shape) + ".ckpt";
    g.accumulate = shape % 2 == 0 ? 1 : 4;
    g.recompute = shape == 3;
    const DeviceRun gpu = run(g);
    EXPECT_EQ(gpu.hashes, cpu.hashes) << "launch shape " << shape;
    EXPECT_EQ(gpu.losses, cpu.losses) << "launch shape " << shape;
    EXPECT_TRUE(gpu.checkpoint == cpu.checkpoint) << "checkpoint bytes differ, launch shape " << shape;
    ++shape;
  }
}

TEST_P(LmCuda, SwitchingDeviceThroughACheckpointKeepsEveryBit) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = temp_dir("switch_" + GetParam());
  TrainOptions o = tiny_options(dir, GetParam());
  o.checkpoint = dir + "/whole.ckpt";
  const DeviceRun whole = run(o);
  TrainOptions p = o;
  p.checkpoint = dir + "/part.ckpt";
  std::vector<std::string> joined;
  const char* devices[] = {"cpu", "cuda:0", "cpu"};
  for (int leg = 0; leg < 3; ++leg) {
    p.device = devices[leg];
    p.stop_at = leg == 2 ? 0 : 2 * (leg + 1);
    p.resume = leg > 0;
    for (const auto& h : run(p).hashes) joined.push_back(h);
  }
  EXPECT_EQ(joined, whole.hashes);
  EXPECT_TRUE(read_file_bytes(p.checkpoint) == whole.checkpoint);
}

INSTANTIATE_TEST_SUITE_P(Architectures, LmCuda, ::testing::Values("llama", "gpt2"));

}  // namespace
}  // namespace bl::lm
