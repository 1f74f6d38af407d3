// Conformance of causal attention: attention_cpu (threads 1, 2, 3) and the Tensor op
// causal_attention equal attention_reference bit for bit over many shapes, windows, padding and
// special values; decode equals prefill and a sequence alone equals it inside a padded batch; a
// sabotage arm (the softmax denominator summed left to right instead of by the lane schedule) must
// be caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "bitlearn/ops.h"
#include "bitlearn/ops_attention.h"
#include "conformance/harness.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"

namespace bl {
namespace {

using conformance::bits_equal;
using conformance::generate_floats;

struct AttnCase {
  int64_t batch, q_len, heads, kv_heads, dim, capacity, window;
  bool decode;        // q_len queries at the end of each sequence (else prefill from position 0)
  bool ragged;        // kv_len differs per sequence, padding rows present
  int special_every;  // special values in q, k, v
};

struct AttnData {
  AttentionArgs args;
  std::vector<float> q, k, v;
  std::vector<int64_t> pos, len;
};

AttnData make_data(const AttnCase& c, uint64_t seed) {
  AttnData d;
  AttentionArgs& a = d.args;
  a.batch = c.batch, a.q_len = c.q_len, a.n_heads = c.heads, a.n_kv_heads = c.kv_heads, a.head_dim = c.dim;
  a.kv_capacity = c.capacity;
  a.scale = 0.125f;
  a.window = c.window;
  a.q_st = c.heads * c.dim, a.q_sh = c.dim, a.q_sb = c.q_len * a.q_st;
  a.k_st = c.kv_heads * c.dim, a.k_sh = c.dim, a.k_sb = c.capacity * a.k_st;
  a.v_st = a.k_st, a.v_sh = a.k_sh, a.v_sb = a.k_sb;
  a.o_st = a.q_st, a.o_sh = a.q_sh, a.o_sb = a.q_sb;
  d.q = generate_floats(c.batch * c.q_len * c.heads * c.dim, seed, 2.0f, c.special_every);
  d.k = generate_floats(c.batch * c.capacity * c.kv_heads * c.dim, seed + 1, 2.0f, c.special_every);
  d.v = generate_floats(c.batch * c.capacity * c.kv_heads * c.dim, seed + 2, 1.0f, c.special_every);
  for (int64_t b = 0; b < c.batch; ++b) {
    int64_t len = c.decode ? c.capacity : std::min(c.q_len, c.capacity);
    if (c.ragged) len = std::max<int64_t>(0, len - (b * 5) % (len + 1));
    d.len.push_back(len);
    for (int64_t t = 0; t < c.q_len; ++t) {
      int64_t p = c.decode ? len - c.q_len + t : t;
      if (c.ragged && !c.decode && t >= len) p = -1;  // padding row
      d.pos.push_back(p);
    }
  }
  return d;
}

std::vector<AttnCase> cases() {
  return {
      {1, 1, 1, 1, 1, 1, 0, false, false, 0},     {2, 5, 4, 2, 16, 5, 0, false, false, 0},
      {3, 7, 6, 3, 13, 7, 0, false, true, 0},     {2, 33, 4, 1, 16, 33, 16, false, false, 0},
      {1, 1, 4, 2, 64, 300, 0, true, false, 0},   {2, 3, 2, 2, 8, 97, 5, true, true, 0},
      {1, 40, 2, 1, 257, 40, 0, false, false, 0}, {1, 2, 1, 1, 4, 4100, 0, true, false, 0},
      {2, 17, 4, 4, 31, 17, 0, false, true, 5},   {0, 3, 2, 1, 8, 3, 0, false, false, 0},
      {1, 3, 2, 1, 0, 3, 0, false, false, 0},     {3, 1, 8, 2, 32, 61, 7, true, true, 7},
      // Across the vector path's query blocks (16), key groups (32, 8) and head_dim groups
      // (32, 8, scalar tail); a long decode cache (several value leaves); a window over blocks.
      {2, 70, 4, 2, 72, 70, 0, false, true, 11},  {1, 20, 3, 1, 12, 600, 0, true, false, 0},
      {1, 50, 2, 2, 40, 50, 19, false, false, 3}, {1, 128, 2, 2, 64, 128, 0, false, false, 0},
  };
}

std::vector<float> run_reference(const AttnData& d) {
  std::vector<float> out(d.q.size(), 1.0f);
  attention_reference(d.args, d.q.data(), d.k.data(), d.v.data(), d.pos.data(), d.len.data(), out.data());
  return out;
}

TEST(AttentionConformance, CpuEqualsReferenceAtAnyThreadCount) {
  uint64_t seed = 100;
  for (const AttnCase& c : cases()) {
    const AttnData d = make_data(c, seed++);
    const std::vector<float> expected = run_reference(d);
    for (int threads : conformance::kThreadCounts) {
      ThreadPool pool(threads);
      std::vector<float> out(d.q.size(), 2.0f);
      attention_cpu(d.args, d.q.data(), d.k.data(), d.v.data(), d.pos.data(), d.len.data(), out.data(), pool);
      EXPECT_TRUE(bits_equal(expected, out, "attention_cpu threads " + std::to_string(threads) + " case dim " +
                                                std::to_string(c.dim) + " cap " + std::to_string(c.capacity)));
    }
  }
}

TEST(AttentionConformance, TensorOpEqualsReferenceOnStridedViews) {
  uint64_t seed = 500;
  for (const AttnCase& c : cases()) {
    if (c.batch == 0 || c.dim == 0) continue;
    const AttnData d = make_data(c, seed++);
    const std::vector<float> expected = run_reference(d);
    Tensor q = Tensor::from_vector(d.q, {c.batch, c.q_len, c.heads, c.dim});
    // k and v live inside a wider cache (twice the slots, one extra head) and are used in place.
    Tensor kbig = Tensor::zeros({c.batch, 2 * c.capacity, c.kv_heads + 1, c.dim});
    Tensor vbig = Tensor::zeros({c.batch, 2 * c.capacity, c.kv_heads + 1, c.dim});
    Tensor kview = kbig.slice(1, 0, c.capacity).slice(2, 1, c.kv_heads + 1);
    Tensor vview = vbig.slice(1, 0, c.capacity).slice(2, 1, c.kv_heads + 1);
    copy_into(kview, Tensor::from_vector(d.k, {c.batch, c.capacity, c.kv_heads, c.dim}));
    copy_into(vview, Tensor::from_vector(d.v, {c.batch, c.capacity, c.kv_heads, c.dim}));
    Tensor out = causal_attention(q, kview, vview, Tensor::from_vector(d.pos, {c.batch, c.q_len}),
                                  Tensor::from_vector(d.len, {c.batch}), d.args.scale, c.window);
    EXPECT_TRUE(bits_equal(expected, out.to_vector<float>(), "causal_attention cap " + std::to_string(c.capacity)));
  }
}

TEST(AttentionConformance, DecodeEqualsPrefillAndBatchInvariance) {
  const int64_t T = 29, H = 4, G = 2, D = 16;
  for (int64_t window : {int64_t(0), int64_t(8)}) {
    Tensor q = Tensor::from_vector(generate_floats(T * H * D, 7, 2.0f), {1, T, H, D});
    Tensor k = Tensor::from_vector(generate_floats(T * G * D, 8, 2.0f), {1, T, G, D});
    Tensor v = Tensor::from_vector(generate_floats(T * G * D, 9, 1.0f), {1, T, G, D});
    Tensor pos = Tensor::arange(T).reshape({1, T});
    Tensor prefill = causal_attention(q, k, v, pos, Tensor::from_vector(std::vector<int64_t>{T}, {1}), 0.25f, window);
    // Decode: query t alone against the first t + 1 keys of a cache of capacity T.
    for (int64_t t = 0; t < T; ++t) {
      Tensor step = causal_attention(q.slice(1, t, t + 1), k, v, Tensor::from_vector(std::vector<int64_t>{t}, {1, 1}),
                                     Tensor::from_vector(std::vector<int64_t>{t + 1}, {1}), 0.25f, window);
      EXPECT_EQ(step.digest(), prefill.slice(1, t, t + 1).contiguous().digest()) << "t " << t << " window " << window;
    }
    // Batch: the same sequence as row 1 of 3, other rows longer/shorter, padded to T + 6.
    const int64_t Tp = T + 6;
    Tensor qb = Tensor::from_vector(generate_floats(3 * Tp * H * D, 11, 2.0f), {3, Tp, H, D});
    Tensor kb = Tensor::from_vector(generate_floats(3 * Tp * G * D, 12, 2.0f), {3, Tp, G, D});
    Tensor vb = Tensor::from_vector(generate_floats(3 * Tp * G * D, 13, 1.0f), {3, Tp, G, D});
    Tensor row_q = qb.slice(0, 1, 2).slice(1, 0, T), row_k = kb.slice(0, 1, 2).slice(1, 0, T),
           row_v = vb.slice(0, 1, 2).slice(1, 0, T);
    copy_into(row_q, q);
    copy_into(row_k, k);
    copy_into(row_v, v);
    std::vector<int64_t> positions;
    const int64_t lens[3] = {Tp, T, 5};
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t t = 0; t < Tp; ++t) positions.push_back(t < lens[b] ? t : -1);
    Tensor batched = causal_attention(qb, kb, vb, Tensor::from_vector(positions, {3, Tp}),
                                      Tensor::from_vector(std::vector<int64_t>{Tp, T, 5}, {3}), 0.25f, window);
    EXPECT_EQ(batched.slice(0, 1, 2).slice(1, 0, T).contiguous().digest(), prefill.digest()) << "window " << window;
    // Padding rows are +0.
    const auto pad = batched.slice(0, 2, 3).slice(1, 5, Tp).contiguous().to_vector<float>();
    for (float x : pad) EXPECT_EQ(bits_of(x), 0u);
  }
}

// Sabotage: the same row with the softmax denominator summed left to right (no lanes).
std::vector<float> sabotaged_reference(const AttnData& d) {
  const AttentionArgs& a = d.args;
  std::vector<float> out(d.q.size(), 0.0f);
  std::vector<float> s(static_cast<size_t>(a.kv_capacity) + 1);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t t = 0; t < a.q_len; ++t)
      for (int64_t h = 0; h < a.n_heads; ++h) {
        float* o = out.data() + b * a.o_sb + t * a.o_st + h * a.o_sh;
        int64_t lo = 0, hi = -1;
        attention_key_range(d.pos[b * a.q_len + t], d.len[b], a.window, &lo, &hi);
        const int64_t n = hi >= lo ? hi - lo + 1 : 0;
        const int64_t g = h / (a.n_heads / a.n_kv_heads);
        const float* qr = d.q.data() + b * a.q_sb + t * a.q_st + h * a.q_sh;
        float m = StepMax::init();
        for (int64_t j = 0; j < n; ++j) {
          s[j] = attention_score(qr, d.k.data() + b * a.k_sb + (lo + j) * a.k_st + g * a.k_sh, a.head_dim, a.scale);
          m = max(m, s[j]);
        }
        float sum = 0.0f;
        for (int64_t j = 0; j < n; ++j) sum = add(sum, exp(sub(s[j], m)));
        for (int64_t j = 0; j < n; ++j) s[j] = softmax_element(s[j], m, sum);
        for (int64_t dd = 0; dd < a.head_dim; ++dd)
          o[dd] = n == 0 ? 0.0f
                         : attention_weighted_value(s.data(), d.v.data() + b * a.v_sb + lo * a.v_st + g * a.v_sh,
                                                    a.v_st, n, dd);
      }
  return out;
}

TEST(AttentionConformance, SabotagedScheduleIsCaught) {
  const AttnData d = make_data({1, 1, 4, 2, 64, 300, 0, true, false, 0}, 900);
  ThreadPool pool(2);
  std::vector<float> out(d.q.size());
  attention_cpu(d.args, d.q.data(), d.k.data(), d.v.data(), d.pos.data(), d.len.data(), out.data(), pool);
  EXPECT_FALSE(bits_equal(sabotaged_reference(d), out, "sabotage"));
}

TEST(AttentionConformance, BadOperandsAreNamed) {
  Tensor q = Tensor::zeros({1, 2, 4, 8}), k = Tensor::zeros({1, 2, 3, 8});
  Tensor pos = Tensor::arange(2).reshape({1, 2}), len = Tensor::from_vector(std::vector<int64_t>{2}, {1});
  EXPECT_THROW(causal_attention(q, k, k, pos, len, 1.0f), Error);  // 4 heads over 3 kv heads
  Tensor k2 = Tensor::zeros({1, 2, 2, 8});
  EXPECT_THROW(causal_attention(q, k2, k2, pos, Tensor::from_vector(std::vector<int64_t>{3}, {1}), 1.0f), Error);
  EXPECT_THROW(causal_attention(q, k2, k2, Tensor::zeros({1, 2}), len, 1.0f), Error);  // f32 positions
}

}  // namespace
}  // namespace bl
