// The table-driven binary64 exp kernels for AVX-512 (F, VL, DQ): simd/exp_f64_table.h
// instantiated with the AVX-512 traits, 16 floats per step as two halves of 8 doubles, the table
// held in two registers and read by a permute.
//
// BL_HD is redefined as `static inline` before the contract headers so this translation unit keeps
// private copies of the scalar functions (see math_map_avx512.cpp for why).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "contract/math.h"
#include "kernels/cpu/exp_f64_simd.h"

#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#include "kernels/cpu/simd/exp_f64_table.h"
#include "kernels/cpu/simd/exp_vec_avx512.h"

namespace bl::exp_f64_simd {
BL_EXP_F64_TABLE_ENTRY_POINTS(avx512, simd::Avx512Exp)
}  // namespace bl::exp_f64_simd

#endif  // AVX-512
