// recurrent.cpp: RNN (tanh), LSTM and GRU layers, multi-layer and bidirectional.
#include "bitlearn/nn/recurrent.h"

#include <string>

#include "bitlearn/nn/init.h"
#include "contract/arith.h"
#include "core/error.h"

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

// The saved values of one LSTM step for the backward sweep.
struct LstmStep {
  Tensor h_prev, c_prev, i, f, g, o, tc;
};

// A whole LSTM direction as one tape node: xproj [N, T, 4H] (input projections with b_ih), the
// recurrent weight [4H, H] and bias [4H] -> the hidden states [N, T, H]. Step by step the forward
// runs gates = xproj_t + (h W_hh^T + b_hh), the cell's gate functions and
// c = f c_prev + i g, h = o tanh(c).
//
// The backward sweep is the reverse-mode rule of exactly that per-step graph (slices, matmul, adds
// and the cell), op for op and in the order the tape would run it, so every gradient bit is what
// the step-by-step graph gives: where the tape would add a contribution to a zero-filled slice
// gradient, the same add with +0 is kept (it turns -0 into +0), and the recurrent weight and bias
// receive one contribution per step in the tape's order (the node lists them once per step, last
// step first). What it saves is the per-step tape: the zero-filled [N, T, 4H] gradient of every
// step's slice of xproj and their T full-size sums, and nine nodes per step.
ag::Var lstm_sequence(const ag::Var& xproj, const ag::Var& w_hh, const ag::Var& b_hh, int64_t steps,
                      bool reverse, int64_t h) {
  const Tensor xp = xproj.value();
  const Tensor w = w_hh.value();
  const Tensor b = b_hh.value();
  const int64_t n = xp.dim(0), g4 = xp.dim(2);
  const Device dev = xp.device();
  const bool record_steps = ag::grad_enabled() &&
                            (xproj.requires_grad() || w_hh.requires_grad() || b_hh.requires_grad());
  auto saved = std::make_shared<std::vector<LstmStep>>();
  if (record_steps) saved->reserve(static_cast<size_t>(steps));
  Tensor state = Tensor::zeros({n, h}, DType::f32, dev);
  Tensor cstate = state;
  std::vector<Tensor> outputs(static_cast<size_t>(steps));
  for (int64_t k = 0; k < steps; ++k) {
    int64_t t = reverse ? steps - 1 - k : k;
    Tensor xt = xp.slice(1, t, t + 1).reshape({n, g4});
    Tensor gates = bl::add(xt, bl::add(bl::matmul(state, w, false, true), b));
    Tensor i = bl::sigmoid(gates.slice(1, 0, h));
    Tensor f = bl::sigmoid(gates.slice(1, h, 2 * h));
    Tensor g = bl::tanh(gates.slice(1, 2 * h, 3 * h));
    Tensor o = bl::sigmoid(gates.slice(1, 3 * h, 4 * h));
    Tensor c = bl::add(bl::mul(f, cstate), bl::mul(i, g));
    Tensor tc = bl::tanh(c);
    Tensor hv = bl::mul(o, tc);
    if (record_steps) saved->push_back(LstmStep{state, cstate, i, f, g, o, tc});
    state = hv;
    cstate = c;
    outputs[static_cast<size_t>(t)] = hv.reshape({n, 1, h});
  }
  Tensor seq = bl::concat(outputs, 1);
  // Inputs: xproj, then (b_hh, w_hh) once per step, last step first: the order in which the
  // step-by-step tape adds their contributions.
  std::vector<ag::Var> inputs{xproj};
  for (int64_t k = 0; k < steps; ++k) {
    inputs.push_back(b_hh);
    inputs.push_back(w_hh);
  }
  const bool need_x = xproj.requires_grad(), need_w = w_hh.requires_grad(), need_b = b_hh.requires_grad();
  return ag::record("lstm_sequence", seq, std::move(inputs), [=](const Tensor& dseq) {
    std::vector<Tensor> r(static_cast<size_t>(1 + 2 * steps));
    const Tensor one = Tensor::scalar(1.0, DType::f32, dev);
    const Tensor zero = Tensor::scalar(0.0, DType::f32, dev);
    Tensor dx;
    if (need_x) dx = Tensor::empty({n, steps, g4}, DType::f32, dev);
    Tensor dstate_next, dc_next;  // contributions from step k + 1 (matmul input, cell input)
    for (int64_t k = steps - 1; k >= 0; --k) {
      const LstmStep& sv = (*saved)[static_cast<size_t>(k)];
      int64_t t = reverse ? steps - 1 - k : k;
      Tensor d_out = dseq.slice(1, t, t + 1).contiguous().reshape({n, h});
      Tensor dstate = dstate_next.defined() ? bl::add(dstate_next, d_out) : d_out;
      // The cell's output gradient [dh | dc]: the sum of the zero-filled halves, as the tape adds them.
      Tensor dh = dc_next.defined() ? bl::add(zero, dstate) : dstate;
      Tensor dc_in = dc_next.defined() ? bl::add(dc_next, zero) : Tensor();
      Tensor dc_term = bl::mul(bl::mul(dh, sv.o), bl::sub(one, bl::square(sv.tc)));
      Tensor dc = bl::add(dc_in.defined() ? dc_in : zero, dc_term);
      Tensor d_o = bl::mul(bl::mul(dh, sv.tc), bl::mul(sv.o, bl::sub(one, sv.o)));
      Tensor d_i = bl::mul(bl::mul(dc, sv.g), bl::mul(sv.i, bl::sub(one, sv.i)));
      Tensor d_g = bl::mul(bl::mul(dc, sv.i), bl::sub(one, bl::square(sv.g)));
      Tensor d_f = bl::mul(bl::mul(dc, sv.c_prev), bl::mul(sv.f, bl::sub(one, sv.f)));
      Tensor dgates = bl::concat({d_i, d_f, d_g, d_o}, 1);
      dc_next = k >= 1 ? bl::mul(dc, sv.f) : Tensor();
      size_t slot = static_cast<size_t>(1 + 2 * (steps - 1 - k));
      if (need_b) r[slot] = bl::sum(dgates, {0}, true).reshape({g4});
      dstate_next = k >= 1 ? bl::matmul(dgates, w) : Tensor();
      if (need_w) r[slot + 1] = bl::matmul(dgates, sv.h_prev, true, false);
      if (need_x) {
        Tensor part = dx.slice(1, t, t + 1);
        copy_into(part, dgates.reshape({n, 1, g4}));
      }
    }
    // Each step's slice gradient was zero-filled to [N, T, 4H] and summed: with two or more steps
    // every element went through an add with +0.
    if (need_x) r[0] = steps >= 2 ? bl::add(dx, zero) : dx;
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
