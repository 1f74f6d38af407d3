#include "core/fp_probe.h"

#include "core/isa.h"

namespace bl {

float probe_mul_add(float a, float b, float c) { return a * b + c; }

bool cpu_has_avx2_fma() {
  Isa isa = active_isa();
  return isa == Isa::avx2 || isa == Isa::avx512;
}

#if !(defined(__x86_64__) || defined(_M_X64))
float probe_mul_add_avx2(float a, float b, float c) { return a * b + c; }
float probe_mul_add_avx512(float a, float b, float c) { return a * b + c; }
#endif

}  // namespace bl
