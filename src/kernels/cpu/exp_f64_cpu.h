// exp_f64_cpu.h: e^x over float arrays on x86-64 CPUs, evaluated in binary64 with explicit SIMD.
//
// The contract's exp (float-float, exp_log.h) is correctly rounded, so any correctly rounded
// evaluation gives its bits. These kernels evaluate in binary64 (the operations and the error bound,
// below 2^-49 relative, are in exp_f64_simd.h) four (AVX2+FMA) or eight (AVX-512) doubles at a
// time, round to binary32, and keep the result only where the rounding test shows it cannot be in
// doubt. The scalar bl::exp recomputes the lanes failing the test (rare), NaN, and the inputs in
// [-104, -87) and (88, 89] (subnormal results, overflow edge); x < -104 gives +0 and x > 89 gives
// +inf directly. Output: canonicalize(bl::exp(x[i])), bit for bit.
#pragma once

#include <cstdint>

namespace bl {

// out[i] = canonicalize(bl::exp(x[i])) for i < n, AVX2+FMA; call only if cpu_has_avx2_fma().
// x and out may be the same array (elementwise).
void exp_f64_avx2(const float* x, float* out, int64_t n);

// The same with AVX-512 (F, VL, DQ); call only if isa_supported(Isa::avx512).
void exp_f64_avx512(const float* x, float* out, int64_t n);

// Whether the AVX2 / AVX-512 CPU math maps (and so softmax, attention, LSTM) use these kernels for
// exp: BITLEARN_EXP_F64=0 switches them off (the compiled bl::exp loop runs; same bits, slower).
bool exp_f64_cpu_enabled();

// Whether the AVX-512 CPU math map's exp uses exp_f64_avx512 (true) or exp_f64_avx2 (false):
// BITLEARN_EXP_F64_AVX512=1 or 0 picks; unset gives the built-in default (kExpF64Avx512Default).
bool exp_f64_avx512_enabled();

// The table-driven kernels (reduction by ln2/16, a 16-entry table of 2^(j/16), degree-6 polynomial;
// exp_f64_simd.h has the evaluation and its error bound): the same bits, fewer operations.
// exp_f64_table_avx2 needs cpu_has_avx2_fma(), exp_f64_table_avx512 isa_supported(Isa::avx512).
void exp_f64_table_avx2(const float* x, float* out, int64_t n);
void exp_f64_table_avx512(const float* x, float* out, int64_t n);

// Whether the math maps use the table-driven kernels instead of the degree-12 ones:
// BITLEARN_EXP_F64_TABLE=1 or 0 picks; unset gives the built-in default (kExpF64TableDefault).
bool exp_f64_table_enabled();

// One leaf of the softmax denominator by the table-driven kernel: e[i] = canonicalize(bl::exp(
// bl::sub(x[i], m))) for i < len <= kReduceLeaf (e may alias x), and returns the leaf's value on
// the sum schedule (lane i mod 32 = lane + e[i], lanes folded by halving): the bits of
// leaf_reduce<StepAdd>(e, len, 1, 0). `next` (may be null) is prefetched meanwhile, len floats
// (the caller passes the next row's leaf). No argument checks (internal to the CPU softmax).
float exp_f64_table_shift_leaf_avx2(const float* x, float m, float* e, int64_t len, const float* next);
float exp_f64_table_shift_leaf_avx512(const float* x, float m, float* e, int64_t len, const float* next);

// out[i] = canonicalize(bl::exp(x[i])) for i < n by the table-driven kernel of this CPU with
// non-temporal stores (no read for ownership of out's lines; for outputs beyond the caches).
// Returns false and does nothing where it does not apply: not x86-64 with AVX2+FMA, or
// BITLEARN_EXP_F64=0, or the table-driven kernels off, or BITLEARN_EXP_F64_STREAM=0.
bool exp_f64_stream(const float* x, float* out, int64_t n);

// Output size from which the math map and softmax write with non-temporal stores: the L3 size,
// at least 32 MiB (a performance choice only: same bits either way).
int64_t exp_f64_stream_min_bytes();

// Test hook: streaming on whatever BITLEARN_EXP_F64_STREAM says, and exp_f64_stream_min_bytes()
// returns `bytes`, from now on (< 0: the switch and the default size again), so tests can run the
// streaming paths on small arrays.
void set_exp_f64_stream_min_bytes(int64_t bytes);

// Whether exp_f64_stream and the softmax's streamed last pass may run (BITLEARN_EXP_F64_STREAM=1
// or 0; unset: the built-in default, kExpF64StreamDefault).
bool exp_f64_stream_enabled();

// Whether the CPU softmax's one-pass rows use exp_f64_table_shift_leaf_*: BITLEARN_EXP_F64_SOFTMAX_FUSED
// = 1 or 0 picks; unset gives the built-in default (kExpF64SoftmaxFusedDefault). Same bits either way.
bool exp_f64_softmax_fused_enabled();

// Test hooks: the table-driven kernels with Taylor degree 4, 5 or 6 and the rounding test's window of
// margin_bits (25..52; 0 switches the test off). Only degree 6 with margin 44 is the kernel.
void exp_f64_table_avx2_variant(const float* x, float* out, int64_t n, int degree, int margin_bits);
void exp_f64_table_avx512_variant(const float* x, float* out, int64_t n, int degree, int margin_bits);

// Test hook: how many lanes of x[0..n) the table-driven AVX2 kernel hands to the scalar bl::exp.
int64_t exp_f64_table_avx2_fallback_count(const float* x, int64_t n);

// Test hooks: the same kernels with another Taylor degree (7, 11 or 12) and rounding-test margin
// (as -log2; <= 0 switches the test off, so only out-of-range lanes fall back). Only degree 12
// with margin 44 is correct; the others exist so the tests can show that they are caught.
void exp_f64_avx2_variant(const float* x, float* out, int64_t n, int degree, int margin_bits);
void exp_f64_avx512_variant(const float* x, float* out, int64_t n, int degree, int margin_bits);

// Test hook: how many lanes of x[0..n) the AVX2 kernel (degree 12, margin 44) hands to the
// scalar bl::exp (rounding test fired or input outside [-87, 88]).
int64_t exp_f64_avx2_fallback_count(const float* x, int64_t n);

}  // namespace bl
