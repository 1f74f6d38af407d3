// AArch64 NEON columns of the skinny contract GEMM (NEON is in the AArch64 baseline; no extra
// flags): simd/skinny_columns.h with the NEON traits, 4 columns a register.
#include "kernels/cpu/simd/skinny_columns.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include "kernels/cpu/simd/vec_neon.h"
BL_SKINNY_COLUMNS_ENTRY(columns_neon, ::bl::simd::Neon)
#else
BL_SKINNY_COLUMNS_MISSING(columns_neon, "NEON")
#endif
