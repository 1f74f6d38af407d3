// AVX2+FMA columns of the skinny contract GEMM (compiled with -mavx2 -mfma): simd/skinny_columns.h
// with the AVX2 traits, 8 columns a register.
//
// The contract headers define their functions `inline` (external linkage); compiled here with
// -mavx2 -mfma, an out-of-line copy could be picked by the linker for baseline callers too. BL_HD
// is redefined as `static inline` before their first inclusion so this file keeps private copies
// (scripts/check_isa_objects.sh, run by ctest, checks that no AVX2 object shares code).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/skinny_matmul.h"

#if defined(__AVX2__) && defined(__FMA__)
#include "kernels/cpu/simd/skinny_columns.h"
#include "kernels/cpu/simd/vec_avx2.h"

namespace bl::skinny_detail {

void columns_avx2(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                  int64_t n1) {
  skinny_columns<::bl::simd::Avx2>(a, b, c, m, n, k, n0, n1);
}

}  // namespace bl::skinny_detail

#else

#include "core/error.h"

namespace bl::skinny_detail {
void columns_avx2(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t) {
  throw Error("skinny_matmul: the AVX2 columns were not compiled for this target");
}
}  // namespace bl::skinny_detail

#endif
