// test_attention_cuda.cu: the three CUDA attention kernels (tiled for prefill shapes, warp rows,
// block rows, the fallback) equal attention_reference bit for bit over many shapes (grouped-query heads, sliding
// windows, padding rows, kv_len 0 / 1 / odd / > 32 / > 256 / > 4096, head_dim 1 / odd / 64 / 128 /
// 256 / 257, packed q|k|v rows as in GPT-2, special values) under several launch configs; the tiled and
// warp-rows kernels folding their softmax lanes in another order differ (sabotage arm). Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"
#include "conformance/harness.h"
#include "core/cuda_check.h"
#include "kernels/attention.h"

namespace bl {
namespace {

#define BL_REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device"

const Device kGpu = Device::cuda(0);

// prefill: padded batch of prompts; decode: the last q_len positions of each sequence; packed: one
// [b][t][3][h][d] array as in GPT-2; empty_second: sequence 1 has no keys; shifted: prefill with
// every array one float past a 16-byte boundary (no vector loads).
enum class Layout { prefill, decode, packed, empty_second, shifted };

struct Case {
  int64_t batch, q_len, heads, kv_heads, dim, capacity, window;
  Layout layout;
  int special_every;
};

std::string describe(const Case& c, const LaunchConfig& cfg) {
  return "batch " + std::to_string(c.batch) + " q_len " + std::to_string(c.q_len) + " heads " +
         std::to_string(c.heads) + "/" + std::to_string(c.kv_heads) + " dim " + std::to_string(c.dim) + " cap " +
         std::to_string(c.capacity) + " window " + std::to_string(c.window) + " block " + std::to_string(cfg.block) +
         " grid_cap " + std::to_string(cfg.grid_cap) + " variant " + std::to_string(cfg.variant);
}

// Positions and key counts of a case: prefill rows past a sequence's length are padding (-1).
void positions(const Case& c, std::vector<int64_t>* pos, std::vector<int64_t>* len) {
  for (int64_t b = 0; b < c.batch; ++b) {
    int64_t l = c.layout == Layout::decode ? c.capacity - b % 2 : std::max<int64_t>(1, c.q_len - 2 * b);
    if (c.layout == Layout::empty_second && b == 1) l = 0;
    len->push_back(l);
    for (int64_t t = 0; t < c.q_len; ++t) {
      if (c.layout == Layout::decode) pos->push_back(l - c.q_len + t);
      else pos->push_back(t < l ? t : -1);
    }
  }
}

// Strides of q, k, v, out: separate [b][t][h][d] arrays, or one packed [b][t][3][h][d] array.
AttentionArgs make_args(const Case& c) {
  AttentionArgs a;
  a.batch = c.batch, a.q_len = c.q_len, a.n_heads = c.heads, a.n_kv_heads = c.kv_heads, a.head_dim = c.dim;
  a.kv_capacity = c.capacity, a.scale = 0.125f, a.window = c.window;
  if (c.layout == Layout::packed) {
    a.q_st = 3 * c.heads * c.dim, a.q_sh = c.dim, a.q_sb = c.q_len * a.q_st;
    a.k_st = a.q_st, a.k_sh = c.dim, a.k_sb = a.q_sb;
  } else {
    a.q_st = c.heads * c.dim, a.q_sh = c.dim, a.q_sb = c.q_len * a.q_st;
    a.k_st = c.kv_heads * c.dim, a.k_sh = c.dim, a.k_sb = c.capacity * a.k_st;
  }
  a.v_st = a.k_st, a.v_sh = a.k_sh, a.v_sb = a.k_sb;
  a.o_st = c.heads * c.dim, a.o_sh = c.dim, a.o_sb = c.q_len * a.o_st;
  return a;
}

void run_case(const Case& c, const std::vector<LaunchConfig>& configs, uint64_t seed) {
  const AttentionArgs a = make_args(c);
  const int64_t n_out = c.batch * c.q_len * c.heads * c.dim;
  std::vector<float> q, k, v;
  int64_t q_offset = 0, k_offset = 0, v_offset = 0;
  if (c.layout == Layout::packed) {
    q = conformance::generate_floats(c.batch * c.q_len * 3 * c.heads * c.dim, seed, 2.0f, c.special_every);
    k = q, v = q;
    k_offset = c.heads * c.dim, v_offset = 2 * c.heads * c.dim;
  } else {
    const int64_t nk = c.batch * c.capacity * c.kv_heads * c.dim;
    q = conformance::generate_floats(n_out, seed, 2.0f, c.special_every);
    k = conformance::generate_floats(nk, seed + 1, 2.0f, c.special_every);
    v = conformance::generate_floats(nk, seed + 2, 1.0f, c.special_every);
    if (c.layout == Layout::shifted) {
      q.insert(q.begin(), 5.0f), k.insert(k.begin(), 5.0f), v.insert(v.begin(), 5.0f);
      q_offset = k_offset = v_offset = 1;
    }
  }
  std::vector<int64_t> pos, len;
  positions(c, &pos, &len);
  std::vector<float> expected(static_cast<size_t>(n_out));
  attention_reference(a, q.data() + q_offset, k.data() + k_offset, v.data() + v_offset, pos.data(), len.data(), expected.data());
  const Tensor qg = Tensor::from_vector(q, {static_cast<int64_t>(q.size())}, kGpu);
  const Tensor kg = Tensor::from_vector(k, {static_cast<int64_t>(k.size())}, kGpu);
  const Tensor vg = Tensor::from_vector(v, {static_cast<int64_t>(v.size())}, kGpu);
  const Tensor pg = Tensor::from_vector(pos, {static_cast<int64_t>(pos.size())}, kGpu);
  const Tensor lg = Tensor::from_vector(len, {static_cast<int64_t>(len.size())}, kGpu);
  for (const LaunchConfig& cfg : configs) {
    Tensor og = Tensor::full({n_out}, 3.0, DType::f32, kGpu);
    attention_cuda(a, static_cast<const float*>(qg.raw_data()) + q_offset, static_cast<const float*>(kg.raw_data()) + k_offset,
                   static_cast<const float*>(vg.raw_data()) + v_offset, static_cast<const int64_t*>(pg.raw_data()),
                   static_cast<const int64_t*>(lg.raw_data()), static_cast<float*>(og.raw_data()), cfg);
    ASSERT_TRUE(conformance::bits_equal(expected, og.to(Device::cpu()).to_vector<float>(), describe(c, cfg)));
  }
}

// The default choice (tiled or warp rows, whichever applies) under every conformance launch shape,
// plus one group per block striding over the tiles and 512 threads.
std::vector<LaunchConfig> default_configs() {
  std::vector<LaunchConfig> configs(std::begin(kConformanceLaunchConfigs), std::end(kConformanceLaunchConfigs));
  configs.push_back({32, 2, 0});
  configs.push_back({512, 0, 0});
  return configs;
}

std::vector<LaunchConfig> warp_rows_configs() {
  std::vector<LaunchConfig> configs;
  for (const LaunchConfig& c : kConformanceLaunchConfigs) configs.push_back({c.block, c.grid_cap, kAttentionVariantWarpRows});
  configs.push_back({32, 2, kAttentionVariantWarpRows});    // one row per block, two blocks striding over the tiles
  configs.push_back({1024, 0, kAttentionVariantWarpRows});  // 32 rows per block
  return configs;
}

// The tiled kernel with its scores computed three times instead of stored.
std::vector<LaunchConfig> tiled_recompute_configs() {
  std::vector<LaunchConfig> configs;
  for (const LaunchConfig& c : default_configs()) configs.push_back({c.block, c.grid_cap, kAttentionVariantTiledRecompute});
  return configs;
}

std::vector<LaunchConfig> block_rows_configs() {
  return {{256, 0, kAttentionVariantBlockRows}, {64, 5, kAttentionVariantBlockRows},
          {1024, 2, kAttentionVariantBlockRows}};
}

const Case kCases[] = {
    {1, 1, 1, 1, 1, 1, 0, Layout::prefill, 0},        // one key, head_dim 1
    {2, 5, 4, 2, 16, 5, 0, Layout::prefill, 0},        // grouped-query heads, padding rows
    {3, 7, 6, 3, 13, 7, 3, Layout::prefill, 0},        // window 3, odd head_dim
    {1, 1, 4, 2, 64, 300, 0, Layout::decode, 0},       // > 256 keys: two GEMM leaves over keys
    {1, 3, 2, 2, 256, 600, 0, Layout::decode, 0},      // head_dim 256, three GEMM leaves
    {1, 40, 2, 1, 257, 40, 0, Layout::prefill, 0},     // head_dim 257: two GEMM leaves over d
    {1, 2, 1, 1, 4, 4100, 0, Layout::decode, 0},       // > 4096 keys: two softmax leaves
    {1, 1, 2, 1, 64, 8193, 0, Layout::decode, 0},      // three softmax leaves
    {2, 17, 4, 4, 31, 17, 0, Layout::prefill, 5},      // special values
    {3, 1, 8, 2, 32, 61, 7, Layout::decode, 7},        // window in decode, special values
    {1, 128, 12, 12, 64, 128, 0, Layout::packed, 0},   // GPT-2 124M prefill rows, packed q|k|v
    {2, 33, 4, 1, 128, 33, 0, Layout::prefill, 0},     // head_dim 128, 4 heads per key head, 33 keys
    {1, 70, 2, 2, 64, 70, 16, Layout::prefill, 3},     // window 16 over 70 keys
    {3, 9, 2, 2, 8, 9, 0, Layout::empty_second, 0},    // a sequence with kv_len 0
    {1, 300, 1, 1, 33, 300, 0, Layout::prefill, 11},   // 300 queries over up to 300 keys
    {2, 20, 4, 2, 64, 20, 0, Layout::shifted, 0},     // head_dim 64 without vector loads
    {1, 1, 1, 1, 4, 50000, 0, Layout::decode, 0},      // scores beyond shared memory: block rows
};

// Shapes the tiled kernel takes (window 0, >= 16 queries, head_dim a multiple of 4 up to 128).
const Case kTiledCases[] = {
    {2, 600, 2, 1, 64, 600, 0, Layout::prefill, 0},     // padding rows, three GEMM leaves over keys
    {1, 37, 3, 3, 32, 37, 0, Layout::prefill, 5},       // head_dim 32, special values
    {2, 20, 2, 1, 64, 4200, 0, Layout::decode, 0},      // two softmax leaves, kv_len 4200 / 4199
    {1, 70, 4, 2, 128, 300, 0, Layout::decode, 7},      // head_dim 128, special values
    {1, 17, 2, 2, 96, 17, 0, Layout::prefill, 3},       // head_dim 96
    {3, 24, 2, 2, 16, 24, 0, Layout::empty_second, 0},  // a sequence with kv_len 0
    {1, 256, 2, 2, 64, 257, 0, Layout::decode, 11},     // rows ending on both sides of a GEMM leaf
    {1, 2048, 2, 1, 64, 2048, 0, Layout::prefill, 0},   // the 162M training rows: 16 tiles per head
};

TEST(AttentionCuda, DefaultKernelMatchesReference) {
  BL_REQUIRE_GPU();
  uint64_t seed = 500;
  for (const Case& c : kCases) run_case(c, default_configs(), seed += 3);
  for (const Case& c : kTiledCases) run_case(c, default_configs(), seed += 3);
}

TEST(AttentionCuda, WarpRowsMatchReference) {
  BL_REQUIRE_GPU();
  uint64_t seed = 700;
  for (const Case& c : kCases) run_case(c, warp_rows_configs(), seed += 3);
  for (const Case& c : kTiledCases) run_case(c, warp_rows_configs(), seed += 3);
}

TEST(AttentionCuda, TiledRecomputeMatchesReference) {
  BL_REQUIRE_GPU();
  uint64_t seed = 800;
  for (const Case& c : kTiledCases) run_case(c, tiled_recompute_configs(), seed += 3);
}

TEST(AttentionCuda, BlockRowsMatchReference) {
  BL_REQUIRE_GPU();
  uint64_t seed = 900;
  for (const Case& c : kCases) run_case(c, block_rows_configs(), seed += 3);
}

// The default kernel with its softmax lanes folded in another order differs from the reference,
// while the default kernel equals it: warp rows (one decode row) and tiled (a prefill block).
void check_sabotaged_fold(const Case& c) {
  const AttentionArgs a = make_args(c);
  const int64_t n_q = c.batch * c.q_len * c.heads * c.dim, n_k = c.batch * c.capacity * c.kv_heads * c.dim;
  const auto q = conformance::generate_floats(n_q, 41, 2.0f);
  const auto k = conformance::generate_floats(n_k, 42, 2.0f);
  const auto v = conformance::generate_floats(n_k, 43, 1.0f);
  std::vector<int64_t> pos, len;
  positions(c, &pos, &len);
  std::vector<float> expected(static_cast<size_t>(n_q));
  attention_reference(a, q.data(), k.data(), v.data(), pos.data(), len.data(), expected.data());
  const Tensor qg = Tensor::from_vector(q, {n_q}, kGpu);
  const Tensor kg = Tensor::from_vector(k, {n_k}, kGpu);
  const Tensor vg = Tensor::from_vector(v, {n_k}, kGpu);
  const Tensor pg = Tensor::from_vector(pos, {static_cast<int64_t>(pos.size())}, kGpu);
  const Tensor lg = Tensor::from_vector(len, {static_cast<int64_t>(len.size())}, kGpu);
  const auto* qp = static_cast<const float*>(qg.raw_data());
  const auto* kp = static_cast<const float*>(kg.raw_data());
  const auto* vp = static_cast<const float*>(vg.raw_data());
  const auto* pp = static_cast<const int64_t*>(pg.raw_data());
  const auto* lp = static_cast<const int64_t*>(lg.raw_data());
  Tensor good = Tensor::full({n_q}, 3.0, DType::f32, kGpu);
  attention_cuda(a, qp, kp, vp, pp, lp, static_cast<float*>(good.raw_data()));
  EXPECT_TRUE(conformance::bits_equal(expected, good.to(Device::cpu()).to_vector<float>(), "default kernel"));
  Tensor bad = Tensor::full({n_q}, 3.0, DType::f32, kGpu);
  attention_cuda_sabotaged_fold(a, qp, kp, vp, pp, lp, static_cast<float*>(bad.raw_data()));
  EXPECT_FALSE(conformance::bits_equal(expected, bad.to(Device::cpu()).to_vector<float>(), "sabotaged fold"));
}

TEST(AttentionCuda, SabotagedLaneFoldDiffers) {
  BL_REQUIRE_GPU();
  check_sabotaged_fold({1, 1, 1, 1, 64, 300, 0, Layout::decode, 0});    // warp rows
  check_sabotaged_fold({1, 64, 2, 2, 64, 300, 0, Layout::decode, 0});   // tiled
}

}  // namespace
}  // namespace bl
