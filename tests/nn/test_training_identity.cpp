// Training runs (MLP, CNN with BatchNorm, pooling and a residual block, LSTM) give the same
// per-step loss bits and final weights with 1, 2 and 3 CPU threads; a one-bit change of the data
// changes them (sabotage arm).
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "core/error.h"
#include "nn/nn_test_util.h"

namespace bl::nn::testing {
namespace {

struct RunOutput {
  std::vector<uint32_t> loss_bits;
  std::string digest;
};

RunOutput run(ModelKind kind, int threads, bool flip_one_bit = false) {
  set_num_threads(threads);
  Dataset data = synthetic_images(96, 8, 4, 11);
  if (flip_one_bit) {
    float* p = data.images.data<float>();
    uint32_t b;
    std::memcpy(&b, p, 4);
    b ^= 1u << 22;  // a high mantissa bit of pixel 0 of sample 0
    std::memcpy(p, &b, 4);
  }
  Built built = build_model(kind, 8, 4, 5);
  Adam opt(built.model->named_parameters(), 0.01f);
  TrainConfig cfg;
  cfg.steps = 12;
  cfg.batch_size = 16;
  cfg.input_shape = built.input_shape;
  cfg.schedule = cosine_lr(0.01f, 2, 12);
  cfg.clip_norm = 5.0f;
  TrainResult r = train_classifier(*built.model, opt, data, cfg);
  set_num_threads(1);
  return {loss_bits(r.losses), model_digest(*built.model)};
}

class TrainingIdentity : public ::testing::TestWithParam<ModelKind> {};

TEST_P(TrainingIdentity, SameBitsAtOneTwoThreeThreads) {
  RunOutput one = run(GetParam(), 1);
  ASSERT_EQ(one.loss_bits.size(), 12u);
  for (int threads : {2, 3}) {
    RunOutput other = run(GetParam(), threads);
    EXPECT_EQ(one.loss_bits, other.loss_bits) << "threads " << threads;
    EXPECT_EQ(one.digest, other.digest) << "threads " << threads;
  }
  RunOutput flipped = run(GetParam(), 2, true);
  EXPECT_NE(one.digest, flipped.digest) << "sabotage arm: a one-bit data change must show";
}

INSTANTIATE_TEST_SUITE_P(Models, TrainingIdentity,
                         ::testing::Values(ModelKind::mlp, ModelKind::cnn, ModelKind::lstm),
                         ModelKindName());

TEST(TrainingLoop, NanLossStopsWithTheStep) {
  Dataset data = synthetic_images(32, 4, 2, 3);
  data.images = data.images.clone();
  data.images.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  auto model = make_mlp(16, {8}, 2, 1);
  SGD opt(model->named_parameters(), 0.1f);
  TrainConfig cfg;
  cfg.steps = 50;
  cfg.batch_size = 32;
  cfg.input_shape = {-1, 16};
  try {
    train_classifier(*model, opt, data, cfg);
    FAIL() << "training continued past a NaN loss";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("loss is NaN at step 0"), std::string::npos) << e.what();
  }
}

TEST(TrainingLoop, LossDecreasesOnLearnableData) {
  Dataset data = synthetic_images(256, 4, 2, 3);
  auto model = make_mlp(16, {16}, 2, 1);
  Adam opt(model->named_parameters(), 0.02f);
  TrainConfig cfg;
  cfg.steps = 60;
  cfg.batch_size = 32;
  cfg.input_shape = {-1, 16};
  cfg.schedule = constant_lr(0.02f);
  TrainResult r = train_classifier(*model, opt, data, cfg);
  double first = 0, last = 0;
  for (int i = 0; i < 8; ++i) first += r.losses[i];
  for (int i = 52; i < 60; ++i) last += r.losses[i];
  EXPECT_LT(last, 0.7 * first);
  EXPECT_GT(evaluate_accuracy(*model, data, {-1, 16}, 64), 0.8);
}

TEST(TrainingLoop, BadInputsGiveClearErrors) {
  auto model = make_mlp(16, {8}, 3, 1);
  ag::Var x(Tensor::zeros({4, 15}));
  EXPECT_THROW(model->forward(x), Error);  // shape mismatch between input and Linear
  ag::Var logits(Tensor::zeros({2, 3}), true);
  Tensor bad = Tensor::from_vector(std::vector<int64_t>{0, 3}, {2});
  try {
    cross_entropy(logits, bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("labels must lie in [0, 3)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bl::nn::testing
