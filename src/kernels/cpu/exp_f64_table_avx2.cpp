// The table-driven binary64 exp kernels for AVX2+FMA (compiled with -mavx2 -mfma):
// simd/exp_f64_table.h instantiated with the AVX2 traits, 8 floats per step as two halves of 4
// doubles, the table read by a gather.
//
// BL_HD is redefined as `static inline` before the contract headers so this translation unit keeps
// private copies of the scalar functions (see math_map_avx2.cpp for why).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "contract/math.h"
#include "kernels/cpu/exp_f64_simd.h"

#if defined(__x86_64__) || defined(_M_X64)
#include "kernels/cpu/simd/exp_f64_table.h"
#include "kernels/cpu/simd/exp_vec_avx2.h"

namespace bl::exp_f64_simd {
BL_EXP_F64_TABLE_ENTRY_POINTS(avx2, simd::Avx2Exp)
}  // namespace bl::exp_f64_simd

#endif  // x86-64
