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

#include "kernels/cpu/simd/skinny_columns.h"

#if defined(__AVX2__) && defined(__FMA__)
#include "kernels/cpu/simd/vec_avx2.h"
BL_SKINNY_COLUMNS_ENTRY(columns_avx2, ::bl::simd::Avx2)
#else
BL_SKINNY_COLUMNS_MISSING(columns_avx2, "AVX2")
#endif
