// AVX2+FMA epilogue of the fused CPU neighbors (compiled with -mavx2 -mfma; see CMakeLists.txt).
//
// Per query row and 8 columns: dd = max((-2 * dot + qq) + tt, +0) with one vfmadd (one rounding,
// as bl::fma) and one vaddps. vmaxps(x, +0) returns its second operand when x is NaN or when both
// are zeros, so it is exactly relu(x) = x > 0 ? x : +0 of the scalar epilogue. Lanes that are not
// strictly below the list's last distance (once the list is full) cannot enter it and are skipped;
// the others are offered one by one in ascending column order, which re-checks against the
// current last distance, so skipping never changes the list.
#include "ml/neighbors/cpu/nearest_rows_tile.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace bl::ml::neighbors_detail {

void nearest_epilogue_avx2(const float* dots, int64_t ld, int rows, int cols, const float* qq,
                           const float* tt, int64_t col0, int64_t k, NeighborList* lists) {
  const __m256 minus_two = _mm256_set1_ps(-2.0f);
  const __m256 zero = _mm256_setzero_ps();
  for (int r = 0; r < rows; ++r) {
    NeighborList& list = lists[r];
    const __m256 norm = _mm256_set1_ps(qq[r]);
    const float* row = dots + r * ld;
    for (int c = 0; c < cols; c += 8) {
      const int valid = cols - c >= 8 ? 0xFF : (1 << (cols - c)) - 1;
      __m256 dd = _mm256_fmadd_ps(minus_two, _mm256_loadu_ps(row + c), norm);
      dd = _mm256_add_ps(dd, _mm256_loadu_ps(tt + c));
      dd = _mm256_max_ps(dd, zero);
      int mask = valid;
      if (list.filled == k) {
        const __m256 last = _mm256_set1_ps(list.dist[k - 1]);
        mask &= _mm256_movemask_ps(_mm256_cmp_ps(dd, last, _CMP_LT_OQ));
      }
      if (mask == 0) continue;
      alignas(32) float lane[8];
      _mm256_store_ps(lane, dd);
      while (mask != 0) {
        const int b = __builtin_ctz(static_cast<unsigned>(mask));
        mask &= mask - 1;
        offer_neighbor(list, k, lane[b], col0 + c + b);
      }
    }
  }
}

}  // namespace bl::ml::neighbors_detail

#else  // not compiled for AVX2+FMA (non-x86 targets): never called, see cpu_has_avx2_fma().

namespace bl::ml::neighbors_detail {

void nearest_epilogue_avx2(const float* dots, int64_t ld, int rows, int cols, const float* qq,
                           const float* tt, int64_t col0, int64_t k, NeighborList* lists) {
  nearest_epilogue_portable(dots, ld, rows, cols, qq, tt, col0, k, lists);
}

}  // namespace bl::ml::neighbors_detail

#endif
