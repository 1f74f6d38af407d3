// AVX2+FMA leaves of the sum schedule (compiled with -mavx2 -mfma; called only when the active
// ISA variant is avx2 or avx512): simd/reduce_leaf.h instantiated with the AVX2 traits, 8 lanes a
// register, four registers for the 32 lanes.
#include "kernels/cpu/reduce_rows.h"

#include <cstdint>

#include "kernels/cpu/simd/reduce_leaf.h"

#if defined(__x86_64__) || defined(_M_X64)
#include "kernels/cpu/simd/vec_avx2.h"
#else
#include "kernels/cpu/simd/vec_scalar.h"
#endif

namespace bl::cpu {

#if defined(__x86_64__) || defined(_M_X64)
BL_DEFINE_REDUCE_LEAVES(avx2, ::bl::simd::Avx2)
#else  // not x86-64: never called; defined so the library links.
BL_DEFINE_REDUCE_LEAVES(avx2, ::bl::simd::Scalar)
#endif

}  // namespace bl::cpu
