// cases_train.h: the fused training-pass ops (kernels/norm_backward.h, kernels/train_maps.h):
// rows with special values (NaN, +-inf, +-0, subnormals), rows past one sum-schedule leaf, odd and
// empty shapes. Each op's equality with the composed Tensor ops it replaces is tested in
// tests/lm/test_train_ops.cpp.
#pragma once

#include <string>
#include <vector>

#include "bitlearn/ops_train.h"
#include "conformance/case_util.h"
#include "kernels/norm_backward.h"
#include "kernels/train_maps.h"

namespace bl::conformance {

inline std::vector<OpCase> norm_backward_cases() {
  struct Problem {
    int64_t rows, n;
    bool layer_norm;
  };
  const Problem problems[] = {{1, 1, true},    {3, 7, false},    {5, 33, true},   {4, 768, false}, {4, 768, true},
                              {2, 4100, true}, {2, 4100, false}, {0, 5, true},    {3, 0, false},   {17, 96, false}};
  std::vector<OpCase> out;
  uint64_t seed = 900;
  for (const Problem& pr : problems) {
    seed += 3;
    const float eps = 1e-5f;
    const Shape shape = {pr.rows, pr.n};
    NormBackwardArgs a;
    a.rows = pr.n == 0 ? 0 : pr.rows;
    a.n = pr.n;
    a.eps = eps;
    a.layer_norm = pr.layer_norm;
    OpCase c;
    c.op = "norm_backward";
    c.label = std::to_string(pr.rows) + "x" + std::to_string(pr.n) + (pr.layer_norm ? " layer" : " rms");
    const bool long_rows = pr.n >= 96;
    c.inputs = [shape, seed, long_rows, n = pr.n] {
      // Short rows: the full special-value mix. Long rows: plain values with a special value in a
      // few rows, so that most row sums stay finite and their order shows.
      if (!long_rows)
        return Tensors{special_floats(shape, seed), special_floats(shape, seed + 1), special_floats({n}, seed + 2)};
      return Tensors{plain_floats(shape, seed, 3.0f, 5003), plain_floats(shape, seed + 1, 1.0f),
                     plain_floats({n}, seed + 2, 2.0f)};
    };
    auto reference = [a, shape](const Tensors& in, bool sabotaged) {
      std::vector<float> x = floats_of(in[0]), g = floats_of(in[1]), w = floats_of(in[2]);
      std::vector<float> dx(x.size()), gx(x.size());
      norm_backward_reference(a, x.data(), g.data(), w.data(), dx.data(), gx.data());
      if (sabotaged) {
        // Sabotage: mean(d * xhat) summed left to right instead of on the sum schedule.
        for (int64_t r = 0; r < a.rows; ++r) {
          // Recompute the row with a sequential sum of d * xhat.
          const float* xr = x.data() + r * a.n;
          const float* gr = g.data() + r * a.n;
          float mu = 0.0f;
          if (a.layer_norm) mu = finish_mean(sequential_sum(xr, a.n), a.n);
          std::vector<float> c(static_cast<size_t>(a.n)), sq(c.size()), xh(c.size()), d(c.size()), p(c.size());
          for (int64_t i = 0; i < a.n; ++i) {
            c[i] = a.layer_norm ? canonicalize(sub(xr[i], mu)) : xr[i];
            sq[i] = canonicalize(mul(c[i], c[i]));
          }
          const float rs = norm_backward_rstd(finish_mean(reference_reduce_one<StepAdd>(sq.data(), a.n, 1, 0.0f), a.n), a.eps);
          for (int64_t i = 0; i < a.n; ++i) {
            xh[i] = canonicalize(mul(c[i], rs));
            d[i] = canonicalize(mul(gr[i], w[i]));
            p[i] = canonicalize(mul(d[i], xh[i]));
          }
          const float mp = finish_mean(sequential_sum(p.data(), a.n), a.n);
          const float md = a.layer_norm ? finish_mean(reference_reduce_one<StepAdd>(d.data(), a.n, 1, 0.0f), a.n) : 0.0f;
          for (int64_t i = 0; i < a.n; ++i) dx[r * a.n + i] = norm_backward_dx(d[i], xh[i], rs, mp, md, a.layer_norm);
        }
      }
      return Tensors{f32_tensor(dx, shape), f32_tensor(gx, shape)};
    };
    c.reference = [reference](const Tensors& in) { return reference(in, false); };
    c.run = [layer = pr.layer_norm, eps](const Tensors& in) {
      auto [dx, gx] = norm_backward(in[0], in[1], in[2], eps, layer);
      return Tensors{dx, gx};
    };
    if (pr.n == 4100 || pr.n == 768) {
      c.sabotage_what = "mean(d * xhat) summed left to right";
      c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
    }
    out.push_back(c);
  }
  return out;
}

// The sabotage of the maps: what a kernel that lets the compiler contract or regroup would give.
// swiglu: silu(a) as a * sigmoid(a); swiglu_backward: 1 + a (1 - s) as one fma; gelu_tanh_backward:
// left + right as one fma.
inline float contracted_first_output(TrainMap op, float a, float b, float dy) {
  if (op == TrainMap::swiglu_forward) return canonicalize(mul(canonicalize(mul(a, sigmoid(a))), b));
  if (op == TrainMap::swiglu_backward) {
    const float s = sigmoid(a);
    return canonicalize(mul(canonicalize(mul(dy, b)), canonicalize(mul(s, fma(a, sub(1.0f, s), 1.0f)))));
  }
  const float k = 0.7978845608028654f, q = 0.044715f, three_q = static_cast<float>(3 * 0.044715);
  const float x2 = mul(a, a), t = tanh(mul(k, add(a, mul(q, mul(x2, a)))));
  const float left = mul(0.5f, add(1.0f, t));
  return canonicalize(mul(b, fma(mul(0.5f, a), mul(sub(1.0f, mul(t, t)), mul(k, add(1.0f, mul(three_q, x2)))), left)));
}

inline std::vector<OpCase> train_map_cases() {
  std::vector<OpCase> out;
  uint64_t seed = 950;
  // Rotary embedding, both directions: rows x heads x head_dim.
  struct RopeProblem {
    int64_t rows, heads, D;
  };
  for (const RopeProblem& pr : {RopeProblem{1, 1, 2}, RopeProblem{7, 3, 10}, RopeProblem{33, 4, 64},
                                RopeProblem{0, 2, 8}, RopeProblem{300, 2, 128}}) {
    for (bool backward : {false, true}) {
      seed += 3;
      RopeArgs a;
      a.rows = pr.rows;
      a.heads = pr.heads;
      a.head_dim = pr.D;
      a.backward = backward;
      const Shape xs = {pr.rows, pr.heads * pr.D}, ts = {pr.rows, pr.D};
      OpCase c;
      c.op = backward ? "rope_backward" : "rope";
      c.label = std::to_string(pr.rows) + "x" + std::to_string(pr.heads) + "x" + std::to_string(pr.D);
      c.inputs = [xs, ts, seed] {
        return Tensors{special_floats(xs, seed), special_floats(ts, seed + 1, 1.0f), special_floats(ts, seed + 2, 1.0f)};
      };
      auto reference = [a, xs](const Tensors& in, bool sabotaged) {
        std::vector<float> x = floats_of(in[0]), co = floats_of(in[1]), si = floats_of(in[2]), y(x.size());
        rope_reference(a, x.data(), co.data(), si.data(), y.data());
        if (sabotaged) {
          // Sabotage: the rotation without its negation.
          RopeArgs other = a;
          other.backward = !a.backward;
          rope_reference(other, x.data(), co.data(), si.data(), y.data());
        }
        return Tensors{f32_tensor(y, xs)};
      };
      c.reference = [reference](const Tensors& in) { return reference(in, false); };
      c.run = [D = pr.D, backward](const Tensors& in) { return Tensors{rope(in[0], in[1], in[2], D, backward)}; };
      if (pr.rows == 33) {
        c.sabotage_what = "the other direction's rotation";
        c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
      }
      out.push_back(c);
    }
  }
  // SwiGLU (forward, backward) and the GELU-tanh backward over odd and empty sizes.
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{37}, int64_t{1000}, int64_t{70001}}) {
    for (TrainMap op : {TrainMap::swiglu_forward, TrainMap::swiglu_backward, TrainMap::gelu_tanh_backward}) {
      seed += 3;
      const Shape shape = {n};
      OpCase c;
      c.op = op == TrainMap::swiglu_forward ? "swiglu" : op == TrainMap::swiglu_backward ? "swiglu_backward" : "gelu_tanh_backward";
      c.label = "n=" + std::to_string(n);
      c.inputs = [shape, seed] {
        return Tensors{special_floats(shape, seed), special_floats(shape, seed + 1), special_floats(shape, seed + 2)};
      };
      auto reference = [op, n, shape](const Tensors& in, bool sabotaged) {
        std::vector<float> a = floats_of(in[0]), b = floats_of(in[1]), d = floats_of(in[2]);
        std::vector<float> o0(a.size()), o1(a.size());
        train_map_reference(op, n, a.data(), b.data(), d.data(), o0.data(), o1.data());
        if (sabotaged)
          for (int64_t e = 0; e < n; ++e) o0[e] = contracted_first_output(op, a[e], b[e], d[e]);
        if (op == TrainMap::swiglu_backward) return Tensors{f32_tensor(o0, shape), f32_tensor(o1, shape)};
        return Tensors{f32_tensor(o0, shape)};
      };
      c.reference = [reference](const Tensors& in) { return reference(in, false); };
      c.run = [op](const Tensors& in) {
        if (op == TrainMap::swiglu_forward) return Tensors{swiglu(in[0], in[1])};
        if (op == TrainMap::gelu_tanh_backward) return Tensors{gelu_tanh_backward(in[0], in[1])};
        auto [da, db] = swiglu_backward(in[0], in[1], in[2]);
        return Tensors{da, db};
      };
      if (n == 1000) {
        c.sabotage_what = "a contracted or regrouped step";
        c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
      }
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace bl::conformance
