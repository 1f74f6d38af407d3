// Compiled with AVX-512 flags (see CMakeLists.txt): the contract flags must still keep a*b+c unfused.
#include "core/fp_probe.h"

namespace bl {
#if defined(__x86_64__) || defined(_M_X64)
float probe_mul_add_avx512(float a, float b, float c) { return a * b + c; }
#endif
}  // namespace bl
