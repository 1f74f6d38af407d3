// AVX2+FMA steps of the CPU attention rows (compiled with -mavx2 -mfma; see attention_cpu.h).
//
// A vector lane runs one value's chain of attention_row (kernels/attention.h) in the reference's
// order, so the bits are the reference's. The contract headers are included with BL_HD redefined
// as `static inline` so this file keeps private copies (scripts/check_isa_objects.sh checks that
// no AVX2 object shares code with the baseline build).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "contract/arith.h"
#include "contract/schedule.h"
#include "kernels/cpu/attention_cpu.h"
#include "kernels/math_map.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace bl {
namespace attention_detail {
namespace {

// Any NaN lane becomes the canonical NaN.
__m256 canonicalize8(__m256 v) {
  const __m256 nan_mask = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  return _mm256_blendv_ps(v, _mm256_set1_ps(canonical_nan()), nan_mask);
}

// c[i] (i < blocks, 1..4 groups of 8 lanes) = the leaf fma chain over k < len of
// a[k] * b[k * pitch + 8 * i + lane] from +0.0 in ascending k, leaves of kGemmKLeaf steps folded
// left to right. Four groups at once keep four independent chains in flight.
__attribute__((always_inline)) inline void chain_groups(const float* a, const float* b, int64_t pitch, int64_t len,
                                                        int blocks, __m256 c[4]) {
  for (int i = 0; i < 4; ++i) c[i] = _mm256_setzero_ps();
  for (int64_t k0 = 0; k0 < len; k0 += kGemmKLeaf) {
    const int64_t k_end = k0 + kGemmKLeaf < len ? k0 + kGemmKLeaf : len;
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    if (blocks == 4) {
      for (int64_t k = k0; k < k_end; ++k) {
        const __m256 ak = _mm256_broadcast_ss(a + k);
        const float* row = b + k * pitch;
        acc[0] = _mm256_fmadd_ps(ak, _mm256_loadu_ps(row), acc[0]);
        acc[1] = _mm256_fmadd_ps(ak, _mm256_loadu_ps(row + 8), acc[1]);
        acc[2] = _mm256_fmadd_ps(ak, _mm256_loadu_ps(row + 16), acc[2]);
        acc[3] = _mm256_fmadd_ps(ak, _mm256_loadu_ps(row + 24), acc[3]);
      }
    } else {
      for (int64_t k = k0; k < k_end; ++k) {
        const __m256 ak = _mm256_broadcast_ss(a + k);
        const float* row = b + k * pitch;
        for (int i = 0; i < blocks; ++i) acc[i] = _mm256_fmadd_ps(ak, _mm256_loadu_ps(row + 8 * i), acc[i]);
      }
    }
    for (int i = 0; i < blocks; ++i) c[i] = k0 == 0 ? acc[i] : _mm256_add_ps(c[i], acc[i]);
  }
}

// Scores of `blocks` (1..4) groups of 8 keys starting at column 0 of kt: lanes over keys, each the
// leaf fma chain over head_dim, then times scale (attention_score).
void score_groups(const float* q, const float* kt, int64_t pitch, int64_t head_dim, float scale, int blocks,
                  float* s) {
  __m256 c[4];
  chain_groups(q, kt, pitch, head_dim, blocks, c);
  const __m256 sc = _mm256_set1_ps(scale);
  for (int i = 0; i < blocks; ++i) _mm256_storeu_ps(s + 8 * i, canonicalize8(_mm256_mul_ps(c[i], sc)));
}

// o[d0 .. d0 + 8 * blocks) = the leaf fma chain over the n keys of p_j * v_j[d], lanes over d.
void value_groups(const float* p, const float* v, int64_t v_st, int64_t n, int64_t d0, int blocks, float* o) {
  __m256 c[4];
  chain_groups(p, v + d0, v_st, n, blocks, c);
  for (int i = 0; i < blocks; ++i) _mm256_storeu_ps(o + d0 + 8 * i, canonicalize8(c[i]));
}

// One output of the weighted values, scalar (attention_weighted_value).
float value_one(const float* p, const float* v, int64_t v_st, int64_t n, int64_t d) {
  float c = 0.0f;
  for (int64_t j0 = 0; j0 < n; j0 += kGemmKLeaf) {
    const int64_t j_end = j0 + kGemmKLeaf < n ? j0 + kGemmKLeaf : n;
    float acc = 0.0f;
    for (int64_t j = j0; j < j_end; ++j) acc = fma(p[j], v[j * v_st + d], acc);
    c = j0 == 0 ? acc : add(c, acc);
  }
  return canonicalize(c);
}

}  // namespace

void scores_avx2(const float* q, const float* kt, int64_t pitch, int64_t head_dim, float scale, int64_t n,
                 float* s) {
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) score_groups(q, kt + j, pitch, head_dim, scale, 4, s + j);
  for (; j < n; j += 8) score_groups(q, kt + j, pitch, head_dim, scale, 1, s + j);
}

void softmax_avx2(float* s, int64_t n, float m, float* e, float* leaves) {
  // e_j = exp(s_j - m): the subtraction lane by lane, the exp through the AVX2 contract map.
  const __m256 mv = _mm256_set1_ps(m);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(e + i, _mm256_sub_ps(_mm256_loadu_ps(s + i), mv));
  for (; i < n; ++i) e[i] = sub(s[i], m);
  math_map_chunk_avx2(MathFn::exp, e, nullptr, e, n);
  // The denominator: per leaf of kReduceLeaf, lane i mod 32 adds its values in ascending order
  // (four vectors of 8 lanes), the lanes folded by halving; the leaves by the pairwise tree.
  const int64_t count = reduce_leaf_count(n);
  for (int64_t l = 0; l < count; ++l) {
    const float* x = e + l * kReduceLeaf;
    const int64_t len = n - l * kReduceLeaf < kReduceLeaf ? n - l * kReduceLeaf : kReduceLeaf;
    __m256 v0 = _mm256_setzero_ps(), v1 = _mm256_setzero_ps(), v2 = _mm256_setzero_ps(), v3 = _mm256_setzero_ps();
    const int64_t whole = len / kReduceLanes * kReduceLanes;
    for (int64_t k = 0; k < whole; k += kReduceLanes) {
      v0 = _mm256_add_ps(v0, _mm256_loadu_ps(x + k));
      v1 = _mm256_add_ps(v1, _mm256_loadu_ps(x + k + 8));
      v2 = _mm256_add_ps(v2, _mm256_loadu_ps(x + k + 16));
      v3 = _mm256_add_ps(v3, _mm256_loadu_ps(x + k + 24));
    }
    alignas(32) float lanes[kReduceLanes];
    _mm256_store_ps(lanes, v0);
    _mm256_store_ps(lanes + 8, v1);
    _mm256_store_ps(lanes + 16, v2);
    _mm256_store_ps(lanes + 24, v3);
    for (int64_t k = whole; k < len; ++k) lanes[k - whole] = add(lanes[k - whole], x[k]);
    leaves[l] = fold_lanes(lanes);
  }
  const float sum = fold_leaves(leaves, count);
  // p_j = exp(s_j - m) / S, canonical NaN (softmax_element).
  const __m256 sv = _mm256_set1_ps(sum);
  for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(s + i, canonicalize8(_mm256_div_ps(_mm256_loadu_ps(e + i), sv)));
  for (; i < n; ++i) s[i] = canonicalize(div(e[i], sum));
}

void weighted_values_avx2(const float* p, const float* v, int64_t v_st, int64_t n, int64_t head_dim, float* o) {
  int64_t d = 0;
  for (; d + 32 <= head_dim; d += 32) value_groups(p, v, v_st, n, d, 4, o);
  for (; d + 8 <= head_dim; d += 8) value_groups(p, v, v_st, n, d, 1, o);
  for (; d < head_dim; ++d) o[d] = value_one(p, v, v_st, n, d);
}

}  // namespace attention_detail
}  // namespace bl

#else  // not compiled for AVX2+FMA (non-x86 targets): never called, see cpu_has_avx2_fma().

namespace bl {
namespace attention_detail {
void scores_avx2(const float*, const float*, int64_t, int64_t, float, int64_t, float*) { __builtin_trap(); }
void softmax_avx2(float*, int64_t, float, float*, float*) { __builtin_trap(); }
void weighted_values_avx2(const float*, const float*, int64_t, int64_t, int64_t, float*) { __builtin_trap(); }
}  // namespace attention_detail
}  // namespace bl

#endif
