// Training on CUDA gives the same per-step loss bits and the same checkpoint bytes as on the CPU
// (MLP, CNN with BatchNorm / pooling / residual block, LSTM). Skips without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include "bitlearn/io.h"
#include "nn/nn_test_util.h"

namespace bl::nn::testing {
namespace {

struct DeviceRun {
  std::vector<uint32_t> loss_bits;
  std::vector<uint8_t> checkpoint;
};

DeviceRun run_on(ModelKind kind, Device device, const std::string& tag) {
  Dataset data = synthetic_images(96, 8, 4, 11);
  data.images = data.images.to(device);
  data.labels = data.labels.to(device);
  Built b = build_model(kind, 8, 4, 5);
  b.model->to(device);
  Adam opt(b.model->named_parameters(), 0.01f);
  TrainConfig cfg;
  cfg.steps = 12;
  cfg.batch_size = 16;
  cfg.input_shape = b.input_shape;
  cfg.schedule = cosine_lr(0.01f, 2, 12);
  cfg.clip_norm = 5.0f;
  cfg.checkpoint_path = ::testing::TempDir() + "bl_nn_cuda_" + std::to_string(::getpid()) + tag + ".safetensors";
  TrainResult r = train_classifier(*b.model, opt, data, cfg);
  return {loss_bits(r.losses), read_file_bytes(cfg.checkpoint_path)};
}

class NnCuda : public ::testing::TestWithParam<ModelKind> {};

TEST_P(NnCuda, TrainingMatchesCpuBitForBit) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  DeviceRun cpu = run_on(GetParam(), Device::cpu(), "cpu");
  DeviceRun gpu = run_on(GetParam(), Device::cuda(0), "gpu");
  EXPECT_EQ(cpu.loss_bits, gpu.loss_bits);
  EXPECT_TRUE(cpu.checkpoint == gpu.checkpoint) << "checkpoint bytes differ";
}

INSTANTIATE_TEST_SUITE_P(Models, NnCuda, ::testing::Values(ModelKind::mlp, ModelKind::cnn, ModelKind::lstm),
                         ModelKindName());

}  // namespace
}  // namespace bl::nn::testing
