// test_llm_cuda.cu: causal attention on CUDA equals attention_reference bit for bit under every
// LaunchConfig of kConformanceLaunchConfigs (windows, padding, GQA, long rows, special values);
// every Hugging Face fixture model gives the same logits on CUDA as on the CPU (prefill, KV-cache
// decode, padded batch); a sabotaged reference (softmax sum left to right) differs. Skips without GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "bitlearn/models.h"
#include "bitlearn/ops.h"
#include "bitlearn/ops_attention.h"
#include "bitlearn/safetensors.h"
#include "conformance/harness.h"
#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/skinny_matmul.h"
#include "ops/op_util.h"

namespace bl {
namespace {

#define BL_REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device"

const Device kGpu = Device::cuda(0);

struct Case {
  int64_t batch, q_len, heads, kv_heads, dim, capacity, window;
  bool decode;
  int special_every;
};

TEST(AttentionCuda, MatchesReferenceUnderEveryLaunchConfig) {
  BL_REQUIRE_GPU();
  const Case cases[] = {{1, 1, 1, 1, 1, 1, 0, false, 0},   {2, 5, 4, 2, 16, 5, 0, false, 0},
                        {3, 7, 6, 3, 13, 7, 3, false, 0},  {1, 1, 4, 2, 64, 300, 0, true, 0},
                        {1, 40, 2, 1, 257, 40, 0, false, 0}, {1, 2, 1, 1, 4, 4100, 0, true, 0},
                        {2, 17, 4, 4, 31, 17, 0, false, 5}, {3, 1, 8, 2, 32, 61, 7, true, 7}};
  uint64_t seed = 1;
  for (const Case& c : cases) {
    const int64_t nq = c.batch * c.q_len * c.heads * c.dim, nk = c.batch * c.capacity * c.kv_heads * c.dim;
    const auto q = conformance::generate_floats(nq, seed++, 2.0f, c.special_every);
    const auto k = conformance::generate_floats(nk, seed++, 2.0f, c.special_every);
    const auto v = conformance::generate_floats(nk, seed++, 1.0f, c.special_every);
    std::vector<int64_t> pos, len;
    for (int64_t b = 0; b < c.batch; ++b) {
      const int64_t l = c.decode ? c.capacity - b % 2 : std::max<int64_t>(1, c.q_len - 2 * b);
      len.push_back(l);
      for (int64_t t = 0; t < c.q_len; ++t) pos.push_back(c.decode ? l - c.q_len + t : (t < l ? t : -1));
    }
    AttentionArgs a;
    a.batch = c.batch, a.q_len = c.q_len, a.n_heads = c.heads, a.n_kv_heads = c.kv_heads, a.head_dim = c.dim;
    a.kv_capacity = c.capacity, a.scale = 0.125f, a.window = c.window;
    a.q_st = c.heads * c.dim, a.q_sh = c.dim, a.q_sb = c.q_len * a.q_st;
    a.k_st = c.kv_heads * c.dim, a.k_sh = c.dim, a.k_sb = c.capacity * a.k_st;
    a.v_st = a.k_st, a.v_sh = a.k_sh, a.v_sb = a.k_sb;
    a.o_st = a.q_st, a.o_sh = a.q_sh, a.o_sb = a.q_sb;
    std::vector<float> expected(static_cast<size_t>(nq));
    attention_reference(a, q.data(), k.data(), v.data(), pos.data(), len.data(), expected.data());
    const Tensor qg = Tensor::from_vector(q, {c.batch, c.q_len, c.heads, c.dim}, kGpu);
    const Tensor kg = Tensor::from_vector(k, {c.batch, c.capacity, c.kv_heads, c.dim}, kGpu);
    const Tensor vg = Tensor::from_vector(v, {c.batch, c.capacity, c.kv_heads, c.dim}, kGpu);
    const Tensor pg = Tensor::from_vector(pos, {c.batch, c.q_len}, kGpu);
    const Tensor lg = Tensor::from_vector(len, {c.batch}, kGpu);
    for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
      ScopedLaunchConfig scoped(cfg);
      const Tensor out = causal_attention(qg, kg, vg, pg, lg, a.scale, c.window);
      ASSERT_TRUE(conformance::bits_equal(expected, out.to(Device::cpu()).to_vector<float>(),
                                          "attention cuda dim " + std::to_string(c.dim) + " cap " +
                                              std::to_string(c.capacity) + " block " + std::to_string(cfg.block)));
    }
  }
}

TEST(AttentionCuda, SabotagedSumDiffers) {
  BL_REQUIRE_GPU();
  const int64_t n = 300, D = 64;
  const auto q = conformance::generate_floats(D, 91, 2.0f);
  const auto k = conformance::generate_floats(n * D, 92, 2.0f);
  const auto v = conformance::generate_floats(n * D, 93, 1.0f);
  // Sabotage: the row computed with a left-to-right softmax denominator.
  std::vector<float> s(n);
  float m = StepMax::init();
  for (int64_t j = 0; j < n; ++j) {
    s[j] = attention_score(q.data(), k.data() + j * D, D, 0.125f);
    m = max(m, s[j]);
  }
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) sum = add(sum, exp(sub(s[j], m)));
  for (int64_t j = 0; j < n; ++j) s[j] = softmax_element(s[j], m, sum);
  std::vector<float> sabotaged(D);
  for (int64_t d = 0; d < D; ++d) sabotaged[d] = attention_weighted_value(s.data(), v.data(), D, n, d);
  const Tensor out = causal_attention(Tensor::from_vector(q, {1, 1, 1, D}, kGpu), Tensor::from_vector(k, {1, n, 1, D}, kGpu),
                                      Tensor::from_vector(v, {1, n, 1, D}, kGpu),
                                      Tensor::from_vector(std::vector<int64_t>{n - 1}, {1, 1}, kGpu),
                                      Tensor::from_vector(std::vector<int64_t>{n}, {1}, kGpu), 0.125f, 0);
  EXPECT_FALSE(conformance::bits_equal(sabotaged, out.to(Device::cpu()).to_vector<float>(), "sabotage"));
}

TEST(SkinnyMatmulCuda, MatchesReferenceUnderEveryLaunchConfig) {
  BL_REQUIRE_GPU();
  uint64_t seed = 300;
  for (int64_t m : {1, 3, 4, 5, 16}) {
    for (int64_t n : {1, 33, 768, 1001}) {
      for (int64_t k : {0, 1, 256, 257, 700}) {
        const auto a = conformance::generate_floats(m * k, seed++, 1.0f, 97);
        const auto b = conformance::generate_floats(k * n, seed++, 1.0f, 89);
        std::vector<float> expected(static_cast<size_t>(m * n));
        matmul_reference(matmul_dense_args(1, m, n, k), a.data(), b.data(), expected.data());
        const Tensor ag = Tensor::from_vector(a, {m * k}, kGpu);
        const Tensor bg = Tensor::from_vector(b, {k * n}, kGpu);
        for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
          Tensor cg = Tensor::full({m * n}, 3.0, DType::f32, kGpu);
          skinny_matmul_cuda(static_cast<const float*>(ag.raw_data()), static_cast<const float*>(bg.raw_data()),
                             static_cast<float*>(cg.raw_data()), m, n, k, cfg);
          ASSERT_TRUE(conformance::bits_equal(expected, cg.to(Device::cpu()).to_vector<float>(),
                                              "skinny cuda m " + std::to_string(m) + " n " + std::to_string(n) +
                                                  " k " + std::to_string(k) + " block " + std::to_string(cfg.block)));
        }
      }
    }
  }
}

class HfModelCuda : public ::testing::TestWithParam<std::string> {};

TEST_P(HfModelCuda, SameLogitsAsCpu) {
  BL_REQUIRE_GPU();
  const std::string dir = std::string(BITLEARN_SOURCE_DIR) + "/tests/data/hf/" + GetParam();
  const models::CausalLM cpu = models::CausalLM::load(dir, Device::cpu());
  const models::CausalLM gpu = models::CausalLM::load(dir, kGpu);
  const auto ids64 = SafetensorsFile::open(dir + "/reference.safetensors").get("input_ids").to_vector<int64_t>();
  const std::vector<int32_t> ids(ids64.begin(), ids64.end());
  const std::vector<int32_t> part(ids.begin(), ids.begin() + 20);
  EXPECT_EQ(gpu.forward({ids}).digest(), cpu.forward({ids}).digest()) << GetParam();
  EXPECT_EQ(gpu.forward({part, ids}).digest(), cpu.forward({part, ids}).digest()) << GetParam();
  models::KvCache cc = cpu.new_cache(1, 48), gc = gpu.new_cache(1, 48);
  EXPECT_EQ(gpu.forward({part}, &gc).digest(), cpu.forward({part}, &cc).digest());
  for (int t = 20; t < 26; ++t)
    EXPECT_EQ(gpu.forward({{ids[t]}}, &gc).digest(), cpu.forward({{ids[t]}}, &cc).digest()) << "step " << t;
  models::GenerateOptions o;
  o.max_new_tokens = 8, o.temperature = 0.8f, o.seed = 7, o.stop_at_eos = false;
  EXPECT_EQ(models::generate(gpu, part, o), models::generate(cpu, part, o)) << GetParam();
  // Several prompts generated together on the GPU: each sequence is the CPU's alone.
  const std::vector<std::vector<int32_t>> prompts = {part, {1}, {5, 6, 7, 8, 9, 10, 11}};
  const auto together = models::generate_batch(gpu, prompts, o);
  for (size_t i = 0; i < prompts.size(); ++i)
    EXPECT_EQ(together[i], models::generate(cpu, prompts[i], o)) << GetParam() << " sequence " << i;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfModelCuda,
                         ::testing::Values("gpt2", "llama", "qwen2", "mistral", "phi3", "gemma", "mamba", "mamba2"));

}  // namespace
}  // namespace bl
