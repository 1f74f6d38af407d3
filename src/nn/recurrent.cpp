// recurrent.cpp: RNN (tanh), LSTM and GRU layers, multi-layer and bidirectional.
#include "bitlearn/nn/recurrent.h"

#include <string>

#include "bitlearn/nn/init.h"
#include "contract/arith.h"
#include "core/allocator.h"
#include "core/error.h"
#include "kernels/lstm_cell.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl::nn {

namespace {

int64_t gate_count(RecurrentKind kind) {
  switch (kind) {
    case RecurrentKind::lstm: return 4;
    case RecurrentKind::gru: return 3;
    default: return 1;
  }
}

const char* kind_name(RecurrentKind kind) {
  switch (kind) {
    case RecurrentKind::lstm: return "LSTM";
    case RecurrentKind::gru: return "GRU";
    default: return "RNN";
  }
}

const float* cptr(const Tensor& t) { return static_cast<const float*>(t.raw_data()); }
float* mptr(Tensor& t) { return static_cast<float*>(t.raw_data()); }

// One LSTM cell step (kernels/lstm_cell.h) on the device of `on`.
void run_cell_forward(const LstmCellForward& a, const Tensor& on) {
  dispatch::lstm_cell_forward(on.device(), a);
}

void run_cell_backward(const LstmCellBackward& a, const Tensor& on) {
  dispatch::lstm_cell_backward(on.device(), a);
}

// Row k of a contiguous [T, N, W] buffer as a contiguous [N, W] view.
Tensor step_view(const Tensor& all, int64_t k) {
  return all.slice(0, k, k + 1).reshape({all.dim(1), all.dim(2)});
}

// A whole LSTM direction as one tape node: xproj [N, T, 4H] (input projections with b_ih), the
// recurrent weight [4H, H] and bias [4H] -> the hidden states [N, T, H]. Step by step the forward
// runs gates = xproj_t + (h W_hh^T + b_hh), the cell's gate functions and
// c = f c_prev + i g, h = o tanh(c): one matmul and one fused cell kernel (kernels/lstm_cell.h),
// which also writes h into the output sequence.
//
// The backward sweep is the reverse-mode rule of exactly that per-step graph (slices, matmul, adds
// and the cell), op for op and in the order the tape would run it, so every gradient bit is what
// the step-by-step graph gives: where the tape would add a contribution to a zero-filled slice
// gradient, the same add with +0 is kept (it turns -0 into +0), and the recurrent weight and bias
// receive one contribution per step in the tape's order (the node lists them once per step, last
// step first). The cell's part of each step is one fused kernel, which also writes the step's
// slice of the xproj gradient (with the +0 of the tape's sum of the T zero-filled slice gradients
// when there are two or more steps); then the bias sum and the state gradient's matmul. The
// recurrent weight's per-step products wait for the end of the sweep (see below).
ag::Var lstm_sequence(const ag::Var& xproj, const ag::Var& w_hh, const ag::Var& b_hh, int64_t steps,
                      bool reverse, int64_t h) {
  const Tensor xp = xproj.value().contiguous();
  const Tensor w = w_hh.value();
  const Tensor b = b_hh.value().contiguous();
  const int64_t n = xp.dim(0), g4 = xp.dim(2);
  const Device dev = xp.device();
  const bool record_steps = ag::grad_enabled() &&
                            (xproj.requires_grad() || w_hh.requires_grad() || b_hh.requires_grad());
  // Per step: the gate activations, c, tanh(c) and h ([T, N, *], step k at row k).
  const int64_t kept = record_steps ? steps : 1;
  Tensor acts_all = Tensor::empty({kept, n, g4}, DType::f32, dev);
  Tensor tc_all = Tensor::empty({kept, n, h}, DType::f32, dev);
  Tensor c_all = Tensor::empty({steps, n, h}, DType::f32, dev);
  Tensor h_all = Tensor::empty({steps, n, h}, DType::f32, dev);
  Tensor seq = Tensor::empty({n, steps, h}, DType::f32, dev);
  const Tensor zeros = Tensor::zeros({n, h}, DType::f32, dev);
  Tensor state = zeros;
  Tensor cstate = zeros;
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t t = reverse ? steps - 1 - k : k;
    Tensor hw = bl::matmul(state, w, false, true).contiguous();
    Tensor acts = step_view(acts_all, record_steps ? k : 0);
    Tensor tc = step_view(tc_all, record_steps ? k : 0);
    Tensor c = step_view(c_all, k);
    Tensor hv = step_view(h_all, k);
    LstmCellForward a;
    a.n = n;
    a.h = h;
    a.x = cptr(xp) + t * g4;
    a.x_stride = steps * g4;
    a.hw = cptr(hw);
    a.bias = cptr(b);
    a.c_prev = cptr(cstate);
    a.acts = mptr(acts);
    a.c = mptr(c);
    a.tc = mptr(tc);
    a.h_out = mptr(hv);
    a.seq = mptr(seq) + t * h;
    a.seq_stride = steps * h;
    run_cell_forward(a, xp);
    state = hv;
    cstate = c;
  }
  // Inputs: xproj, then (b_hh, w_hh) once per step, last step first: the order in which the
  // step-by-step tape adds their contributions.
  std::vector<ag::Var> inputs{xproj};
  for (int64_t k = 0; k < steps; ++k) {
    inputs.push_back(b_hh);
    inputs.push_back(w_hh);
  }
  const bool need_x = xproj.requires_grad(), need_w = w_hh.requires_grad(), need_b = b_hh.requires_grad();
  return ag::record("lstm_sequence", seq, std::move(inputs), [=](const Tensor& dseq_in) {
    std::vector<Tensor> r(static_cast<size_t>(1 + 2 * steps));
    const Tensor dseq = dseq_in.contiguous();
    Tensor dx;
    if (need_x) dx = Tensor::empty({n, steps, g4}, DType::f32, dev);
    Tensor dstate_next, dc_next;  // contributions from step k + 1 (matmul input, cell input)
    // Every step's gate gradient is kept ([T, N, 4H], step k at row k): the recurrent weight's
    // per-step products dgates_k^T h_{k-1} do not feed the recurrence, so they run after the sweep
    // as one batched product (one GEMM call with T - 1 entries instead of T - 1 small calls, each
    // entry the same contract sums as matmul's). Two alternating dc buffers serve every step: each
    // step's readers (the next cell kernel) run before the buffer is written again, in program
    // order on the CPU and in stream order on CUDA.
    Tensor dgates_all = Tensor::empty({steps, n, g4}, DType::f32, dev);
    Tensor dc_bufs[2];
    if (steps >= 2) {
      dc_bufs[0] = Tensor::empty({n, h}, DType::f32, dev);
      dc_bufs[1] = Tensor::empty({n, h}, DType::f32, dev);
    }
    for (int64_t k = steps - 1; k >= 0; --k) {
      const int64_t t = reverse ? steps - 1 - k : k;
      const Tensor c_prev = k >= 1 ? step_view(c_all, k - 1) : zeros;
      const Tensor acts = step_view(acts_all, k);
      const Tensor tc = step_view(tc_all, k);
      Tensor dgates = step_view(dgates_all, k);
      Tensor dc_prev;
      if (k >= 1) dc_prev = dc_bufs[k % 2];
      LstmCellBackward a;
      a.n = n;
      a.h = h;
      a.dh_out = cptr(dseq) + t * h;
      a.dh_out_stride = steps * h;
      a.dstate_next = dstate_next.defined() ? cptr(dstate_next) : nullptr;
      a.dc_next = dc_next.defined() ? cptr(dc_next) : nullptr;
      a.acts = cptr(acts);
      a.tc = cptr(tc);
      a.c_prev = cptr(c_prev);
      a.dgates = mptr(dgates);
      if (need_x) {
        a.dx = mptr(dx) + t * g4;
        a.dx_stride = steps * g4;
        a.dx_add_zero = steps >= 2;
      }
      a.dc_prev = k >= 1 ? mptr(dc_prev) : nullptr;
      run_cell_backward(a, dgates);
      dc_next = dc_prev;
      size_t slot = static_cast<size_t>(1 + 2 * (steps - 1 - k));
      if (need_b) r[slot] = bl::sum(dgates, {0}, true).reshape({g4});
      dstate_next = k >= 1 ? bl::matmul(dgates, w).contiguous() : Tensor();
      if (need_w && k == 0) r[slot + 1] = bl::matmul(dgates, zeros, true, false);
    }
    if (need_w && steps >= 2) {
      // Entry j = step j + 1: dgates_{j+1}^T h_j. Step k's contribution goes to its tape slot.
      const Tensor dw = bl::bmm(dgates_all.slice(0, 1, steps), h_all.slice(0, 0, steps - 1), true, false);
      for (int64_t k = 1; k < steps; ++k) r[static_cast<size_t>(2 + 2 * (steps - 1 - k))] = step_view(dw, k - 1);
    }
    if (need_x) r[0] = dx;
    return r;
  });
}

}  // namespace

Recurrent::Recurrent(RecurrentKind k, int64_t in, int64_t hidden, int64_t layers, bool bidir,
                     InitStream& init)
    : kind(k), input_size(in), hidden_size(hidden), num_layers(layers), bidirectional(bidir) {
  BL_CHECK(in > 0 && hidden > 0 && layers >= 1, kind_name(k),
           ": input_size, hidden_size and num_layers must be >= 1");
  int64_t g = gate_count(k) * hidden;
  float bound = bl::div(1.0f, bl::sqrt(static_cast<float>(hidden)));
  int dirs = bidir ? 2 : 1;
  for (int64_t l = 0; l < layers; ++l) {
    int64_t layer_in = l == 0 ? in : hidden * dirs;
    for (int d = 0; d < dirs; ++d) {
      std::string suffix = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      auto draw = [&](const Shape& s) {
        return init::uniform(s, bl::neg(bound), bound, init.seed, init.take());
      };
      Cell c;
      c.w_ih = register_parameter("weight_ih" + suffix, draw({g, layer_in}));
      c.w_hh = register_parameter("weight_hh" + suffix, draw({g, hidden}));
      c.b_ih = register_parameter("bias_ih" + suffix, draw({g}));
      c.b_hh = register_parameter("bias_hh" + suffix, draw({g}));
      cells_.push_back(c);
    }
  }
}

ag::Var Recurrent::run_direction(const Cell& cell, const ag::Var& xproj, int64_t steps, bool reverse) {
  const int64_t n = xproj.dim(0), h = hidden_size;
  if (kind == RecurrentKind::lstm) return lstm_sequence(xproj, cell.w_hh, cell.b_hh, steps, reverse, h);
  ag::Var state(Tensor::zeros({n, h}, DType::f32, xproj.device()), false);
  std::vector<ag::Var> outputs(static_cast<size_t>(steps));
  for (int64_t k = 0; k < steps; ++k) {
    int64_t t = reverse ? steps - 1 - k : k;
    ag::Var xt = ag::reshape(ag::slice(xproj, 1, t, t + 1), {n, xproj.dim(2)});
    ag::Var hp = ag::add(ag::matmul(state, cell.w_hh, false, true), cell.b_hh);
    if (kind == RecurrentKind::rnn_tanh) {
      state = ag::tanh(ag::add(xt, hp));
    } else {
      ag::Var r = ag::sigmoid(ag::add(ag::slice(xt, 1, 0, h), ag::slice(hp, 1, 0, h)));
      ag::Var z = ag::sigmoid(ag::add(ag::slice(xt, 1, h, 2 * h), ag::slice(hp, 1, h, 2 * h)));
      ag::Var cand = ag::tanh(ag::add(ag::slice(xt, 1, 2 * h, 3 * h), ag::mul(r, ag::slice(hp, 1, 2 * h, 3 * h))));
      // h' = (1 - z) n + z h = n + z (h - n).
      state = ag::add(cand, ag::mul(z, ag::sub(state, cand)));
    }
    outputs[static_cast<size_t>(t)] = ag::reshape(state, {n, 1, h});
  }
  return ag::concat(outputs, 1);
}

ag::Var Recurrent::forward(const ag::Var& x) {
  BL_CHECK(x.value().ndim() == 3 && x.dim(2) == input_size, kind_name(kind), ": input ",
           x.value().str(), " must be [N, T, ", input_size, "]");
  const int64_t n = x.dim(0), steps = x.dim(1);
  BL_CHECK(steps >= 1, kind_name(kind), ": the sequence is empty");
  int dirs = bidirectional ? 2 : 1;
  ag::Var seq = x;
  for (int64_t l = 0; l < num_layers; ++l) {
    std::vector<ag::Var> outs;
    int64_t width = seq.dim(2);
    ag::Var flat = ag::reshape(seq, {n * steps, width});
    for (int d = 0; d < dirs; ++d) {
      const Cell& cell = cells_[static_cast<size_t>(l * dirs + d)];
      ag::Var xproj = ag::add(ag::matmul(flat, cell.w_ih, false, true), cell.b_ih);
      xproj = ag::reshape(xproj, {n, steps, xproj.dim(1)});
      outs.push_back(run_direction(cell, xproj, steps, d == 1));
    }
    seq = dirs == 1 ? outs[0] : ag::concat(outs, 2);
  }
  return seq;
}

}  // namespace bl::nn
