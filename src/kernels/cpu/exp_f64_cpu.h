// exp_f64_cpu.h: e^x over float arrays on x86-64 CPUs, evaluated in binary64 with explicit SIMD.
//
// The contract's exp (float-float, exp_log.h) is correctly rounded, so any correctly rounded
// evaluation gives its bits. These kernels evaluate in binary64 (reduction by ln2/16, a 16-entry
// table of 2^(j/16), degree-6 polynomial; the operations and the error bound, below 2^-50.4
// relative, are in exp_f64_simd.h) four (AVX2+FMA) or eight (AVX-512) doubles at a time, round to
// binary32, and keep the result only where the rounding test shows it cannot be in doubt. The
// scalar bl::exp recomputes the lanes failing the test (rare), NaN, and the inputs in [-104, -87)
// and (88, 89] (subnormal results, overflow edge); x < -104 gives +0 and x > 89 gives +inf
// directly. Output: canonicalize(bl::exp(x[i])), bit for bit. The AVX2 and AVX-512 CPU math maps
// (and so softmax, attention, LSTM) use them for exp.
#pragma once

#include <cstdint>

namespace bl {

// out[i] = canonicalize(bl::exp(x[i])) for i < n; x and out may be the same array (elementwise).
// exp_f64_table_avx2 needs cpu_has_avx2_fma(), exp_f64_table_avx512 isa_supported(Isa::avx512).
void exp_f64_table_avx2(const float* x, float* out, int64_t n);
void exp_f64_table_avx512(const float* x, float* out, int64_t n);

// One leaf of the softmax denominator: e[i] = canonicalize(bl::exp(bl::sub(x[i], m))) for
// i < len <= kReduceLeaf (e may alias x), and returns the leaf's value on the sum schedule (lane
// i mod 32 = lane + e[i], lanes folded by halving): the bits of leaf_reduce<StepAdd>(e, len, 1, 0).
// `next` (may be null) is prefetched meanwhile, len floats (the caller passes the next row's leaf).
// No argument checks (internal to the CPU softmax).
float exp_f64_table_shift_leaf_avx2(const float* x, float m, float* e, int64_t len, const float* next);
float exp_f64_table_shift_leaf_avx512(const float* x, float m, float* e, int64_t len, const float* next);

// out[i] = canonicalize(bl::exp(x[i])) for i < n by the kernel of the active ISA variant with
// non-temporal stores (no read for ownership of out's lines; for outputs beyond the caches).
// Returns false and does nothing where no such kernel runs (not avx2 or avx512).
bool exp_f64_stream(const float* x, float* out, int64_t n);

// Output size from which the math map and softmax write with non-temporal stores: the L3 size,
// at least 32 MiB (a performance choice only: same bits either way).
int64_t exp_f64_stream_min_bytes();

// Test hook: exp_f64_stream_min_bytes() returns `bytes` from now on (< 0: the default size again),
// so tests can run the streaming paths on small arrays.
void set_exp_f64_stream_min_bytes(int64_t bytes);

// Test hooks: the kernels with Taylor degree 4, 5 or 6 and the rounding test's window of
// margin_bits (25..52; 0 switches the test off). Only degree 6 with margin 44 is the kernel; the
// others exist so the tests can show that they are caught.
void exp_f64_table_avx2_variant(const float* x, float* out, int64_t n, int degree, int margin_bits);
void exp_f64_table_avx512_variant(const float* x, float* out, int64_t n, int degree, int margin_bits);

// Test hook: how many lanes of x[0..n) the AVX2 kernel hands to the scalar bl::exp (rounding test
// fired or input outside [-87, 88]).
int64_t exp_f64_table_avx2_fallback_count(const float* x, int64_t n);

}  // namespace bl
