// softmax_rows.h: the elementwise passes of the CPU softmax over one row kept in cache (internal to
// src/kernels/cpu/), in a baseline build (softmax.cpp) and an AVX2 build (softmax_rows_avx2.cpp).
//
// Each output is the reference's operation (kernels/softmax.h): one IEEE sub or div per step,
// rounded once, and the canonical NaN for any NaN where the value is stored as a result, so both
// builds give the same bits.
#pragma once

#include <cstdint>

namespace bl::cpu {

// out[i] = sub(x[i], m) for i in [0, n): the shifted values exp reads (not canonicalized: exp
// maps every NaN to the canonical NaN). out may alias x.
void softmax_shift_baseline(const float* x, int64_t n, float m, float* out);
void softmax_shift_avx2(const float* x, int64_t n, float m, float* out);

// y[i] = canonicalize(div(y[i], s)) for i in [0, n): softmax from the row's exponentials.
void softmax_divide_baseline(float* y, int64_t n, float s);
void softmax_divide_avx2(float* y, int64_t n, float s);

// y[i] = log_softmax_element(x[i], m, log_s) = canonicalize(sub(sub(x[i], m), log_s)) for i in
// [0, n). y may alias x.
void log_softmax_finish_baseline(const float* x, int64_t n, float m, float log_s, float* y);
void log_softmax_finish_avx2(const float* x, int64_t n, float m, float log_s, float* y);

// The same outputs written with non-temporal stores where y is 32-byte aligned (then sfence), for
// outputs beyond the caches; AVX2 only. softmax_divide_stream_avx2 reads the exponentials from e
// (e and y distinct): y[i] = canonicalize(div(e[i], s)).
void softmax_divide_stream_avx2(const float* e, int64_t n, float s, float* y);
void log_softmax_finish_stream_avx2(const float* x, int64_t n, float m, float log_s, float* y);

}  // namespace bl::cpu
