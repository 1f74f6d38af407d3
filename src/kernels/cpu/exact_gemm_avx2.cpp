// AVX2 micro-tile of the CPU exact-integer GEMM (cpu/exact_gemm_tile.h), compiled with -mavx2:
// vpmuldq multiplies the low 32 bits of each 64-bit lane (sign-extended), so the packed columns
// (int64 lanes holding 28-bit integers) meet a row value broadcast to every 32-bit lane (the low
// half of each 64-bit lane is the value) four products a register; the chunk sums are vpaddq, and
// each chunk joins a 128-bit sum per lane: lo += p, hi += sign(p) + carry, the carry found by an
// unsigned comparison (signed vpcmpgtq on the values with their top bit flipped). Exact integer
// arithmetic: the same values as the scalar tile.
#include "kernels/cpu/exact_gemm_tile.h"

#if defined(__AVX2__)
#include <immintrin.h>

namespace bl::exact_gemm_detail {

void tile_avx2(const int32_t* x, int64_t ldx, const int64_t* y, int64_t len, uint64_t lo[4][8], int64_t hi[4][8]) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i top = _mm256_set1_epi64x(INT64_MIN);
  __m256i s_lo[4][2], s_hi[4][2];
  for (int r = 0; r < 4; ++r) s_lo[r][0] = s_lo[r][1] = s_hi[r][0] = s_hi[r][1] = zero;
  const int32_t* x0 = x;
  const int32_t* x1 = x + ldx;
  const int32_t* x2 = x + 2 * ldx;
  const int32_t* x3 = x + 3 * ldx;
  for (int64_t k0 = 0; k0 < len; k0 += kChunk) {
    const int64_t k1 = k0 + kChunk < len ? k0 + kChunk : len;
    __m256i acc[4][2];
    for (int r = 0; r < 4; ++r) acc[r][0] = acc[r][1] = zero;
    for (int64_t k = k0; k < k1; ++k) {
      const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + k * 8));
      const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + k * 8 + 4));
      const __m256i b0 = _mm256_set1_epi32(x0[k]), b1 = _mm256_set1_epi32(x1[k]);
      const __m256i b2 = _mm256_set1_epi32(x2[k]), b3 = _mm256_set1_epi32(x3[k]);
      acc[0][0] = _mm256_add_epi64(acc[0][0], _mm256_mul_epi32(b0, y0));
      acc[0][1] = _mm256_add_epi64(acc[0][1], _mm256_mul_epi32(b0, y1));
      acc[1][0] = _mm256_add_epi64(acc[1][0], _mm256_mul_epi32(b1, y0));
      acc[1][1] = _mm256_add_epi64(acc[1][1], _mm256_mul_epi32(b1, y1));
      acc[2][0] = _mm256_add_epi64(acc[2][0], _mm256_mul_epi32(b2, y0));
      acc[2][1] = _mm256_add_epi64(acc[2][1], _mm256_mul_epi32(b2, y1));
      acc[3][0] = _mm256_add_epi64(acc[3][0], _mm256_mul_epi32(b3, y0));
      acc[3][1] = _mm256_add_epi64(acc[3][1], _mm256_mul_epi32(b3, y1));
    }
    for (int r = 0; r < 4; ++r)
      for (int h = 0; h < 2; ++h) {
        const __m256i p = acc[r][h];
        const __m256i sum = _mm256_add_epi64(s_lo[r][h], p);
        // carry: sum < old lo as unsigned numbers; all ones where it is.
        const __m256i carry = _mm256_cmpgt_epi64(_mm256_xor_si256(s_lo[r][h], top), _mm256_xor_si256(sum, top));
        const __m256i negative = _mm256_cmpgt_epi64(zero, p);  // all ones: p's upper 64 bits
        s_hi[r][h] = _mm256_sub_epi64(_mm256_add_epi64(s_hi[r][h], negative), carry);
        s_lo[r][h] = sum;
      }
  }
  for (int r = 0; r < 4; ++r)
    for (int h = 0; h < 2; ++h) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo[r] + 4 * h), s_lo[r][h]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi[r] + 4 * h), s_hi[r][h]);
    }
}

}  // namespace bl::exact_gemm_detail

#else
#include "core/error.h"

namespace bl::exact_gemm_detail {

void tile_avx2(const int32_t*, int64_t, const int64_t*, int64_t, uint64_t[4][8], int64_t[4][8]) {
  throw Error("exact_matmul: this build has no AVX2 variant");
}

}  // namespace bl::exact_gemm_detail
#endif
