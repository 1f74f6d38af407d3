// lstm_cell.cpp: CPU LSTM cell step, forward and backward (see kernels/lstm_cell.h).
#include <algorithm>

#include "core/error.h"
#include "core/fp_probe.h"
#include "core/thread_pool.h"
#include "kernels/lstm_cell.h"
#include "kernels/math_map.h"

namespace bl {

namespace {

// Tasks from the shape alone (each element is computed independently, so the cut never matters).
int64_t task_count(int64_t rows, int64_t elements) {
  return std::max<int64_t>(1, std::min<int64_t>(rows, elements / 32768));
}

// out[k] = f(x[k]) through the math map's chunk loop (AVX2 build where the CPU has it): the same
// bits as lstm_sigmoid / lstm_tanh, which canonicalize the contract function's result too.
void map_row(MathFn fn, bool avx2, const float* x, float* out, int64_t len) {
  if (avx2)
    math_map_chunk_avx2(fn, x, nullptr, out, len);
  else
    math_map_chunk_baseline(fn, x, nullptr, out, len);
}

// Forward row b in passes over contiguous runs: the pre-activations, the gate functions in
// place, the cell state, tanh(c), h. Each element sees the reference's operations in its order.
void forward_row(const LstmCellForward& a, int64_t b, bool avx2) {
  const int64_t h = a.h;
  const float* x = a.x + b * a.x_stride;
  const float* hw = a.hw + b * 4 * h;
  float* acts = a.acts + b * 4 * h;
  for (int64_t q = 0; q < 4 * h; ++q) acts[q] = lstm_pre(x[q], hw[q], a.bias[q]);
  map_row(MathFn::sigmoid, avx2, acts, acts, 2 * h);
  map_row(MathFn::tanh, avx2, acts + 2 * h, acts + 2 * h, h);
  map_row(MathFn::sigmoid, avx2, acts + 3 * h, acts + 3 * h, h);
  const float* i = acts;
  const float* f = acts + h;
  const float* g = acts + 2 * h;
  const float* o = acts + 3 * h;
  const float* c_prev = a.c_prev + b * h;
  float* c = a.c + b * h;
  float* tc = a.tc + b * h;
  float* hv = a.h_out + b * h;
  for (int64_t j = 0; j < h; ++j) c[j] = lstm_add(lstm_mul(f[j], c_prev[j]), lstm_mul(i[j], g[j]));
  map_row(MathFn::tanh, avx2, c, tc, h);
  for (int64_t j = 0; j < h; ++j) hv[j] = lstm_mul(o[j], tc[j]);
  if (a.seq) {
    float* seq = a.seq + b * a.seq_stride;
    for (int64_t j = 0; j < h; ++j) seq[j] = hv[j];
  }
}

template <class Fn>
void run_rows(int64_t n, int64_t h, ThreadPool& pool, const Fn& row) {
  if (n * h == 0) return;
  const int64_t tasks = task_count(n, n * 4 * h);
  pool.parallel_for(tasks, [&](int64_t t) {
    for (int64_t b = n * t / tasks; b < n * (t + 1) / tasks; ++b) row(b);
  });
}

void check_common(int64_t n, int64_t h, const char* op) {
  BL_CHECK(n >= 0 && h >= 0, op, ": batch rows N and hidden size H must be >= 0, got N=", n, " H=", h);
}

}  // namespace

void lstm_cell_forward_check(const LstmCellForward& a) {
  const char* op = "lstm_cell_forward";
  check_common(a.n, a.h, op);
  if (a.n * a.h == 0) return;
  BL_CHECK(a.x && a.hw && a.bias && a.c_prev, op, ": inputs xproj_t, hw, bias and c_prev must be set");
  BL_CHECK(a.acts && a.c && a.tc && a.h_out, op, ": outputs acts, c, tanh(c) and h must be set");
  BL_CHECK(a.x_stride >= 4 * a.h, op, ": xproj_t row stride ", a.x_stride, " must be >= 4H = ", 4 * a.h);
  BL_CHECK(!a.seq || a.seq_stride >= a.h, op, ": sequence row stride ", a.seq_stride, " must be >= H = ", a.h);
}

void lstm_cell_backward_check(const LstmCellBackward& a) {
  const char* op = "lstm_cell_backward";
  check_common(a.n, a.h, op);
  BL_CHECK((a.dstate_next == nullptr) == (a.dc_next == nullptr), op,
           ": dstate_next and dc_next must both be set (inner step) or both be null (last step)");
  if (a.n * a.h == 0) return;
  BL_CHECK(a.dh_out && a.acts && a.tc && a.c_prev, op, ": inputs dh_out, acts, tanh(c) and c_prev must be set");
  BL_CHECK(a.dgates, op, ": output dgates must be set");
  BL_CHECK(a.dh_out_stride >= a.h, op, ": dh_out row stride ", a.dh_out_stride, " must be >= H = ", a.h);
  BL_CHECK(!a.dx || a.dx_stride >= 4 * a.h, op, ": dx row stride ", a.dx_stride, " must be >= 4H = ", 4 * a.h);
}

void lstm_cell_forward_cpu(const LstmCellForward& a, ThreadPool& pool) {
  lstm_cell_forward_check(a);
  const bool avx2 = cpu_has_avx2_fma();
  run_rows(a.n, a.h, pool, [&](int64_t b) { forward_row(a, b, avx2); });
}

void lstm_cell_backward_cpu(const LstmCellBackward& a, ThreadPool& pool) {
  lstm_cell_backward_check(a);
  run_rows(a.n, a.h, pool, [&](int64_t b) {
    for (int64_t j = 0; j < a.h; ++j) lstm_cell_backward_one(a, b * a.h + j);
  });
}

}  // namespace bl
