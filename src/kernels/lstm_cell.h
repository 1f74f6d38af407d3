// lstm_cell.h: one time step of an LSTM cell, forward and backward, as one elementwise pass each.
//
// Forward, per batch row b and hidden unit j (gate k of a [N, 4H] row sits at column k * H + j,
// gates in the order i, f, g, o):
//   pre_k = xproj_t[k] + (hw[k] + bias[k])        (hw = h_prev W_hh^T)
//   i = sigmoid(pre_i), f = sigmoid(pre_f), g = tanh(pre_g), o = sigmoid(pre_o)
//   c = f c_prev + i g,  tc = tanh(c),  h = o tc
// Backward, from dh_out (the output sequence's gradient) and, except at the last step, the next
// step's recurrent gradient dstate_next = dgates_{t+1} W_hh and cell gradient dc_next = dc_{t+1} f:
//   dstate = dstate_next + dh_out;  dh = +0 + dstate;  dc_in = dc_next + 0   (last step: dh = dh_out,
//   dc_in = +0);  dc = dc_in + (dh o)(1 - tc^2)
//   d_o = (dh tc)(o (1 - o)),  d_i = (dc g)(i (1 - i)),  d_g = (dc i)(1 - g^2),
//   d_f = (dc c_prev)(f (1 - f)),  dc_prev = dc f
// Every step is one contract operation (bl::add, sub, mul, sigmoid, tanh) with a canonical NaN
// result, in exactly the order of the Tensor op chain it replaces (src/nn/recurrent.cpp), so the
// bits equal that chain's; the adds with +0 are kept because they turn -0 into +0. The functions
// below are the specification; every backend writes the same bits for any thread count or launch
// shape (each element is computed alone).
#pragma once

#include <cstdint>

#include "contract/arith.h"
#include "contract/math.h"
#include "kernels/launch.h"

namespace bl {

class ThreadPool;

// Operands of one forward step. Row b of a strided operand starts at ptr + b * stride.
struct LstmCellForward {
  int64_t n = 0, h = 0;          // batch rows, hidden size
  const float* x = nullptr;      // xproj_t rows [N, 4H] (input projection with b_ih)
  int64_t x_stride = 0;
  const float* hw = nullptr;     // h_prev W_hh^T [N, 4H], contiguous
  const float* bias = nullptr;   // b_hh [4H]
  const float* c_prev = nullptr; // [N, H], contiguous
  float* acts = nullptr;         // out [N, 4H]: i | f | g | o
  float* c = nullptr;            // out [N, H]
  float* tc = nullptr;           // out [N, H]: tanh(c)
  float* h_out = nullptr;        // out [N, H]
  float* seq = nullptr;          // optional second copy of h (the output sequence), or null
  int64_t seq_stride = 0;
};

// Operands of one backward step.
struct LstmCellBackward {
  int64_t n = 0, h = 0;
  const float* dh_out = nullptr;      // the output sequence's gradient at this step [N, H], strided
  int64_t dh_out_stride = 0;
  const float* dstate_next = nullptr; // [N, H] or null at the last step (then dc_next is null too)
  const float* dc_next = nullptr;     // [N, H] or null
  const float* acts = nullptr;        // saved i | f | g | o [N, 4H]
  const float* tc = nullptr;          // saved tanh(c) [N, H]
  const float* c_prev = nullptr;      // saved c_prev [N, H]
  float* dgates = nullptr;            // out [N, 4H]: d_i | d_f | d_g | d_o
  float* dx = nullptr;                // optional second copy of dgates (rows strided), or null
  int64_t dx_stride = 0;
  bool dx_add_zero = false;           // the copy in dx is dgates + 0 (the tape's zero-filled sum)
  float* dc_prev = nullptr;           // optional out [N, H]: dc f, or null
};

BL_HD float lstm_add(float a, float b) { return canonicalize(add(a, b)); }
BL_HD float lstm_sub(float a, float b) { return canonicalize(sub(a, b)); }
BL_HD float lstm_mul(float a, float b) { return canonicalize(mul(a, b)); }
BL_HD float lstm_sigmoid(float x) { return canonicalize(sigmoid(x)); }
BL_HD float lstm_tanh(float x) { return canonicalize(tanh(x)); }

// One gate's pre-activation: xproj_t + (hw + bias).
BL_HD float lstm_pre(float x, float hw, float bias) { return lstm_add(x, lstm_add(hw, bias)); }

// Forward element e = b * H + j of the [N, H] outputs.
BL_HD void lstm_cell_forward_one(const LstmCellForward& a, int64_t e) {
  const int64_t b = e / a.h, j = e % a.h, h = a.h;
  const float* x = a.x + b * a.x_stride + j;
  const float* hw = a.hw + b * 4 * h + j;
  const float* bias = a.bias + j;
  const float i = lstm_sigmoid(lstm_pre(x[0], hw[0], bias[0]));
  const float f = lstm_sigmoid(lstm_pre(x[h], hw[h], bias[h]));
  const float g = lstm_tanh(lstm_pre(x[2 * h], hw[2 * h], bias[2 * h]));
  const float o = lstm_sigmoid(lstm_pre(x[3 * h], hw[3 * h], bias[3 * h]));
  const float c = lstm_add(lstm_mul(f, a.c_prev[e]), lstm_mul(i, g));
  const float tc = lstm_tanh(c);
  const float hv = lstm_mul(o, tc);
  float* acts = a.acts + b * 4 * h + j;
  acts[0] = i;
  acts[h] = f;
  acts[2 * h] = g;
  acts[3 * h] = o;
  a.c[e] = c;
  a.tc[e] = tc;
  a.h_out[e] = hv;
  if (a.seq) a.seq[b * a.seq_stride + j] = hv;
}

// The backward values of one element (the gate gradients and dc f); has_next = an inner step,
// where dstate_next and dc_next are the next step's contributions (ignored at the last step).
struct LstmCellGrads {
  float d_i, d_f, d_g, d_o, dc_f;
};
BL_HD LstmCellGrads lstm_cell_grads(float i, float f, float g, float o, float tc, float c_prev, float d_out,
                                    bool has_next, float dstate_next, float dc_next) {
  const float dstate = has_next ? lstm_add(dstate_next, d_out) : d_out;
  const float dh = has_next ? lstm_add(0.0f, dstate) : dstate;
  const float dc_in = has_next ? lstm_add(dc_next, 0.0f) : 0.0f;
  const float dc_term = lstm_mul(lstm_mul(dh, o), lstm_sub(1.0f, lstm_mul(tc, tc)));
  const float dc = lstm_add(dc_in, dc_term);
  LstmCellGrads r;
  r.d_o = lstm_mul(lstm_mul(dh, tc), lstm_mul(o, lstm_sub(1.0f, o)));
  r.d_i = lstm_mul(lstm_mul(dc, g), lstm_mul(i, lstm_sub(1.0f, i)));
  r.d_g = lstm_mul(lstm_mul(dc, i), lstm_sub(1.0f, lstm_mul(g, g)));
  r.d_f = lstm_mul(lstm_mul(dc, c_prev), lstm_mul(f, lstm_sub(1.0f, f)));
  r.dc_f = lstm_mul(dc, f);
  return r;
}

// Backward element e = b * H + j.
BL_HD void lstm_cell_backward_one(const LstmCellBackward& a, int64_t e) {
  const int64_t b = e / a.h, j = e % a.h, h = a.h;
  const float* acts = a.acts + b * 4 * h + j;
  const bool has_next = a.dc_next != nullptr;
  const LstmCellGrads r = lstm_cell_grads(acts[0], acts[h], acts[2 * h], acts[3 * h], a.tc[e], a.c_prev[e],
                                          a.dh_out[b * a.dh_out_stride + j], has_next,
                                          has_next ? a.dstate_next[e] : 0.0f, has_next ? a.dc_next[e] : 0.0f);
  const float d_i = r.d_i, d_f = r.d_f, d_g = r.d_g, d_o = r.d_o;
  float* dg = a.dgates + b * 4 * h + j;
  dg[0] = d_i;
  dg[h] = d_f;
  dg[2 * h] = d_g;
  dg[3 * h] = d_o;
  if (a.dx) {
    float* dx = a.dx + b * a.dx_stride + j;
    dx[0] = a.dx_add_zero ? lstm_add(d_i, 0.0f) : d_i;
    dx[h] = a.dx_add_zero ? lstm_add(d_f, 0.0f) : d_f;
    dx[2 * h] = a.dx_add_zero ? lstm_add(d_g, 0.0f) : d_g;
    dx[3 * h] = a.dx_add_zero ? lstm_add(d_o, 0.0f) : d_o;
  }
  if (a.dc_prev) a.dc_prev[e] = r.dc_f;
}

// REFERENCES: every element in ascending order.
inline void lstm_cell_forward_reference(const LstmCellForward& a) {
  for (int64_t e = 0; e < a.n * a.h; ++e) lstm_cell_forward_one(a, e);
}
inline void lstm_cell_backward_reference(const LstmCellBackward& a) {
  for (int64_t e = 0; e < a.n * a.h; ++e) lstm_cell_backward_one(a, e);
}

// Throw bl::Error unless the extents are >= 0, the strides cover a row, the required pointers
// are set (when there is work) and dstate_next and dc_next are both set or both null.
void lstm_cell_forward_check(const LstmCellForward& a);
void lstm_cell_backward_check(const LstmCellBackward& a);

// CPU: batch rows cut into tasks by the shape alone; the same bits as the references.
void lstm_cell_forward_cpu(const LstmCellForward& a, ThreadPool& pool);
void lstm_cell_backward_cpu(const LstmCellBackward& a, ThreadPool& pool);

// CUDA: device pointers, one thread per element (grid-stride); in order on the default stream.
void lstm_cell_forward_cuda(const LstmCellForward& a, const LaunchConfig& config = LaunchConfig());
void lstm_cell_backward_cuda(const LstmCellBackward& a, const LaunchConfig& config = LaunchConfig());

}  // namespace bl
