// The LSTM runs each direction as one tape node (lstm_sequence in src/nn/recurrent.cpp). These
// tests rebuild the step-by-step graph (a slice of the input projections, matmul and adds, one
// cell node per step) from autograd ops and demand the same bits for the output, the input
// gradient and every parameter gradient: one and two layers, bidirectional, 1, 2 and 5 steps,
// signed zeros in the upstream gradient, and gradients accumulated over two backward passes.
// (Inside the node, the sign of a zero in the projections' gradient cannot reach any result: it
// only feeds GEMMs and sums, which start from +0. The node keeps the tape's adds with +0 anyway.)
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "bitlearn/nn.h"
#include "contract/rng.h"

namespace bl::nn {
namespace {

// The LSTM cell as a tape node with its closed-form backward (gates [N, 4H], c_prev [N, H] ->
// [h, c] as [N, 2H]).
ag::Var cell_node(const ag::Var& gates, const ag::Var& c_prev, int64_t h) {
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
  return ag::record("cell", bl::concat({hv, c}, 1), {gates, c_prev}, [=](const Tensor& d) {
    Tensor one = Tensor::scalar(1.0, DType::f32, d.device());
    Tensor dh = d.slice(1, 0, h);
    Tensor dc = bl::add(d.slice(1, h, 2 * h), bl::mul(bl::mul(dh, o), bl::sub(one, bl::square(tc))));
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

ag::Var step_by_step_direction(const ag::Var& xproj, const ag::Var& w_hh, const ag::Var& b_hh, bool reverse,
                               int64_t h) {
  const int64_t n = xproj.dim(0), steps = xproj.dim(1);
  ag::Var state(Tensor::zeros({n, h}), false);
  ag::Var cstate = state;
  std::vector<ag::Var> outputs(static_cast<size_t>(steps));
  for (int64_t k = 0; k < steps; ++k) {
    int64_t t = reverse ? steps - 1 - k : k;
    ag::Var xt = ag::reshape(ag::slice(xproj, 1, t, t + 1), {n, xproj.dim(2)});
    ag::Var hp = ag::add(ag::matmul(state, w_hh, false, true), b_hh);
    ag::Var hc = cell_node(ag::add(xt, hp), cstate, h);
    state = ag::slice(hc, 1, 0, h);
    cstate = ag::slice(hc, 1, h, 2 * h);
    outputs[static_cast<size_t>(t)] = ag::reshape(state, {n, 1, h});
  }
  return ag::concat(outputs, 1);
}

// The step-by-step graph of the whole LSTM with the parameters of `lstm`.
ag::Var step_by_step(LSTM& lstm, const ag::Var& x) {
  std::map<std::string, ag::Var> p;
  for (auto& [name, v] : lstm.named_parameters()) p[name] = v;
  const int64_t n = x.dim(0), steps = x.dim(1);
  ag::Var seq = x;
  for (int64_t l = 0; l < lstm.num_layers; ++l) {
    std::vector<ag::Var> outs;
    ag::Var flat = ag::reshape(seq, {n * steps, seq.dim(2)});
    for (int d = 0; d < (lstm.bidirectional ? 2 : 1); ++d) {
      std::string sfx = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      ag::Var xproj = ag::add(ag::matmul(flat, p["weight_ih" + sfx], false, true), p["bias_ih" + sfx]);
      xproj = ag::reshape(xproj, {n, steps, xproj.dim(1)});
      outs.push_back(step_by_step_direction(xproj, p["weight_hh" + sfx], p["bias_hh" + sfx], d == 1,
                                            lstm.hidden_size));
    }
    seq = outs.size() == 1 ? outs[0] : ag::concat(outs, 2);
  }
  return seq;
}

// Loss weights with exact zeros of both signs, so -0 gradients reach the sequence.
Tensor loss_weights(const Shape& shape, bool last_step_only) {
  Tensor w = Tensor::empty(shape);
  float* p = w.data<float>();
  const int64_t steps = shape[1], width = shape[2];
  for (int64_t i = 0; i < w.numel(); ++i) {
    float u = uniform_element(99, 3, static_cast<uint64_t>(i));
    p[i] = u < 0.15f ? -0.0f : (u < 0.3f ? 0.0f : u - 0.6f);
    if (last_step_only && (i / width) % steps != steps - 1) p[i] = 0.0f;
  }
  return w;
}

std::string bits(const Tensor& t) { return t.defined() ? t.digest() : "undefined"; }

struct Outcome {
  std::string y, dx;
  std::map<std::string, std::string> grads;
};

Outcome run(bool fused, int64_t layers, bool bidir, int64_t steps, bool last_only, int passes) {
  InitStream init(21);
  LSTM lstm(3, 5, init, layers, bidir);
  Tensor xv = Tensor::empty({4, steps, 3});
  for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = uniform_element(7, 1, static_cast<uint64_t>(i)) * 2 - 1;
  ag::Var x(xv, true);
  Outcome out;
  for (int pass = 0; pass < passes; ++pass) {
    ag::Var y = fused ? lstm.forward(x) : step_by_step(lstm, x);
    ag::Var loss = ag::sum(ag::mul_constant(y, loss_weights(y.shape(), last_only)));
    ag::backward(loss);
    out.y = bits(y.value());
  }
  out.dx = bits(x.grad());
  for (auto& [name, v] : lstm.named_parameters()) out.grads[name] = bits(v.grad());
  return out;
}

TEST(LstmSequence, SameBitsAsTheStepByStepGraph) {
  struct Case { int64_t layers; bool bidir; int64_t steps; bool last_only; int passes; };
  for (Case c : {Case{1, false, 1, false, 1}, Case{1, false, 2, false, 1}, Case{1, false, 5, true, 1},
                 Case{2, false, 5, false, 1}, Case{1, true, 3, false, 1}, Case{2, true, 5, true, 1},
                 Case{1, false, 4, false, 2}, Case{2, true, 3, false, 2}}) {
    std::string ctx = "layers " + std::to_string(c.layers) + (c.bidir ? " bidirectional" : "") + ", steps " +
                      std::to_string(c.steps) + (c.last_only ? ", last step only" : "") + ", passes " +
                      std::to_string(c.passes);
    Outcome want = run(false, c.layers, c.bidir, c.steps, c.last_only, c.passes);
    Outcome got = run(true, c.layers, c.bidir, c.steps, c.last_only, c.passes);
    EXPECT_EQ(want.y, got.y) << ctx;
    EXPECT_EQ(want.dx, got.dx) << ctx;
    ASSERT_EQ(want.grads.size(), got.grads.size());
    for (auto& [name, d] : want.grads) EXPECT_EQ(d, got.grads[name]) << ctx << ": " << name;
  }
}

// Sabotage arm: the comparison sees a change of the gradient order (a different loss weighting).
TEST(LstmSequence, SabotageDifferentLossIsSeen) {
  Outcome a = run(true, 1, false, 4, false, 1);
  Outcome b = run(true, 1, false, 4, true, 1);
  EXPECT_NE(a.grads["weight_hh_l0"], b.grads["weight_hh_l0"]);
}

}  // namespace
}  // namespace bl::nn
