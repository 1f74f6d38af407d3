// AArch64 NEON columns of the skinny contract GEMM (NEON is in the AArch64 baseline; no extra
// flags): simd/skinny_columns.h with the NEON traits, 4 columns a register.
#include "kernels/skinny_matmul.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include "kernels/cpu/simd/skinny_columns.h"
#include "kernels/cpu/simd/vec_neon.h"

namespace bl::skinny_detail {

void columns_neon(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                  int64_t n1) {
  skinny_columns<::bl::simd::Neon>(a, b, c, m, n, k, n0, n1);
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
