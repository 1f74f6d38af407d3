// AVX-512 columns of the skinny contract GEMM (compiled with AVX-512 flags; see CMakeLists.txt):
// simd/skinny_columns.h with the AVX-512 traits, 16 columns a register.
//
// BL_HD is redefined as `static inline` before the contract headers so this file keeps private
// copies of their functions (scripts/check_isa_objects.sh, run by ctest, checks it).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/skinny_matmul.h"

// BL_AVX512_EMULATION: a test (tests/isa/) supplies the intrinsics as plain C++ so that machines
// without AVX-512 check this code's logic too; never defined in the library build.
#if defined(BL_AVX512_EMULATION) || (defined(__AVX512F__) && defined(__AVX512VL__))
#include "kernels/cpu/simd/skinny_columns.h"
#include "kernels/cpu/simd/vec_avx512.h"

namespace bl::skinny_detail {

void columns_avx512(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                    int64_t n1) {
  skinny_columns<::bl::simd::Avx512>(a, b, c, m, n, k, n0, n1);
}

}  // namespace bl::skinny_detail

#else

#include "core/error.h"

namespace bl::skinny_detail {
void columns_avx512(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t) {
  throw Error("skinny_matmul: the AVX-512 columns were not compiled for this target");
}
}  // namespace bl::skinny_detail

#endif
