// isa.h: which CPU kernel variant runs.
//
// Every CPU kernel has a baseline version (plain x86-64 / AArch64, compiled for no extra ISA) and
// may have faster versions for wider ISAs; all variants follow the reference's operation order, so
// the choice changes speed, never bits. The variant is detected at run time and can be forced with
// the environment variable BITLEARN_ISA=scalar|avx2|avx512|neon (or set_active_isa), which is how
// the tests and CI prove that every variant gives the same digest.
#pragma once

#include <string>

namespace bl {

enum class Isa { scalar = 0, avx2 = 1, avx512 = 2, neon = 3 };

const char* isa_name(Isa isa);
// Parses "scalar", "avx2", "avx512", "neon"; throws bl::Error for anything else.
Isa parse_isa(const std::string& name);
// The best variant this CPU supports (avx2 needs AVX2 and FMA; avx512 needs AVX-512F/BW/DQ/VL too).
Isa detected_isa();
// Whether this CPU can run variant `isa`.
bool isa_supported(Isa isa);
// The variant kernels use: BITLEARN_ISA when set (an unsupported or unknown value throws bl::Error
// at first use), else detected_isa().
Isa active_isa();
// Forces a variant for this process (tests); throws bl::Error when the CPU cannot run it.
void set_active_isa(Isa isa);

namespace isa_detail {
template <class T>
struct same {
  using type = T;
};
}  // namespace isa_detail

// The variant of a kernel that runs under `isa`, from its scalar, AVX2, AVX-512 and NEON
// variants. avx2, avx512 and neon may be null (or false) where the kernel has no such variant:
// avx512 then falls back to avx2 (every AVX-512 CPU has AVX2), and any variant to scalar.
template <class T>
T select_isa(Isa isa, T scalar, typename isa_detail::same<T>::type avx2,
             typename isa_detail::same<T>::type avx512, typename isa_detail::same<T>::type neon) {
  switch (isa) {
    case Isa::avx512:
      if (avx512) return avx512;
      return avx2 ? avx2 : scalar;
    case Isa::avx2: return avx2 ? avx2 : scalar;
    case Isa::neon: return neon ? neon : scalar;
    case Isa::scalar: break;
  }
  return scalar;
}

// The same for the variant kernels use, active_isa().
template <class T>
T select_isa(T scalar, typename isa_detail::same<T>::type avx2, typename isa_detail::same<T>::type avx512,
             typename isa_detail::same<T>::type neon) {
  return select_isa(active_isa(), scalar, avx2, avx512, neon);
}

}  // namespace bl
