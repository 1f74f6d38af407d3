// AArch64 NEON leaves of the sum schedule (NEON is in the AArch64 baseline; called only when the
// active ISA variant is neon): simd/reduce_leaf.h instantiated with the NEON traits, 4 lanes a
// register, eight registers for the 32 lanes.
#include "kernels/cpu/reduce_rows.h"

#include <cstdint>

#include "kernels/cpu/simd/reduce_leaf.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include "kernels/cpu/simd/vec_neon.h"
#else
#include "kernels/cpu/simd/vec_scalar.h"
#endif

namespace bl::cpu {

#if defined(__aarch64__) && defined(__ARM_NEON)
BL_DEFINE_REDUCE_LEAVES(neon, ::bl::simd::Neon)
#else  // not AArch64: never called; defined so the library links.
BL_DEFINE_REDUCE_LEAVES(neon, ::bl::simd::Scalar)
#endif

}  // namespace bl::cpu
