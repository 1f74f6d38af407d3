// CPU attention. With AVX2+FMA: tasks of (batch, head, block of kQueryBlock queries), each row
// computed by the vector rows of attention_avx2.cpp. Otherwise: the reference row function run over
// (batch, head, query) rows, a fixed number of rows per task. Both partitions depend on the shape
// only and every row is computed whole by one task, so the result equals attention_reference bit
// for bit at any thread count.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/fp_probe.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/cpu/attention_cpu.h"

namespace bl {

void attention_check_args(const AttentionArgs& a) {
  BL_CHECK(a.batch >= 0 && a.q_len >= 0 && a.head_dim >= 0 && a.kv_capacity >= 0, "attention: sizes ",
           "(batch ", a.batch, ", q_len ", a.q_len, ", head_dim ", a.head_dim, ", kv_capacity ",
           a.kv_capacity, ") must be non-negative");
  BL_CHECK(a.n_heads >= 1 && a.n_kv_heads >= 1 && a.n_heads % a.n_kv_heads == 0, "attention: n_heads ",
           a.n_heads, " must be a positive multiple of n_kv_heads ", a.n_kv_heads);
  BL_CHECK(a.window >= 0, "attention: window ", a.window, " must be >= 0");
}

void attention_reference(const AttentionArgs& a, const float* q, const float* k, const float* v,
                         const int64_t* q_pos, const int64_t* kv_len, float* out) {
  attention_check_args(a);
  std::vector<float> scratch(static_cast<size_t>(attention_row_scratch(a.kv_capacity)));
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t t = 0; t < a.q_len; ++t)
      for (int64_t h = 0; h < a.n_heads; ++h)
        attention_row(a, q, k, v, q_pos, kv_len, out, b, t, h, scratch.data());
}

namespace {

int64_t round_up8(int64_t n) { return (n + 7) / 8 * 8; }

// Queries [t0, t1) of head h of sequence b with the AVX2 steps (attention_cpu.h). The union of
// their key ranges is transposed once into kt (row d holds element d of every key, pitch floats).
void attention_block(const AttentionArgs& a, const float* q, const float* k, const float* v,
                     const int64_t* q_pos, const int64_t* kv_len, float* out, int64_t b, int64_t h, int64_t t0,
                     int64_t t1, std::vector<float>& scratch) {
  const int64_t D = a.head_dim, g = h / (a.n_heads / a.n_kv_heads);
  int64_t lo_min = a.kv_capacity, hi_max = -1;
  for (int64_t t = t0; t < t1; ++t) {
    int64_t lo = 0, hi = -1;
    attention_key_range(q_pos[b * a.q_len + t], kv_len[b], a.window, &lo, &hi);
    if (hi < lo) continue;
    lo_min = std::min(lo_min, lo);
    hi_max = std::max(hi_max, hi);
  }
  const int64_t span = hi_max >= lo_min ? hi_max - lo_min + 1 : 0;
  const int64_t pitch = round_up8(span) + 8;  // a group of 8 read past the last key stays inside
  const size_t need = static_cast<size_t>((D + 2) * pitch + reduce_leaf_count(span) + 1);
  if (scratch.size() < need) scratch.resize(need);
  float* kt = scratch.data();
  float* s = kt + D * pitch;
  float* e = s + pitch;
  float* leaves = e + pitch;
  const float* kb = k + b * a.k_sb + g * a.k_sh;
  for (int64_t j = 0; j < span; ++j) {
    const float* kr = kb + (lo_min + j) * a.k_st;
    for (int64_t d = 0; d < D; ++d) kt[d * pitch + j] = kr[d];
  }
  for (int64_t t = t0; t < t1; ++t) {
    float* o = out + b * a.o_sb + t * a.o_st + h * a.o_sh;
    int64_t lo = 0, hi = -1;
    attention_key_range(q_pos[b * a.q_len + t], kv_len[b], a.window, &lo, &hi);
    const int64_t n = hi >= lo ? hi - lo + 1 : 0;
    if (n == 0) {
      std::fill(o, o + D, 0.0f);
      continue;
    }
    attention_detail::scores_avx2(q + b * a.q_sb + t * a.q_st + h * a.q_sh, kt + (lo - lo_min), pitch, D, a.scale,
                                  n, s);
    float m = StepMax::init();
    for (int64_t j = 0; j < n; ++j) m = max(m, s[j]);
    attention_detail::softmax_avx2(s, n, m, e, leaves);
    attention_detail::weighted_values_avx2(s, v + b * a.v_sb + lo * a.v_st + g * a.v_sh, a.v_st, n, D, o);
  }
}

// The AVX2 partition: tasks of (sequence, head, block of kQueryBlock queries).
void attention_cpu_blocks(const AttentionArgs& a, const float* q, const float* k, const float* v,
                          const int64_t* q_pos, const int64_t* kv_len, float* out, ThreadPool& pool) {
  using attention_detail::kQueryBlock;
  const int64_t q_blocks = (a.q_len + kQueryBlock - 1) / kQueryBlock;
  pool.parallel_for(a.batch * a.n_heads * q_blocks, [&](int64_t task) {
    thread_local std::vector<float> scratch;
    const int64_t qb = task % q_blocks;
    const int64_t h = (task / q_blocks) % a.n_heads;
    const int64_t b = task / (q_blocks * a.n_heads);
    const int64_t t0 = qb * kQueryBlock;
    attention_block(a, q, k, v, q_pos, kv_len, out, b, h, t0, std::min(a.q_len, t0 + kQueryBlock), scratch);
  });
}

}  // namespace

void attention_cpu(const AttentionArgs& a, const float* q, const float* k, const float* v,
                   const int64_t* q_pos, const int64_t* kv_len, float* out, ThreadPool& pool) {
  attention_check_args(a);
  const int64_t rows = a.batch * a.q_len * a.n_heads;
  if (rows == 0) return;
  if (cpu_has_avx2_fma()) {
    attention_cpu_blocks(a, q, k, v, q_pos, kv_len, out, pool);
    return;
  }
  // Rows per task from the work per row only (keys * head_dim), never from the thread count.
  const int64_t work = std::max<int64_t>(1, a.kv_capacity * std::max<int64_t>(1, a.head_dim));
  const int64_t per_task = std::max<int64_t>(1, (int64_t(1) << 15) / work);
  const int64_t tasks = (rows + per_task - 1) / per_task;
  pool.parallel_for(tasks, [&](int64_t task) {
    std::vector<float> scratch(static_cast<size_t>(attention_row_scratch(a.kv_capacity)));
    const int64_t end = std::min(rows, (task + 1) * per_task);
    for (int64_t r = task * per_task; r < end; ++r) {
      const int64_t h = r % a.n_heads;
      const int64_t t = (r / a.n_heads) % a.q_len;
      const int64_t b = r / (a.n_heads * a.q_len);
      attention_row(a, q, k, v, q_pos, kv_len, out, b, t, h, scratch.data());
    }
  });
}

}  // namespace bl
