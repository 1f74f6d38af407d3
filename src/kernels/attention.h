// attention.h: causal scaled dot-product attention with grouped-query heads, per-sequence key
// counts and an optional sliding window; raw-pointer API and its scalar reference.
//
// Layout: q[b][t][h][d] (query t of sequence b, head h < n_heads), k and v [b][j][g][d] (key j of
// sequence b, key/value head g < n_kv_heads), out[b][t][h][d]; d (head_dim) is contiguous, every
// other axis has its own stride in elements. Query head h reads key/value head
// g = h / (n_heads / n_kv_heads) (grouped-query attention). Key j of a sequence sits at position j.
//
// Query (b, t) sits at position p = q_pos[b * q_len + t]; p < 0 marks a padding row (output +0).
// It attends exactly the keys j in [lo, hi], hi = min(p, kv_len[b] - 1) and lo = max(0, p - window
// + 1) with a sliding window (window > 0), else lo = 0. For each such row (the reference below is
// the specification):
//   s_j  = dot(q, k_j) * scale          dot on the GEMM schedule for K = head_dim (schedule.h:
//                                       fma chain from +0 per leaf of 256, leaves folded left to
//                                       right), then one multiplication
//   m    = max_j s_j; S = sum_j exp(s_j - m) on the sum schedule (the softmax row of softmax.h,
//          over the n = hi - lo + 1 allowed scores in ascending j)
//   p_j  = exp(s_j - m) / S             (softmax_element)
//   o[d] = sum_j p_j * v_j[d]           on the GEMM schedule over the keys in ascending j (K = n)
// A row with no allowed key gives +0. Every stored NaN is canonical.
// Each output row depends only on its query, its allowed keys and values and their count: never on
// the batch, the padding, q_len, the cache capacity, the thread count or the launch shape. So a
// sequence alone or inside a padded batch, and a KV-cache decode step versus the same row of a
// prefill, give the same bits by construction.
#pragma once

#include <cstdint>

#include "contract/math.h"
#include "contract/schedule.h"
#include "kernels/launch.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"

namespace bl {

class ThreadPool;

// Sizes, scale, window and strides (in elements) of one attention call.
struct AttentionArgs {
  int64_t batch = 0;
  int64_t q_len = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t kv_capacity = 0;  // key slots per sequence in k and v (kv_len[b] <= kv_capacity)
  float scale = 1.0f;
  int64_t window = 0;       // sliding window in keys (self included); 0 = none
  int64_t q_sb = 0, q_st = 0, q_sh = 0;
  int64_t k_sb = 0, k_st = 0, k_sh = 0;
  int64_t v_sb = 0, v_st = 0, v_sh = 0;
  int64_t o_sb = 0, o_st = 0, o_sh = 0;
};

// Scratch floats one row needs: a score per key slot plus one per softmax leaf.
BL_HD int64_t attention_row_scratch(int64_t kv_capacity) {
  return kv_capacity + reduce_leaf_count(kv_capacity) + 1;
}

// The key range [lo, hi] of query position p in a sequence of kv_len keys (hi < lo: none).
BL_HD void attention_key_range(int64_t p, int64_t kv_len, int64_t window, int64_t* lo, int64_t* hi) {
  int64_t h = p < kv_len - 1 ? p : kv_len - 1;
  int64_t l = 0;
  if (window > 0 && p - window + 1 > 0) l = p - window + 1;
  *lo = l;
  *hi = p < 0 ? -1 : h;
}

// One score: the GEMM-schedule dot product of q and k over head_dim, times scale.
BL_HD float attention_score(const float* q, const float* k, int64_t head_dim, float scale) {
  float c = 0.0f;
  for (int64_t d0 = 0; d0 < head_dim; d0 += kGemmKLeaf) {
    int64_t d_end = d0 + kGemmKLeaf < head_dim ? d0 + kGemmKLeaf : head_dim;
    float acc = 0.0f;
    for (int64_t d = d0; d < d_end; ++d) acc = fma(q[d], k[d], acc);
    c = d0 == 0 ? acc : add(c, acc);
  }
  return canonicalize(mul(c, scale));
}

// The softmax denominator of n scores s[0..n) with maximum m: the sum schedule of exp(s - m);
// `leaves` holds reduce_leaf_count(n) floats of scratch.
BL_HD float attention_softmax_sum(const float* s, int64_t n, float m, float* leaves) {
  const int64_t count = reduce_leaf_count(n);
  for (int64_t l = 0; l < count; ++l) {
    const int64_t start = l * kReduceLeaf;
    const int64_t len = n - start < kReduceLeaf ? n - start : kReduceLeaf;
    leaves[l] = leaf_reduce<StepExpShift>(s + start, len, 1, m);
  }
  return leaf_tree<StepExpShift>(leaves, count);
}

// Output element d of a row: the GEMM-schedule sum over the n keys of p_j * v_j[d].
BL_HD float attention_weighted_value(const float* p, const float* v, int64_t v_st, int64_t n, int64_t d) {
  float c = 0.0f;
  for (int64_t j0 = 0; j0 < n; j0 += kGemmKLeaf) {
    int64_t j_end = j0 + kGemmKLeaf < n ? j0 + kGemmKLeaf : n;
    float acc = 0.0f;
    for (int64_t j = j0; j < j_end; ++j) acc = fma(p[j], v[j * v_st + d], acc);
    c = j0 == 0 ? acc : add(c, acc);
  }
  return canonicalize(c);
}

// Where output row (b, t, h) reads and writes: its output row o, its query row q, the first key k
// and value v of its key range (key/value head g = h / (n_heads / n_kv_heads)) and the range's key
// count n (0: the row attends nothing and its output is +0).
struct AttentionRowPlace {
  float* o;
  const float* q;
  const float* k;
  const float* v;
  int64_t n;
};
BL_HD AttentionRowPlace attention_row_place(const AttentionArgs& a, const float* q, const float* k, const float* v,
                                            const int64_t* q_pos, const int64_t* kv_len, float* out, int64_t b,
                                            int64_t t, int64_t h) {
  const int64_t g = h / (a.n_heads / a.n_kv_heads);
  int64_t lo = 0, hi = -1;
  attention_key_range(q_pos[b * a.q_len + t], kv_len[b], a.window, &lo, &hi);
  AttentionRowPlace r;
  r.o = out + b * a.o_sb + t * a.o_st + h * a.o_sh;
  r.n = hi >= lo ? hi - lo + 1 : 0;
  const int64_t first = r.n > 0 ? lo : 0;  // an empty range points at key 0, inside the cache
  r.q = q + b * a.q_sb + t * a.q_st + h * a.q_sh;
  r.k = k + b * a.k_sb + first * a.k_st + g * a.k_sh;
  r.v = v + b * a.v_sb + first * a.v_st + g * a.v_sh;
  return r;
}

// One output row (b, t, h) of the reference; scratch holds attention_row_scratch(kv_capacity)
// floats.
BL_HD void attention_row(const AttentionArgs& a, const float* q, const float* k, const float* v,
                         const int64_t* q_pos, const int64_t* kv_len, float* out, int64_t b,
                         int64_t t, int64_t h, float* scratch) {
  const AttentionRowPlace row = attention_row_place(a, q, k, v, q_pos, kv_len, out, b, t, h);
  float* o = row.o;
  const int64_t n = row.n;
  if (n == 0) {
    for (int64_t d = 0; d < a.head_dim; ++d) o[d] = 0.0f;
    return;
  }
  float* s = scratch;
  float m = StepMax::init();
  for (int64_t j = 0; j < n; ++j) {
    s[j] = attention_score(row.q, row.k + j * a.k_st, a.head_dim, a.scale);
    m = max(m, s[j]);
  }
  const float sum = attention_softmax_sum(s, n, m, scratch + n);
  for (int64_t j = 0; j < n; ++j) s[j] = softmax_element(s[j], m, sum);
  for (int64_t d = 0; d < a.head_dim; ++d) o[d] = attention_weighted_value(s, row.v, a.v_st, n, d);
}

// Throws bl::Error (naming the operand) when args are not a valid problem.
void attention_check_args(const AttentionArgs& args);

// The scalar reference over every row. Slow and obviously right.
void attention_reference(const AttentionArgs& args, const float* q, const float* k, const float* v,
                         const int64_t* q_pos, const int64_t* kv_len, float* out);

// CPU: threads over (batch, head, query) rows in tasks fixed by the shape; equal to the reference.
void attention_cpu(const AttentionArgs& args, const float* q, const float* k, const float* v,
                   const int64_t* q_pos, const int64_t* kv_len, float* out, ThreadPool& pool);

// LaunchConfig::variant that makes attention_cuda run the block-rows kernel on every shape, the
// one that makes it run the warp-rows kernel wherever that applies (instead of the tiled one), and
// the one that makes the tiled kernel compute its scores three times instead of storing them
// (what it does on its own only when the stored scores would pass its scratch cap).
constexpr int kAttentionVariantBlockRows = 3;
constexpr int kAttentionVariantWarpRows = 5;
constexpr int kAttentionVariantTiledRecompute = 6;

// CUDA: every pointer on the current device; default stream, returns when done. Prefill shapes
// without a window (head_dim <= 128, a multiple of 4) run 4 query rows per 32-lane group; other
// shapes one 32-lane group per row (head_dim <= 256 and shared memory permitting), else one block
// per row. config.variant selects a kernel (kAttentionVariantWarpRows, kAttentionVariantBlockRows).
void attention_cuda(const AttentionArgs& args, const float* q, const float* k, const float* v,
                    const int64_t* q_pos, const int64_t* kv_len, float* out,
                    const LaunchConfig& config = LaunchConfig());

// Sabotage arm for the tests only: the kernel attention_cuda picks by default (tiled or warp
// rows) with its softmax lanes folded in a wrong order. Throws bl::Error when the shape is outside
// both.
void attention_cuda_sabotaged_fold(const AttentionArgs& args, const float* q, const float* k, const float* v,
                                   const int64_t* q_pos, const int64_t* kv_len, float* out);

}  // namespace bl
