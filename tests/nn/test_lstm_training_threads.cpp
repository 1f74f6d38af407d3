// The LSTM at the shape of the classifier benchmark (28 steps of 28 features, hidden 64, batch 64)
// shares its work between threads: the forward cell kernel cuts its rows into tasks from the shape,
// and the recurrent weight's per-step gradient products run after the backward sweep as one batched
// GEMM (src/nn/recurrent.cpp). These tests demand the same bits for every thread count and CPU ISA
// variant: a few training steps (forward, backward, clipping, Adam) give the same loss bits and
// parameter bytes, and the batched product gives each step's matmul bits. A one-bit data change
// must show (sabotage arm).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/isa.h"
#include "core/thread_pool.h"
#include "nn/nn_test_util.h"

namespace bl::nn::testing {
namespace {

// Every CPU variant this machine can run.
std::vector<Isa> cpu_variants() {
  std::vector<Isa> v;
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon})
    if (isa_supported(isa)) v.push_back(isa);
  return v;
}

struct RunOutput {
  std::vector<uint32_t> loss_bits;
  std::string digest;
};

RunOutput train(Isa isa, int threads, bool flip_one_bit = false) {
  const Isa before = active_isa();
  set_active_isa(isa);
  set_num_threads(threads);
  Dataset data = synthetic_images(128, 28, 10, 17);
  if (flip_one_bit) {
    float* p = data.images.data<float>();
    uint32_t b;
    std::memcpy(&b, p + 300, 4);
    b ^= 1u << 20;
    std::memcpy(p + 300, &b, 4);
  }
  auto model = std::make_shared<LstmClassifier>(28, 64, 10, 5);
  Adam opt(model->named_parameters(), 0.005f);
  TrainConfig cfg;
  cfg.steps = 3;
  cfg.batch_size = 64;
  cfg.input_shape = {-1, 28, 28};
  cfg.clip_norm = 1.0f;
  TrainResult r = train_classifier(*model, opt, data, cfg);
  set_num_threads(1);
  set_active_isa(before);
  return {loss_bits(r.losses), model_digest(*model)};
}

TEST(LstmTrainingThreads, SameParameterBytesAtEveryThreadCountAndIsa) {
  const RunOutput want = train(Isa::scalar, 1);
  ASSERT_EQ(want.loss_bits.size(), 3u);
  int runs = 0;
  for (Isa isa : cpu_variants())
    for (int threads : {1, 2, 3}) {
      const RunOutput got = train(isa, threads);
      const std::string ctx = std::string("isa ") + isa_name(isa) + ", threads " + std::to_string(threads);
      EXPECT_EQ(want.loss_bits, got.loss_bits) << ctx;
      EXPECT_EQ(want.digest, got.digest) << ctx;
      ++runs;
    }
  EXPECT_EQ(runs, static_cast<int>(3 * cpu_variants().size()));
  const RunOutput flipped = train(active_isa(), 2, true);
  EXPECT_NE(want.digest, flipped.digest) << "sabotage arm: a one-bit data change must show";
}

// The batched weight-gradient product of the layer, entry k = dgates_k^T h_k ([T, N, 4H] and
// [T, N, H] slices), gives each entry's matmul bits: the classifier's shape (N = 64, H = 64) for a
// few steps, and an odd-sized one.
TEST(LstmTrainingThreads, BatchedWeightProductEqualsEachStepsMatmul) {
  struct Case { int64_t steps, n, g4, h; };
  const Isa before = active_isa();
  int cases = 0;
  for (Case c : {Case{5, 64, 256, 64}, Case{3, 13, 28, 7}}) {
    std::vector<float> av(static_cast<size_t>((c.steps + 1) * c.n * c.g4)), bv(static_cast<size_t>((c.steps + 1) * c.n * c.h));
    for (size_t i = 0; i < av.size(); ++i) av[i] = uniform_element(3, 1, i) * 2 - 1;
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = uniform_element(3, 2, i) * 2 - 1;
    const Tensor a = Tensor::from_vector(av, {c.steps + 1, c.n, c.g4}).slice(0, 1, c.steps + 1);
    const Tensor b = Tensor::from_vector(bv, {c.steps + 1, c.n, c.h}).slice(0, 0, c.steps);
    std::vector<std::string> want;
    set_num_threads(1);
    for (int64_t k = 0; k < c.steps; ++k)
      want.push_back(bl::matmul(a.slice(0, k, k + 1).reshape({c.n, c.g4}), b.slice(0, k, k + 1).reshape({c.n, c.h}),
                                true, false).digest());
    for (Isa isa : cpu_variants())
      for (int threads : {1, 2, 3}) {
        set_active_isa(isa);
        set_num_threads(threads);
        const Tensor got = bl::bmm(a, b, true, false);
        set_active_isa(before);
        set_num_threads(1);
        for (int64_t k = 0; k < c.steps; ++k)
          EXPECT_EQ(want[static_cast<size_t>(k)], got.slice(0, k, k + 1).reshape({c.g4, c.h}).digest())
              << "n " << c.n << " step " << k << " isa " << isa_name(isa) << " threads " << threads;
        ++cases;
      }
  }
  EXPECT_EQ(cases, static_cast<int>(2 * 3 * cpu_variants().size()));
}

}  // namespace
}  // namespace bl::nn::testing
