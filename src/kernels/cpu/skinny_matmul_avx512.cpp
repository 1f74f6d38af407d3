// AVX-512 columns of the skinny contract GEMM (compiled with AVX-512 flags; see CMakeLists.txt):
// simd/skinny_columns.h with the AVX-512 traits, 16 columns a register.
//
// BL_HD is redefined as `static inline` before the contract headers so this file keeps private
// copies of their functions (scripts/check_isa_objects.sh, run by ctest, checks it).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/cpu/simd/skinny_columns.h"

// BL_AVX512_EMULATION: a test (tests/isa/) supplies the intrinsics as plain C++ so that machines
// without AVX-512 check this code's logic too; never defined in the library build.
#if defined(BL_AVX512_EMULATION) || (defined(__AVX512F__) && defined(__AVX512VL__))
#include "kernels/cpu/simd/vec_avx512.h"
BL_SKINNY_COLUMNS_ENTRY(columns_avx512, ::bl::simd::Avx512)
#else
BL_SKINNY_COLUMNS_MISSING(columns_avx512, "AVX-512")
#endif
