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

Tensor one_like(const Tensor& x) { return Tensor::scalar(1.0, DType::f32, x.device()); }

// One LSTM step as a single tape node: gates [N, 4H] (i, f, g, o pre-activations) and the cell
// c_prev [N, H] -> [h, c] as [N, 2H]. The backward rule is the closed form of the cell's
// derivatives, each a fixed sequence of elementwise ops.
ag::Var lstm_cell(const ag::Var& gates, const ag::Var& c_prev, int64_t h) {
  const Tensor& gv = gates.value();
  Tensor cp = c_prev.value();
  Tensor i = bl::sigmoid(gv.slice(1, 0, h));
  Tensor f = bl::sigmoid(gv.slice(1, h, 2 * h));
  Tensor g = bl::tanh(gv.slice(1, 2 * h, 3 * h));
  Tensor o = bl::sigmoid(gv.slice(1, 3 * h, 4 * h));
  Tensor c = bl::add(bl::mul(f, cp), bl::mul(i, g));
  Tensor tc = bl::tanh(c);
  Tensor hv = bl::mul(o, tc);
  bool need_c = c_prev.requires_grad();
  return ag::record("lstm_cell", bl::concat({hv, c}, 1), {gates, c_prev},
                    [=](const Tensor& d) {
                      Tensor one = one_like(d);
                      Tensor dh = d.slice(1, 0, h);
                      Tensor dc = bl::add(d.slice(1, h, 2 * h),
                                          bl::mul(bl::mul(dh, o), bl::sub(one, bl::square(tc))));
                      Tensor d_o = bl::mul(bl::mul(dh, tc), bl::mul(o, bl::sub(one, o)));
                      Tensor d_i = bl::mul(bl::mul(dc, g), bl::mul(i, bl::sub(one, i)));
                      Tensor d_g = bl::mul(bl::mul(dc, i), bl::sub(one, bl::square(g)));
                      Tensor d_f = bl::mul(bl::mul(dc, cp), bl::mul(f, bl::sub(one, f)));
                      std::vector<Tensor> r(2);
                      r[0] = bl::concat({d_i, d_f, d_g, d_o}, 1);
                      if (need_c) r[1] = bl::mul(dc, f);
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
  ag::Var state(Tensor::zeros({n, h}, DType::f32, xproj.device()), false);
  ag::Var cstate = state;
  std::vector<ag::Var> outputs(static_cast<size_t>(steps));
  for (int64_t k = 0; k < steps; ++k) {
    int64_t t = reverse ? steps - 1 - k : k;
    ag::Var xt = ag::reshape(ag::slice(xproj, 1, t, t + 1), {n, xproj.dim(2)});
    ag::Var hp = ag::add(ag::matmul(state, cell.w_hh, false, true), cell.b_hh);
    if (kind == RecurrentKind::rnn_tanh) {
      state = ag::tanh(ag::add(xt, hp));
    } else if (kind == RecurrentKind::lstm) {
      ag::Var hc = lstm_cell(ag::add(xt, hp), cstate, h);
      state = ag::slice(hc, 1, 0, h);
      cstate = ag::slice(hc, 1, h, 2 * h);
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
