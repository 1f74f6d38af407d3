// AArch64 NEON columns of the skinny contract GEMM (NEON is in the AArch64 baseline; no extra
// flags). Lanes run over 4 columns; per k, one load of B's row piece, one duplicate of A[i][k]
// per row and one vfmaq per row (FMLA: one rounding, acc = a*b + acc), so each lane is exactly
// the reference's fma chain; leaves are folded left to right, NaNs canonicalized.
#include "kernels/skinny_matmul.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>

#include "contract/arith.h"

namespace bl::skinny_detail {

void columns_neon(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                  int64_t n1) {
  const float32x4_t nan = vdupq_n_f32(canonical_nan());
  for (int64_t j = n0; j < n1; j += 4) {
    float32x4_t total[kSkinnyMaxRows];
    for (int64_t k0 = 0; k0 < k || k0 == 0; k0 += kGemmKLeaf) {
      const int64_t k_end = k0 + kGemmKLeaf < k ? k0 + kGemmKLeaf : k;
      float32x4_t acc[kSkinnyMaxRows];
      for (int64_t i = 0; i < m; ++i) acc[i] = vdupq_n_f32(0.0f);
      for (int64_t kk = k0; kk < k_end; ++kk) {
        const float32x4_t bv = vld1q_f32(b + kk * n + j);
        for (int64_t i = 0; i < m; ++i) acc[i] = vfmaq_f32(acc[i], vdupq_n_f32(a[i * k + kk]), bv);
      }
      for (int64_t i = 0; i < m; ++i) total[i] = k0 == 0 ? acc[i] : vaddq_f32(total[i], acc[i]);
      if (k == 0) break;
    }
    for (int64_t i = 0; i < m; ++i) {
      const float32x4_t v = total[i];
      vst1q_f32(c + i * n + j, vbslq_f32(vceqq_f32(v, v), v, nan));
    }
  }
}

}  // namespace bl::skinny_detail

#else

#include "core/error.h"

namespace bl::skinny_detail {
void columns_neon(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t) {
  throw Error("skinny_matmul: the NEON columns were not compiled for this target");
}
}  // namespace bl::skinny_detail

#endif
