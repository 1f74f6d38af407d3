// The CPU math map's chunk loop built for AVX-512 (compiled with AVX-512 flags; see
// CMakeLists.txt). Called only when the active ISA variant is avx512.
//
// The same source as the baseline and AVX2 loops (math_map_loop.h); the compiler vectorizes the
// straight-line contract functions 16 lanes wide. Elementwise, so no order across elements; the
// build flags keep every a*b+c unfused. BL_HD is redefined as `static inline` before the first
// inclusion of the math headers so this translation unit keeps private copies of the contract
// functions (an out-of-line copy shared with the baseline build could run AVX-512 instructions
// on a CPU without them; scripts/check_isa_objects.sh checks it).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/cpu/exp_f64_cpu.h"
#include "kernels/cpu/math_map_loop.h"

namespace bl {

#if defined(__AVX512F__) && defined(__AVX512VL__)
// exp goes to the explicit-SIMD binary64 kernel (math_map_chunk_with_exp).
void math_map_chunk_avx512(MathFn fn, const float* x, const float* y, float* out, int64_t n) {
  math_map_chunk_with_exp<exp_f64_table_avx512>(fn, x, y, out, n);
}
#endif

}  // namespace bl
