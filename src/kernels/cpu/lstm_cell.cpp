// lstm_cell.cpp: CPU LSTM cell step, forward and backward (see kernels/lstm_cell.h).
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/lstm_cell_rows.h"
#include "kernels/lstm_cell.h"
#include "kernels/math_map.h"

namespace bl {

namespace {

// Tasks from the shape alone (each element is computed independently, so the cut never matters):
// about `per_task` of the step's 4H-wide row elements per task. Each forward element costs a
// correctly rounded gate function, so the forward is cut finely: at N = 64, H = 64 (the LSTM
// classifier) it gets 4 tasks, which a second thread shares even when it wakes late (a pool wake-up
// costs tens of microseconds on small VMs). The backward's elements are a few products each, cheaper
// than a wake-up at that size, so it keeps one task there.
constexpr int64_t kForwardElementsPerTask = 4096;
constexpr int64_t kBackwardElementsPerTask = 32768;

int64_t task_count(int64_t rows, int64_t elements, int64_t per_task) {
  return std::max<int64_t>(1, std::min<int64_t>(rows, elements / per_task));
}

// Rows [b0, b1) of each task, the cut from the shape alone.
template <class Fn>
void run_tasks(int64_t n, int64_t h, int64_t per_task, ThreadPool& pool, const Fn& rows) {
  if (n * h == 0) return;
  const int64_t tasks = task_count(n, n * 4 * h, per_task);
  if (tasks == 1) {
    rows(int64_t{0}, n);
    return;
  }
  pool.parallel_for(tasks, [&](int64_t t) { rows(n * t / tasks, n * (t + 1) / tasks); });
}

// The AVX-512 row loops where this build has them (x86-64 with the AVX-512 flags), else null
// (select_isa then takes the AVX2 loops).
using ForwardRowsFn = void (*)(const LstmCellForward&, int64_t, int64_t);
using BackwardRowsFn = void (*)(const LstmCellBackward&, int64_t, int64_t, float*);
ForwardRowsFn avx512_rows_forward() {
#if defined(__x86_64__) || defined(_M_X64)
  return &lstm_cell_forward_rows_avx512;
#else
  return nullptr;
#endif
}
BackwardRowsFn avx512_rows_backward() {
#if defined(__x86_64__) || defined(_M_X64)
  return &lstm_cell_backward_rows_avx512;
#else
  return nullptr;
#endif
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
  using RowsFn = void (*)(const LstmCellForward&, int64_t, int64_t);
  const RowsFn rows = select_isa<RowsFn>(&lstm_forward_rows<math_map_chunk_baseline>, &lstm_cell_forward_rows_avx2,
                                         avx512_rows_forward(), nullptr);
  run_tasks(a.n, a.h, kForwardElementsPerTask, pool, [&](int64_t b0, int64_t b1) { rows(a, b0, b1); });
}

#if !(defined(__x86_64__) || defined(_M_X64))
// No AVX2 build off x86-64; active_isa() is never avx2 there, so this is never reached.
void lstm_cell_forward_rows_avx2(const LstmCellForward& a, int64_t b0, int64_t b1) {
  lstm_forward_rows<math_map_chunk_baseline>(a, b0, b1);
}
void lstm_cell_backward_rows_avx2(const LstmCellBackward& a, int64_t b0, int64_t b1, float* scratch) {
  lstm_backward_rows(a, b0, b1, scratch);
}
#endif

void lstm_cell_backward_cpu(const LstmCellBackward& a, ThreadPool& pool) {
  lstm_cell_backward_check(a);
  using RowsFn = void (*)(const LstmCellBackward&, int64_t, int64_t, float*);
  const RowsFn rows = select_isa<RowsFn>(&lstm_backward_rows, &lstm_cell_backward_rows_avx2,
                                         avx512_rows_backward(), nullptr);
  run_tasks(a.n, a.h, kBackwardElementsPerTask, pool, [&](int64_t b0, int64_t b1) {
    std::vector<float> scratch(static_cast<size_t>(a.h));
    rows(a, b0, b1, scratch.data());
  });
}

}  // namespace bl
