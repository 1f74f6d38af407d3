// The CPU math map's chunk loop built for AVX2+FMA (compiled with -mavx2 -mfma; see
// CMakeLists.txt). Called only when the active ISA variant is avx2 (or avx512).
//
// The contract headers define their functions `inline` (external linkage). Compiled here with
// -mavx2, an out-of-line copy could be picked by the linker for the baseline translation unit too
// and run AVX2 instructions on a CPU without them. So this file alone redefines BL_HD as
// `static inline` before the first inclusion of the math headers: every contract function gets a
// private copy in this translation unit. The arithmetic is unchanged (same source, same flags).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/cpu/exp_f64_cpu.h"
#include "kernels/cpu/math_map_loop.h"

namespace bl {

#if defined(__x86_64__) || defined(_M_X64)
// exp goes to the explicit-SIMD binary64 kernel (math_map_chunk_with_exp).
void math_map_chunk_avx2(MathFn fn, const float* x, const float* y, float* out, int64_t n) {
  math_map_chunk_with_exp<exp_f64_table_avx2>(fn, x, y, out, n);
}
#endif

}  // namespace bl
