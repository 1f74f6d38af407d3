// exp_f64_table.h: the table-driven binary64 exp kernels of exp_f64_simd.h, written once over a
// traits type T (exp_vec_avx2.h, exp_vec_avx512.h) and instantiated by exp_f64_table_avx2.cpp and
// exp_f64_table_avx512.cpp. Everything here is in an unnamed namespace: each per-ISA translation
// unit keeps its own copy (scripts/check_isa_objects.sh). Include after the contract headers
// (contract/math.h, with BL_HD redefined as `static inline`) and exp_f64_simd.h.
//
// Each lane performs the operations of exp_f64_simd.h's table-driven evaluation (reduction by
// ln2/16, 2^(j/16) from the 16-entry table, degree-6 Taylor polynomial, scaling by 2^k in the
// exponent field) and the rounding test on y's low mantissa bits. Lanes in doubt and inputs outside
// [kLow, kHigh] get the scalar bl::exp, except x < kZeroBelow (+0) and x > kInfAbove (+inf), stored
// directly. Partial blocks are read and written through T::load_first / T::store_first; their
// inactive lanes evaluate e^0 (never in doubt) and are never stored.
#pragma once

#include <algorithm>
#include <cstdint>

#include "contract/schedule.h"

namespace bl::exp_f64_simd {
namespace {

// The hot path is forced inline (GCC otherwise made a call per block, reloading the window and
// the table from memory); the scalar fallback stays out of line.
#define BL_EXP_TABLE_INLINE inline __attribute__((always_inline))

// The rounding test's window: a lane is in doubt when 0 <= L - low <= width, L the 29 low
// mantissa bits of y, low = 2^28 - W, width = 2W (held as T::window_width(width)). `on` false: no
// test.
template <class T>
struct Window {
  typename T::Q low;
  typename T::Q width;
  bool on;
};

template <class T>
Window<T> kernel_window(int margin_bits) {
  Window<T> w;
  w.on = margin_bits > 0;
  const int64_t half_width = w.on ? int64_t{1} << (53 - margin_bits) : 0;  // W
  w.low = T::set1_q((int64_t{1} << 28) - half_width);
  w.width = T::window_width(2 * half_width);
  return w;
}

// e^x for half a block of in-range floats; *doubt gets a bit per lane failing the rounding test.
template <class T, int Degree>
BL_EXP_TABLE_INLINE typename T::H exp_half(typename T::H xf, const typename T::Table& table, const Window<T>& w,
                                           int* doubt) {
  using D = typename T::D;
  const D x = T::widen(xf);
  const D shifter = T::set1_d(6755399441055744.0);  // 1.5 * 2^52
  const D t = T::fma_d(x, T::set1_d(kTableInvStep), shifter);
  const D nd = T::sub_d(t, shifter);
  const D r1 = T::fnma_d(nd, T::set1_d(kTableStepHi), x);  // exact
  const D r = T::fnma_d(nd, T::set1_d(kTableStepLo), r1);
  // The low bits of t hold N (t = 1.5*2^52 + N): j = N & 15; (N << 48) masked to the exponent
  // field is k << 52 (mod 2^64), added to the table value's bits: 2^(j/16) * 2^k.
  const typename T::Q ti = T::as_q(t);
  const D tj = T::lookup(table, ti);
  const typename T::Q kbits = T::and_q(T::shl48_q(ti), T::set1_q(int64_t(0xFFF0000000000000ull)));
  const D ts = T::as_d(T::add_q(T::as_q(tj), kbits));
  D p = T::set1_d(kTableTaylor[Degree]);
  for (int i = Degree - 1; i >= 1; --i) p = T::fma_d(p, r, T::set1_d(kTableTaylor[i]));
  const D y = T::fma_d(T::mul_d(ts, r), p, ts);
  const typename T::H f = T::narrow(y);
  *doubt = 0;
  if (w.on) {
    const typename T::Q low_bits = T::and_q(T::as_q(y), T::set1_q((1 << 29) - 1));
    *doubt = T::within(T::sub_q(low_bits, w.low), w.width);  // L - low in [-2^28, 2^29)
  }
  return f;
}

// f with the lanes set in `redo` replaced by the scalar canonicalize(bl::exp(x)); counts them.
template <class T>
__attribute__((noinline)) typename T::F fallback_lanes(typename T::F xv, typename T::F f, int redo, int64_t* count) {
  alignas(64) float xin[T::kLanes];
  alignas(64) float res[T::kLanes];
  T::store(xin, xv);
  T::store(res, f);
  for (int j = 0; j < T::kLanes; ++j) {
    if ((redo >> j) & 1) {
      res[j] = canonicalize(exp(xin[j]));
      ++*count;
    }
  }
  return T::load(res);
}

// e^x for the lanes of xv set in `active` (the others must hold 0: they evaluate e^0 = 1); lanes
// in doubt or out of range are recomputed by the scalar exp, counted in *count.
template <class T, int Degree>
BL_EXP_TABLE_INLINE typename T::F exp_vector(typename T::F xv, int active, const typename T::Table& table,
                                             const Window<T>& w, int64_t* count) {
  using M = typename T::M;
  constexpr int kHalf = T::kLanes / 2;
  const M in_range = T::both(T::ge(xv, kLow), T::le(xv, kHigh));
  const typename T::F xs = T::keep(in_range, xv);  // other lanes evaluate e^0, then fall back
  const M zero = T::lt(xv, kZeroBelow);            // result +0
  const M inf = T::gt(xv, kInfAbove);              // result +inf
  int doubt_lo, doubt_hi;
  const typename T::H f_lo = exp_half<T, Degree>(T::lo(xs), table, w, &doubt_lo);
  const typename T::H f_hi = exp_half<T, Degree>(T::hi(xs), table, w, &doubt_hi);
  typename T::F f = T::clear(zero, T::join(f_lo, f_hi));
  f = T::put(f, inf, T::set1(float_of(0x7F800000u)));
  const int settled = T::bits(T::either(in_range, T::either(zero, inf)));
  const int redo = (~settled | ((doubt_lo | (doubt_hi << kHalf)) & T::bits(in_range))) & active;
  if (redo == 0) return f;
  return fallback_lanes<T>(xv, f, redo, count);
}

constexpr int full_block(int lanes) { return static_cast<int>((1u << lanes) - 1u); }

// out[0..n) from x[0..n) (x may alias out); returns the number of lanes recomputed by the scalar exp.
template <class T, int Degree>
int64_t run_degree(const float* x, float* out, int64_t n, int margin_bits) {
  constexpr int L = T::kLanes;
  const Window<T> w = kernel_window<T>(margin_bits);
  const typename T::Table table = T::load_table(kTable);
  int64_t count = 0;
  int64_t i = 0;
  for (; i + L <= n; i += L)
    T::storeu(out + i, exp_vector<T, Degree>(T::loadu(x + i), full_block(L), table, w, &count));
  if (i < n) {
    const int64_t len = n - i;
    const typename T::F f =
        exp_vector<T, Degree>(T::load_first(x + i, len), full_block(static_cast<int>(len)), table, w, &count);
    T::store_first(out + i, len, f);
  }
  return count;
}

// run_degree<kTableDegree> writing whole aligned blocks of out with non-temporal stores.
template <class T>
void run_stream(const float* x, float* out, int64_t n) {
  constexpr int L = T::kLanes;
  constexpr uintptr_t kBlockBytes = L * sizeof(float);
  if (reinterpret_cast<uintptr_t>(out) % sizeof(float) != 0) {  // not float-aligned: no streaming at all
    run_degree<T, kTableDegree>(x, out, n, kTableMarginBits);
    return;
  }
  // Head: the regular kernel until out is aligned to a block; then whole blocks by non-temporal
  // stores (no read for ownership of the output lines); the tail by the regular kernel.
  const uintptr_t head_bytes = (kBlockBytes - reinterpret_cast<uintptr_t>(out) % kBlockBytes) % kBlockBytes;
  const int64_t head = std::min<int64_t>(n, static_cast<int64_t>(head_bytes / sizeof(float)));
  run_degree<T, kTableDegree>(x, out, head, kTableMarginBits);
  const Window<T> w = kernel_window<T>(kTableMarginBits);
  const typename T::Table table = T::load_table(kTable);
  int64_t i = head;
  for (; i + L <= n; i += L) {
    int64_t count = 0;
    T::stream(out + i, exp_vector<T, kTableDegree>(T::loadu(x + i), full_block(L), table, w, &count));
  }
  run_degree<T, kTableDegree>(x + i, out + i, n - i, kTableMarginBits);
  T::stream_fence();  // the streamed lines are visible before the caller signals completion
}

// One leaf of the softmax denominator (exp_f64_simd.h): e[i] = exp(sub(x[i], m)) and the leaf's
// value on the sum schedule. Element i goes to sum lane i mod 32 in ascending i: register
// (i mod 32) / kLanes of acc; the partial block adds its active lanes only.
template <class T>
float run_shift_leaf(const float* x, float m, float* e, int64_t len, const float* next) {
  constexpr int L = T::kLanes;
  constexpr int kRegs = kReduceLanes / L;
  const Window<T> w = kernel_window<T>(kTableMarginBits);
  const typename T::Table table = T::load_table(kTable);
  const typename T::F mv = T::set1(m);
  typename T::F acc[kRegs];
  for (int q = 0; q < kRegs; ++q) acc[q] = T::zero();
  int64_t count = 0;
  int64_t i = 0;
  for (; i + L <= len; i += L) {
    if (next && i % 16 == 0) T::prefetch(next + i);  // a line per 16 floats
    const typename T::F f = exp_vector<T, kTableDegree>(T::sub(T::loadu(x + i), mv), full_block(L), table, w, &count);
    T::storeu(e + i, f);
    acc[(i / L) % kRegs] = T::add(acc[(i / L) % kRegs], f);
  }
  if (i < len) {
    const int64_t rest = len - i;
    const typename T::M active = T::first(rest);
    const typename T::F xs = T::keep(active, T::sub(T::load_first(x + i, rest), mv));
    const typename T::F f = exp_vector<T, kTableDegree>(xs, full_block(static_cast<int>(rest)), table, w, &count);
    T::store_first(e + i, rest, f);
    acc[(i / L) % kRegs] = T::add_where(active, acc[(i / L) % kRegs], f);
  }
  alignas(64) float lanes[kReduceLanes];
  for (int q = 0; q < kRegs; ++q) T::store(lanes + L * q, acc[q]);
  for (int s = kReduceLanes / 2; s >= 1; s /= 2)
    for (int j = 0; j < s; ++j) lanes[j] = add(lanes[j], lanes[j + s]);
  return lanes[0];
}

// The table-driven kernel with Taylor degree 4, 5 or kTableDegree (exp_f64_simd.h's run_table_*).
template <class T>
void run_table(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks) {
  int64_t count = 0;
  switch (degree) {
    case 4: count = run_degree<T, 4>(x, out, n, margin_bits); break;
    case 5: count = run_degree<T, 5>(x, out, n, margin_bits); break;
    default: count = run_degree<T, kTableDegree>(x, out, n, margin_bits); break;
  }
  if (fallbacks) *fallbacks += count;
}

}  // namespace
}  // namespace bl::exp_f64_simd

// The entry points of exp_f64_simd.h for one instruction set (run_table_<isa>,
// run_table_stream_<isa>, run_table_shift_leaf_<isa>) over the traits T; expanded inside
// namespace bl::exp_f64_simd by the per-ISA translation unit.
#define BL_EXP_F64_TABLE_ENTRY_POINTS(isa, T)                                                                    \
  void run_table_##isa(const float* x, float* out, int64_t n, int degree, int margin_bits, int64_t* fallbacks) { \
    run_table<T>(x, out, n, degree, margin_bits, fallbacks);                                                     \
  }                                                                                                              \
  void run_table_stream_##isa(const float* x, float* out, int64_t n) { run_stream<T>(x, out, n); }               \
  float run_table_shift_leaf_##isa(const float* x, float m, float* e, int64_t len, const float* next) {          \
    return run_shift_leaf<T>(x, m, e, len, next);                                                                \
  }
