// skinny_columns.h: the SIMD columns of the skinny contract GEMM (kernels/skinny_matmul.h),
// written once over a vector traits type V (vec_scalar.h lists its operations) and instantiated by
// skinny_matmul_avx2.cpp, skinny_matmul_avx512.cpp and skinny_matmul_neon.cpp. In an unnamed
// namespace: each per-ISA translation unit keeps its own copy (scripts/check_isa_objects.sh).
//
// Lanes run over V::kLanes columns; per k, one load of B's row piece, one broadcast of A[i][k]
// per row and one fused multiply-add per row (one rounding: acc = a*b + acc), so each lane is
// exactly the reference's fma chain; leaves of kGemmKLeaf steps are folded left to right, NaNs
// canonicalized.
#pragma once

#include <cstdint>

#include "contract/arith.h"
#include "core/error.h"
#include "kernels/skinny_matmul.h"

namespace bl::skinny_detail {
namespace {

// c[i][j] for i < m and j in [n0, n1), n1 - n0 a multiple of V::kLanes.
template <class V>
void skinny_columns(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                    int64_t n1) {
  using F = typename V::F;
  const F nan = V::set1(canonical_nan());
  for (int64_t j = n0; j < n1; j += V::kLanes) {
    F total[kSkinnyMaxRows];
    for (int64_t k0 = 0; k0 < k || k0 == 0; k0 += kGemmKLeaf) {
      const int64_t k_end = k0 + kGemmKLeaf < k ? k0 + kGemmKLeaf : k;
      F acc[kSkinnyMaxRows];
      for (int64_t i = 0; i < m; ++i) acc[i] = V::zero();
      for (int64_t kk = k0; kk < k_end; ++kk) {
        const F bv = V::loadu(b + kk * n + j);
        for (int64_t i = 0; i < m; ++i) acc[i] = V::fma(V::set1(a[i * k + kk]), bv, acc[i]);
      }
      for (int64_t i = 0; i < m; ++i) total[i] = k0 == 0 ? acc[i] : V::add(total[i], acc[i]);
      if (k == 0) break;
    }
    for (int64_t i = 0; i < m; ++i) V::storeu(c + i * n + j, V::canonical(total[i], nan));
  }
}

}  // namespace
}  // namespace bl::skinny_detail

// The columns entry point bl::skinny_detail::name of kernels/skinny_matmul.h over the traits V;
// expanded at global scope by the per-ISA translation unit.
#define BL_SKINNY_COLUMNS_ENTRY(name, V)                                                           \
  namespace bl::skinny_detail {                                                                    \
  void name(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0, \
            int64_t n1) {                                                                          \
    skinny_columns<V>(a, b, c, m, n, k, n0, n1);                                                   \
  }                                                                                                \
  }

// The entry point `name` where its instruction set is not compiled for this target: never called
// (the dispatch checks the CPU first), an error if it were. Expanded at global scope.
#define BL_SKINNY_COLUMNS_MISSING(name, isa_text)                                              \
  namespace bl::skinny_detail {                                                                \
  void name(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t) { \
    throw Error("skinny_matmul: the " isa_text " columns were not compiled for this target");  \
  }                                                                                            \
  }
