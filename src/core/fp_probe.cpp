#include "core/fp_probe.h"

namespace bl {

float probe_mul_add(float a, float b, float c) { return a * b + c; }

bool cpu_has_avx2_fma() {
#if defined(__x86_64__) || defined(_M_X64)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

#if !(defined(__x86_64__) || defined(_M_X64))
float probe_mul_add_avx2(float a, float b, float c) { return a * b + c; }
#endif

}  // namespace bl
