// lstm_cell_rows.h: the CPU row loops of the LSTM cell step (kernels/lstm_cell.h), included by
// lstm_cell.cpp (baseline ISA), lstm_cell_avx2.cpp (AVX2+FMA) and lstm_cell_avx512.cpp; all compile
// this same source.
//
// Each row runs in passes over contiguous runs (the pre-activations, the gate functions through the
// math map's chunk loop, c, tanh(c), h; backward: one pass per step kind), with every element's
// operations in the reference's order. Only the stored values are canonicalized (and the gate
// functions read stored values): an IEEE add, sub or mul with a NaN operand returns a NaN, so
// canonicalizing each intermediate of an add / sub / mul chain as the reference does cannot change
// a stored bit. Without the intermediate selects the compiler vectorizes the loops.
// LstmCellConformance.* checks the bits against the reference, NaNs of both signs included.
//
// Internal linkage only (unnamed namespace), as in math_map_loop.h: the two translation units are
// built for different instruction sets.
#pragma once

#include "kernels/lstm_cell.h"
#include "kernels/math_map.h"

namespace bl {
// The row loops of the AVX2+FMA build (lstm_cell_avx2.cpp); call only if cpu_has_avx2_fma().
// scratch holds H floats.
void lstm_cell_forward_rows_avx2(const LstmCellForward& a, int64_t b0, int64_t b1);
void lstm_cell_backward_rows_avx2(const LstmCellBackward& a, int64_t b0, int64_t b1, float* scratch);
// The same built for AVX-512 (lstm_cell_avx512.cpp); call only if the active ISA is avx512.
void lstm_cell_forward_rows_avx512(const LstmCellForward& a, int64_t b0, int64_t b1);
void lstm_cell_backward_rows_avx512(const LstmCellBackward& a, int64_t b0, int64_t b1, float* scratch);
}  // namespace bl

namespace {

using MathChunkFn = void (*)(::bl::MathFn, const float*, const float*, float*, int64_t);

// out = canonicalize(sigmoid(x)) or canonicalize(tanh(x)) over n elements, the bits of the math
// map's loop. bl::sigmoid / bl::tanh are name_fast(x, &hard) with the exception table's value
// where hard is set (exp_log.h); the table lookup is the costly part of a lane and hard is rare, so
// runs of kGateRun elements take name_fast alone and a run with any hard lane is done again
// element by element through bl::sigmoid / bl::tanh. Either way each element gets the same value.
constexpr int64_t kGateRun = 32;

template <bool kTanh>
inline void gate_map(const float* x, float* out, int64_t n) {
  namespace d = ::bl::exp_log_detail;
  float run[kGateRun];  // x may be out (in place): a run is written only once it is settled
  for (int64_t i0 = 0; i0 < n; i0 += kGateRun) {
    const int64_t m = n - i0 < kGateRun ? n - i0 : kGateRun;
    const float* xs = x + i0;
    int any = 0;
    for (int64_t i = 0; i < m; ++i) {
      bool hard;
      const float y = kTanh ? d::tanh_fast(xs[i], &hard) : d::sigmoid_fast(xs[i], &hard);
      run[i] = ::bl::canonicalize(y);
      any |= static_cast<int>(hard);
    }
    if (any)
      for (int64_t i = 0; i < m; ++i) run[i] = ::bl::canonicalize(kTanh ? ::bl::tanh(xs[i]) : ::bl::sigmoid(xs[i]));
    for (int64_t i = 0; i < m; ++i) out[i0 + i] = run[i];
  }
}

// Forward rows [b0, b1); map is the math map's chunk loop of this build.
template <MathChunkFn map>
void lstm_forward_rows(const ::bl::LstmCellForward& a, int64_t b0, int64_t b1) {
  using ::bl::add;
  using ::bl::canonicalize;
  using ::bl::mul;
  const int64_t h = a.h;
  for (int64_t b = b0; b < b1; ++b) {
    const float* __restrict x = a.x + b * a.x_stride;
    const float* __restrict hw = a.hw + b * 4 * h;
    const float* __restrict bias = a.bias;
    float* __restrict acts = a.acts + b * 4 * h;
    for (int64_t q = 0; q < 4 * h; ++q) acts[q] = canonicalize(add(x[q], add(hw[q], bias[q])));
    gate_map<false>(acts, acts, 2 * h);
    gate_map<true>(acts + 2 * h, acts + 2 * h, h);
    gate_map<false>(acts + 3 * h, acts + 3 * h, h);
    const float* __restrict i = acts;
    const float* __restrict f = acts + h;
    const float* __restrict g = acts + 2 * h;
    const float* __restrict o = acts + 3 * h;
    const float* __restrict c_prev = a.c_prev + b * h;
    float* __restrict c = a.c + b * h;
    float* __restrict tc = a.tc + b * h;
    float* __restrict hv = a.h_out + b * h;
    for (int64_t j = 0; j < h; ++j) c[j] = canonicalize(add(mul(f[j], c_prev[j]), mul(i[j], g[j])));
    gate_map<true>(c, tc, h);
    for (int64_t j = 0; j < h; ++j) hv[j] = canonicalize(mul(o[j], tc[j]));
    if (a.seq) {
      float* __restrict seq = a.seq + b * a.seq_stride;
      for (int64_t j = 0; j < h; ++j) seq[j] = hv[j];
    }
  }
}

// One backward row: lstm_cell_grads with the selects of kHasNext resolved at compile time.
template <bool kHasNext>
void lstm_backward_row(const float* __restrict acts, const float* __restrict tcp, const float* __restrict c_prev,
                       const float* __restrict d_out, const float* __restrict dstate_next,
                       const float* __restrict dc_next, float* __restrict dg, float* __restrict dc_f, int64_t h) {
  using ::bl::add;
  using ::bl::canonicalize;
  using ::bl::mul;
  using ::bl::sub;
  for (int64_t j = 0; j < h; ++j) {
    const float i = acts[j], f = acts[h + j], g = acts[2 * h + j], o = acts[3 * h + j], tc = tcp[j];
    const float dh = kHasNext ? add(0.0f, add(dstate_next[j], d_out[j])) : d_out[j];
    const float dc_in = kHasNext ? add(dc_next[j], 0.0f) : 0.0f;
    const float dc = add(dc_in, mul(mul(dh, o), sub(1.0f, mul(tc, tc))));
    dg[j] = canonicalize(mul(mul(dc, g), mul(i, sub(1.0f, i))));
    dg[h + j] = canonicalize(mul(mul(dc, c_prev[j]), mul(f, sub(1.0f, f))));
    dg[2 * h + j] = canonicalize(mul(mul(dc, i), sub(1.0f, mul(g, g))));
    dg[3 * h + j] = canonicalize(mul(mul(dh, tc), mul(o, sub(1.0f, o))));
    dc_f[j] = canonicalize(mul(dc, f));
  }
}

// Backward rows [b0, b1). dc f goes to scratch (H floats) when dc_prev is null.
inline void lstm_backward_rows(const ::bl::LstmCellBackward& a, int64_t b0, int64_t b1, float* scratch) {
  const int64_t h = a.h;
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t e = b * h;
    float* dgates = a.dgates + b * 4 * h;
    float* dc_f = a.dc_prev ? a.dc_prev + e : scratch;
    const float* d_out = a.dh_out + b * a.dh_out_stride;
    if (a.dc_next)
      lstm_backward_row<true>(a.acts + b * 4 * h, a.tc + e, a.c_prev + e, d_out, a.dstate_next + e, a.dc_next + e,
                              dgates, dc_f, h);
    else
      lstm_backward_row<false>(a.acts + b * 4 * h, a.tc + e, a.c_prev + e, d_out, nullptr, nullptr, dgates, dc_f, h);
    if (a.dx) {
      float* __restrict dx = a.dx + b * a.dx_stride;
      const float* __restrict src = dgates;
      if (a.dx_add_zero)
        for (int64_t q = 0; q < 4 * h; ++q) dx[q] = ::bl::canonicalize(::bl::add(src[q], 0.0f));
      else
        for (int64_t q = 0; q < 4 * h; ++q) dx[q] = src[q];
    }
  }
}

}  // namespace
