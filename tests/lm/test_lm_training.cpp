// test_lm_training.cpp: the language-model trainer gives the same bits whatever the micro-batch
// grouping of its logical shards, the thread count, activation recomputation and resumption; and
// its gradients agree with finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "bitlearn/io.h"
#include "bitlearn/lm.h"
#include "bitlearn/nn/checkpoint.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "lm/lm_test_util.h"

namespace bl::lm {
namespace {

using testing::temp_dir;
using testing::tiny_options;

std::vector<std::string> hashes(const TrainResult& r) {
  std::vector<std::string> out;
  for (const auto& s : r.steps) out.push_back(s.params_sha256);
  return out;
}

std::vector<uint32_t> loss_bits(const TrainResult& r) {
  std::vector<uint32_t> out;
  for (const auto& s : r.steps) {
    uint32_t u;
    std::memcpy(&u, &s.loss, 4);
    out.push_back(u);
    std::memcpy(&u, &s.grad_norm, 4);
    out.push_back(u);
  }
  return out;
}

class LmIdentity : public ::testing::TestWithParam<std::string> {};

TEST_P(LmIdentity, MicroBatchingThreadsAndRecomputationKeepEveryBit) {
  const std::string dir = temp_dir("id_" + GetParam());
  TrainOptions base = tiny_options(dir, GetParam());
  const TrainResult ref = train(base);
  ASSERT_EQ(ref.steps.size(), 6u);
  EXPECT_LT(ref.steps.back().loss, ref.steps.front().loss) << "the loss did not fall";
  for (int64_t acc : {2, 4}) {
    TrainOptions o = base;
    o.accumulate = acc;
    const TrainResult r = train(o);
    EXPECT_EQ(hashes(r), hashes(ref)) << "micro-batches of " << 4 / acc << " shards";
    EXPECT_EQ(loss_bits(r), loss_bits(ref));
  }
  {
    TrainOptions o = base;
    o.recompute = true;
    o.accumulate = 2;
    EXPECT_EQ(hashes(train(o)), hashes(ref)) << "activation recomputation";
  }
  const int saved_threads = num_threads();
  for (int threads : {1, 2, 3}) {
    TrainOptions o = base;
    o.threads = threads;
    EXPECT_EQ(hashes(train(o)), hashes(ref)) << threads << " threads";
  }
  set_num_threads(saved_threads);
}

INSTANTIATE_TEST_SUITE_P(Architectures, LmIdentity, ::testing::Values("llama", "gpt2", "qwen2"));

TEST(LmIdentity, TiedHeadIsInvariantToMicroBatching) {
  const std::string dir = temp_dir("tied");
  TrainOptions base = tiny_options(dir, "llama", true);
  base.steps = 3;
  const TrainResult ref = train(base);
  TrainOptions o = base;
  o.accumulate = 4;
  EXPECT_EQ(hashes(train(o)), hashes(ref));
}

// Sabotage arm: the shard count is part of the definition of the gradient; grouping the same
// sequences into other shards changes the bits, so the tests above would see a wrong fold.
TEST(LmIdentity, SabotageOtherShardingChangesTheBits) {
  const std::string dir = temp_dir("sab");
  TrainOptions base = tiny_options(dir, "llama");
  base.steps = 2;
  const TrainResult ref = train(base);
  TrainOptions o = base;
  o.shards = 2;
  EXPECT_NE(hashes(train(o)), hashes(ref));
}

TEST(LmResume, StopAndResumeGiveTheUninterruptedBits) {
  const std::string dir = temp_dir("resume");
  TrainOptions whole = tiny_options(dir, "llama");
  whole.checkpoint = dir + "/whole.ckpt";
  const TrainResult ref = train(whole);
  TrainOptions part = tiny_options(dir, "llama");
  part.checkpoint = dir + "/part.ckpt";
  part.stop_at = 3;
  const TrainResult first = train(part);
  EXPECT_EQ(first.last_step, 3);
  part.stop_at = 0;
  part.resume = true;
  part.accumulate = 2;  // grouping may change on resume: the bits do not
  const TrainResult second = train(part);
  EXPECT_EQ(second.first_step, 3);
  std::vector<std::string> joined = hashes(first);
  for (const auto& h : hashes(second)) joined.push_back(h);
  EXPECT_EQ(joined, hashes(ref));
  EXPECT_EQ(second.checkpoint_sha256, ref.checkpoint_sha256);
  EXPECT_EQ(read_file_bytes(dir + "/whole.ckpt"), read_file_bytes(dir + "/part.ckpt"));
}

TEST(LmResume, OtherHyperparametersAreRefused) {
  const std::string dir = temp_dir("refuse");
  TrainOptions o = tiny_options(dir, "llama");
  o.checkpoint = dir + "/c.ckpt";
  o.stop_at = 2;
  train(o);
  o.stop_at = 0;
  o.resume = true;
  o.lr = 1e-3f;
  try {
    train(o);
    FAIL() << "resumed with another learning rate";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lr"), std::string::npos) << e.what();
  }
}

TEST(LmExport, HuggingFaceFolderLoadsBackWithTheSameWeights) {
  const std::string dir = temp_dir("export");
  TrainOptions o = tiny_options(dir, "llama");
  o.steps = 2;
  o.save_hf = dir + "/hf";
  const TrainResult r = train(o);
  ASSERT_TRUE(std::filesystem::exists(dir + "/hf/tokenizer.json"));
  auto back = Transformer::from_hf_dir(dir + "/hf");
  EXPECT_EQ(params_sha256(*back), r.final_params_sha256);
  // And the inference model runs it.
  const models::CausalLM lm = models::CausalLM::load(dir + "/hf");
  const Tensor logits = lm.forward(Tensor::from_vector(std::vector<int64_t>{1, 2, 3}, {1, 3}));
  EXPECT_EQ(logits.dim(2), 384);
}

// d loss / d theta along random directions against central differences of the loss.
TEST(LmGradient, AgreesWithFiniteDifferences) {
  for (const std::string type : {"llama", "gpt2"}) {
    const std::string dir = temp_dir("fd_" + type);
    const models::ModelConfig c = models::load_config(testing::tiny_config(dir, type));
    Transformer m(c, 3);
    const int64_t T = 16, B = 2, N = B * T;
    std::vector<int64_t> ids(N), labels(N);
    for (int64_t i = 0; i < N; ++i) {
      ids[i] = (i * 37 + 11) % 384;
      labels[i] = (i * 53 + 5) % 384;
    }
    const Tensor it = Tensor::from_vector(ids, {N}), lt = Tensor::from_vector(labels, {N});
    auto L = m.loss(it, lt, 2, 1, T, 0.5f);
    ag::backward(L.root);
    m.finish_grads();
    auto params = m.named_parameters();
    int checked = 0;
    for (size_t pi = 0; pi < params.size(); pi += 3) {
      // Named references, not a structured binding: C++17 lambdas cannot capture bindings (clang).
      const std::string& name = params[pi].first;
      auto& v = params[pi].second;
      const Tensor p0 = v.value().clone();
      const Tensor g = v.grad();
      ASSERT_TRUE(g.defined()) << name;
      // Direction: the sign pattern of a hash of the index, scaled by eps.
      std::vector<float> d(static_cast<size_t>(p0.numel()));
      for (size_t i = 0; i < d.size(); ++i) d[i] = ((i * 2654435761u) >> 7) % 2 ? 1.0f : -1.0f;
      const Tensor dir_t = Tensor::from_vector(d, p0.shape());
      const double analytic = sum(mul(g, dir_t)).item();
      const float eps = 1e-3f;
      auto loss_at = [&](float sgn) {
        v.set_value(add(p0, mul(dir_t, Tensor::scalar(sgn * eps))));
        auto e = m.eval_loss(it, lt, 2, 1, T);
        return 0.5 * (e[0].item() + e[1].item());
      };
      const double numeric = (loss_at(1) - loss_at(-1)) / (2 * eps);
      v.set_value(p0);
      EXPECT_NEAR(analytic, numeric, 0.03 * std::abs(numeric) + 2e-3) << type << " " << name;
      ++checked;
    }
    EXPECT_GT(checked, 5);
  }
}

}  // namespace
}  // namespace bl::lm
