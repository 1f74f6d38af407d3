// fp_probe.h: tiny functions compiled with the library's flags, used by tests and `bitlearn doctor`
// to prove that the build did not turn a*b+c into a fused multiply-add.
#pragma once

namespace bl {

// a*b+c written as a multiply then an add, compiled for the baseline ISA.
float probe_mul_add(float a, float b, float c);
// The same, compiled for AVX2+FMA (x86-64); call only when the CPU has them.
float probe_mul_add_avx2(float a, float b, float c);
// The same, compiled for AVX-512 (x86-64); call only when bl::isa_supported(Isa::avx512).
float probe_mul_add_avx512(float a, float b, float c);
// True when the AVX2+FMA kernel variants may run: the CPU has AVX2 and FMA and the active ISA
// (src/core/isa.h, BITLEARN_ISA) is avx2 or wider. False on other architectures.
bool cpu_has_avx2_fma();

// Inputs where a*b+c (two roundings) and fma(a, b, c) differ: a = b = 1 + 2^-12, c = -(1 + 2^-11).
// Unfused gives 0, fused gives 2^-24.
constexpr float kProbeA = 1.000244140625f;
constexpr float kProbeB = 1.000244140625f;
constexpr float kProbeC = -1.00048828125f;

// a*b+c evaluated by a CUDA kernel compiled with the library's flags (device 0).
float probe_mul_add_cuda(float a, float b, float c);

}  // namespace bl
