// exp_f64_cpu.h's public functions (baseline ISA): argument checks, the choice of kernel, and the
// stand-ins for builds without the SIMD translation units.
#include "kernels/cpu/exp_f64_cpu.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "core/error.h"
#include "core/isa.h"
#include "kernels/cpu/exp_f64_simd.h"

namespace bl {

namespace {

void check_table_variant(const char* op, const float* x, const float* out, int64_t n, int degree,
                         int margin_bits) {
  BL_CHECK(n >= 0, op, ": n must be >= 0, got ", n);
  BL_CHECK(n == 0 || (x != nullptr && out != nullptr), op, ": x or out is null with n = ", n);
  BL_CHECK(degree == 4 || degree == 5 || degree == exp_f64_simd::kTableDegree, op, ": degree must be 4, 5 or ",
           exp_f64_simd::kTableDegree, ", got ", degree);
  BL_CHECK(margin_bits == 0 || (margin_bits >= 25 && margin_bits <= 52), op,
           ": margin_bits must be 0 (no rounding test) or in [25, 52], got ", margin_bits);
}

std::atomic<int64_t> stream_min_bytes_override{-1};

}  // namespace

bool exp_f64_stream(const float* x, float* out, int64_t n) {
  using StreamFn = void (*)(const float*, float*, int64_t);
  const StreamFn fn = select_isa<StreamFn>(nullptr, &exp_f64_simd::run_table_stream_avx2,
                                           &exp_f64_simd::run_table_stream_avx512, nullptr);
  if (fn == nullptr) return false;
  fn(x, out, n);
  return true;
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

namespace exp_f64_simd {

#if !(defined(__x86_64__) || defined(_M_X64))
// Not x86-64: the active ISA variant is never avx2 or avx512, so these are never reached.
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
