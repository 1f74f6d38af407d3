// norm_rows.h: the output pass of layer norm and RMS norm over a run of one row (internal to
// src/kernels/cpu/), in a baseline build and an AVX2+FMA build (norm_rows_avx2.cpp).
//
// Each output is the reference's element function (layer_norm_element / rms_norm_element in
// kernels/norm.h): one rounding per sub, div, mul and fma, NaN canonicalized, so both builds give
// the same bits. gamma / beta point at the run's first column and may be null (absent).
#pragma once

#include <cstdint>

namespace bl::cpu {

// y[i] = layer_norm_element(x[i], mean, den, gamma[i], beta[i]) for i in [0, n).
void layer_norm_run_baseline(const float* x, int64_t n, float mean, float den, const float* gamma,
                             const float* beta, float* y);
// The same, AVX2+FMA; call only under the avx2 or avx512 variant (norm.cpp selects).
void layer_norm_run_avx2(const float* x, int64_t n, float mean, float den, const float* gamma,
                         const float* beta, float* y);

// y[i] = rms_norm_element(x[i], den, gamma[i]) for i in [0, n).
void rms_norm_run_baseline(const float* x, int64_t n, float den, const float* gamma, float* y);
// The same, AVX2+FMA; call only under the avx2 or avx512 variant (norm.cpp selects).
void rms_norm_run_avx2(const float* x, int64_t n, float den, const float* gamma, float* y);

}  // namespace bl::cpu
