// exp_f64_cpu.h's public functions (baseline ISA): argument checks, the AVX-512 switch, and the
// stand-ins for builds without the SIMD translation units.
#include "kernels/cpu/exp_f64_cpu.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/fp_probe.h"
#include "core/isa.h"
#include "kernels/cpu/exp_f64_simd.h"

namespace bl {

namespace {

// Whether the AVX-512 math map uses the AVX-512 kernel when BITLEARN_EXP_F64_AVX512 is unset: yes,
// since its tests and the 2^32 sweep passed on a 16-core AVX-512 host (H200 machine, 2026-11-30).
constexpr bool kExpF64Avx512Default = true;

// Whether the math maps use the table-driven kernels when BITLEARN_EXP_F64_TABLE is unset: yes,
// since their tests and the 2^32 sweep passed on the 2-core AVX2 development machine (AVX2 kernel)
// and on the H200 machine's 16-core AVX-512 host (AVX-512 kernel), 2026-11-30.
constexpr bool kExpF64TableDefault = true;

// Whether large exp / softmax outputs are written with non-temporal stores when
// BITLEARN_EXP_F64_STREAM is unset: yes, since on the H200 machine's 16-core AVX-512 host it
// raised exp from 0.72 to 0.85 of memcpy at 16 threads and from 0.60 to 0.66 at 1 thread (round 2,
// 2026-11-30); its test forces it on small arrays on every machine.
constexpr bool kExpF64StreamDefault = true;

// Whether the CPU softmax uses the fused shift + exp + leaf-sum kernels when
// BITLEARN_EXP_F64_SOFTMAX_FUSED is unset: yes, since their tests passed on the 2-core AVX2
// development machine and on the H200 machine's 16-core AVX-512 host (round 2, 2026-11-30).
constexpr bool kExpF64SoftmaxFusedDefault = true;

// A 0/1 environment switch; `fallback` when unset or empty.
bool read_switch(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  BL_CHECK(std::strcmp(v, "0") == 0 || std::strcmp(v, "1") == 0, name, " must be 0 or 1, got '", v, "'");
  return std::strcmp(v, "1") == 0;
}

void check_variant(const char* op, const float* x, const float* out, int64_t n, int degree) {
  BL_CHECK(n >= 0, op, ": n must be >= 0, got ", n);
  BL_CHECK(n == 0 || (x != nullptr && out != nullptr), op, ": x or out is null with n = ", n);
  BL_CHECK(degree == 7 || degree == 11 || degree == exp_f64_simd::kDegree, op,
           ": degree must be 7, 11 or ", exp_f64_simd::kDegree, ", got ", degree);
}

void check_table_variant(const char* op, const float* x, const float* out, int64_t n, int degree,
                         int margin_bits) {
  BL_CHECK(n >= 0, op, ": n must be >= 0, got ", n);
  BL_CHECK(n == 0 || (x != nullptr && out != nullptr), op, ": x or out is null with n = ", n);
  BL_CHECK(degree == 4 || degree == 5 || degree == exp_f64_simd::kTableDegree, op, ": degree must be 4, 5 or ",
           exp_f64_simd::kTableDegree, ", got ", degree);
  BL_CHECK(margin_bits == 0 || (margin_bits >= 25 && margin_bits <= 52), op,
           ": margin_bits must be 0 (no rounding test) or in [25, 52], got ", margin_bits);
}

}  // namespace

namespace {
std::atomic<int64_t> stream_min_bytes_override{-1};
}  // namespace

bool exp_f64_stream_enabled() {
  static const bool on = read_switch("BITLEARN_EXP_F64_STREAM", kExpF64StreamDefault);
  return on || stream_min_bytes_override.load() >= 0;
}

bool exp_f64_stream(const float* x, float* out, int64_t n) {
#if defined(__x86_64__) || defined(_M_X64)
  if (!exp_f64_cpu_enabled() || !exp_f64_table_enabled() || !exp_f64_stream_enabled()) return false;
  if (active_isa() == Isa::avx512 && exp_f64_avx512_enabled()) {
    exp_f64_simd::run_table_stream_avx512(x, out, n);
    return true;
  }
  if (cpu_has_avx2_fma()) {
    exp_f64_simd::run_table_stream_avx2(x, out, n);
    return true;
  }
#else
  (void)x, (void)out, (void)n;
#endif
  return false;
}

void set_exp_f64_stream_min_bytes(int64_t bytes) { stream_min_bytes_override.store(bytes); }

int64_t exp_f64_stream_min_bytes() {
  const int64_t forced = stream_min_bytes_override.load();
  if (forced >= 0) return forced;
  static const int64_t bytes = [] {
#if defined(_SC_LEVEL3_CACHE_SIZE)
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#else
    const long l3 = 0;
#endif
    return std::max<int64_t>(int64_t{32} << 20, l3 > 0 ? int64_t{l3} : 0);
  }();
  return bytes;
}

bool exp_f64_softmax_fused_enabled() {
  static const bool on = read_switch("BITLEARN_EXP_F64_SOFTMAX_FUSED", kExpF64SoftmaxFusedDefault);
  return on;
}

bool exp_f64_table_enabled() {
  static const bool on = read_switch("BITLEARN_EXP_F64_TABLE", kExpF64TableDefault);
  return on;
}

void exp_f64_table_avx2(const float* x, float* out, int64_t n) {
  exp_f64_simd::run_table_avx2(x, out, n, exp_f64_simd::kTableDegree, exp_f64_simd::kTableMarginBits,
                               nullptr);
}

void exp_f64_table_avx512(const float* x, float* out, int64_t n) {
  exp_f64_simd::run_table_avx512(x, out, n, exp_f64_simd::kTableDegree, exp_f64_simd::kTableMarginBits,
                                 nullptr);
}

void exp_f64_table_avx2_variant(const float* x, float* out, int64_t n, int degree, int margin_bits) {
  check_table_variant("exp_f64_table_avx2_variant", x, out, n, degree, margin_bits);
  exp_f64_simd::run_table_avx2(x, out, n, degree, margin_bits, nullptr);
}

void exp_f64_table_avx512_variant(const float* x, float* out, int64_t n, int degree, int margin_bits) {
  check_table_variant("exp_f64_table_avx512_variant", x, out, n, degree, margin_bits);
  exp_f64_simd::run_table_avx512(x, out, n, degree, margin_bits, nullptr);
}

int64_t exp_f64_table_avx2_fallback_count(const float* x, int64_t n) {
  check_table_variant("exp_f64_table_avx2_fallback_count", x, x, n, exp_f64_simd::kTableDegree,
                      exp_f64_simd::kTableMarginBits);
  int64_t count = 0;
  std::vector<float> out(static_cast<size_t>(n));
  exp_f64_simd::run_table_avx2(x, out.data(), n, exp_f64_simd::kTableDegree,
                               exp_f64_simd::kTableMarginBits, &count);
  return count;
}

float exp_f64_table_shift_leaf_avx2(const float* x, float m, float* e, int64_t len, const float* next) {
  return exp_f64_simd::run_table_shift_leaf_avx2(x, m, e, len, next);
}

float exp_f64_table_shift_leaf_avx512(const float* x, float m, float* e, int64_t len, const float* next) {
  return exp_f64_simd::run_table_shift_leaf_avx512(x, m, e, len, next);
}

bool exp_f64_cpu_enabled() {
  static const bool on = read_switch("BITLEARN_EXP_F64", true);
  return on;
}

bool exp_f64_avx512_enabled() {
  static const bool on = read_switch("BITLEARN_EXP_F64_AVX512", kExpF64Avx512Default);
  return on;
}

void exp_f64_avx2(const float* x, float* out, int64_t n) {
  exp_f64_simd::run_avx2(x, out, n, exp_f64_simd::kDegree, exp_f64_simd::kMarginBits,
                         nullptr);
}

void exp_f64_avx512(const float* x, float* out, int64_t n) {
  exp_f64_simd::run_avx512(x, out, n, exp_f64_simd::kDegree,
                           exp_f64_simd::kMarginBits, nullptr);
}

void exp_f64_avx2_variant(const float* x, float* out, int64_t n, int degree, int margin_bits) {
  check_variant("exp_f64_avx2_variant", x, out, n, degree);
  exp_f64_simd::run_avx2(x, out, n, degree, margin_bits, nullptr);
}

void exp_f64_avx512_variant(const float* x, float* out, int64_t n, int degree, int margin_bits) {
  check_variant("exp_f64_avx512_variant", x, out, n, degree);
  exp_f64_simd::run_avx512(x, out, n, degree, margin_bits, nullptr);
}

int64_t exp_f64_avx2_fallback_count(const float* x, int64_t n) {
  check_variant("exp_f64_avx2_fallback_count", x, x, n, exp_f64_simd::kDegree);
  int64_t count = 0;
  std::vector<float> out(static_cast<size_t>(n));
  exp_f64_simd::run_avx2(x, out.data(), n, exp_f64_simd::kDegree,
                         exp_f64_simd::kMarginBits, &count);
  return count;
}

namespace exp_f64_simd {

#if !(defined(__x86_64__) || defined(_M_X64))
void run_avx2(const float*, float*, int64_t, int, int, int64_t*) {
  throw Error("exp_f64_avx2: this build has no AVX2 kernels (not x86-64)");
}
void run_avx512(const float*, float*, int64_t, int, int, int64_t*) {
  throw Error("exp_f64_avx512: this build has no AVX-512 kernels (not x86-64)");
}
void run_table_avx2(const float*, float*, int64_t, int, int, int64_t*) {
  throw Error("exp_f64_table_avx2: this build has no AVX2 kernels (not x86-64)");
}
void run_table_avx512(const float*, float*, int64_t, int, int, int64_t*) {
  throw Error("exp_f64_table_avx512: this build has no AVX-512 kernels (not x86-64)");
}
void run_table_stream_avx2(const float*, float*, int64_t) {
  throw Error("exp_f64_stream: this build has no AVX2 kernels (not x86-64)");
}
void run_table_stream_avx512(const float*, float*, int64_t) {
  throw Error("exp_f64_stream: this build has no AVX-512 kernels (not x86-64)");
}
float run_table_shift_leaf_avx2(const float*, float, float*, int64_t, const float*) {
  throw Error("exp_f64_table_shift_leaf_avx2: this build has no AVX2 kernels (not x86-64)");
}
float run_table_shift_leaf_avx512(const float*, float, float*, int64_t, const float*) {
  throw Error("exp_f64_table_shift_leaf_avx512: this build has no AVX-512 kernels (not x86-64)");
}
#endif

}  // namespace exp_f64_simd

}  // namespace bl
