// AVX-512 leaves of the sum schedule (compiled with AVX-512 flags; called only when the active ISA
// variant is avx512): simd/reduce_leaf.h instantiated with the AVX-512 traits, 16 lanes a
// register, two registers for the 32 lanes.
#include "kernels/cpu/reduce_rows.h"

#include <cstdint>

#include "kernels/cpu/simd/reduce_leaf.h"

// BL_AVX512_EMULATION: a test (tests/isa/) supplies the intrinsics as plain C++ so that machines
// without AVX-512 check this code's logic too; never defined in the library build.
#if defined(BL_AVX512_EMULATION) || (defined(__AVX512F__) && defined(__AVX512VL__))
#include "kernels/cpu/simd/vec_avx512.h"
#define BL_AVX512_BODY 1
#else
#include "kernels/cpu/simd/vec_scalar.h"
#endif

namespace bl::cpu {

#if defined(BL_AVX512_BODY)
BL_DEFINE_REDUCE_LEAVES(avx512, ::bl::simd::Avx512)
#else  // not compiled for AVX-512: never called; defined so the library links.
BL_DEFINE_REDUCE_LEAVES(avx512, ::bl::simd::Scalar)
#endif

}  // namespace bl::cpu
