// cases_reduce.h: the case lists of the row ops (src/kernels/reduce.h, softmax.h, norm.h,
// cumsum.h, sort.h): reductions over one or several dimensions, argmax/argmin, softmax and
// log-softmax, layer and RMS norm, cumulative sum, sort and top-k.
#pragma once

#include <algorithm>

#include "conformance/case_util.h"
#include "kernels/cumsum.h"
#include "kernels/norm.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"
#include "kernels/sort.h"

namespace bl::conformance {

// A reduction problem: x's shape and the consecutive dimensions [first, first + count) reduced.
struct ReduceProblem {
  Shape shape;
  size_t first;
  size_t count;

  ReduceShape reduce_shape() const {
    ReduceShape r;
    r.outer = r.n = r.inner = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (d < first) r.outer *= shape[d];
      else if (d < first + count) r.n *= shape[d];
      else r.inner *= shape[d];
    }
    return r;
  }
  std::vector<int64_t> dims() const {
    std::vector<int64_t> d;
    for (size_t i = 0; i < count; ++i) d.push_back(static_cast<int64_t>(first + i));
    return d;
  }
};

inline std::vector<ReduceProblem> reduce_problems() {
  std::vector<ReduceProblem> out;
  for (int64_t n : interesting_lengths()) out.push_back({{n}, 0, 1});
  out.push_back({{5, 97, 3}, 1, 1});
  out.push_back({{5, 97, 3}, 0, 1});
  out.push_back({{5, 97, 3}, 2, 1});
  out.push_back({{5, 97, 3}, 0, 2});
  out.push_back({{5, 97, 3}, 1, 2});
  out.push_back({{5, 97, 3}, 0, 3});
  out.push_back({{3, 4097, 2}, 1, 1});
  out.push_back({{257, 33}, 1, 1});
  out.push_back({{2, 0, 3}, 1, 1});
  return out;
}

inline const char* reduce_op_label(ReduceOp op) {
  static const char* names[] = {"sum", "mean", "var", "std", "amax", "amin", "l1_norm", "l2_norm"};
  return names[static_cast<int>(op)];
}

inline Tensor reduce_tensor(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, int64_t ddof,
                            bool keepdim) {
  switch (op) {
    case ReduceOp::sum: return sum(x, dims, keepdim);
    case ReduceOp::mean: return mean(x, dims, keepdim);
    case ReduceOp::var: return var(x, dims, ddof, keepdim);
    case ReduceOp::std: return stddev(x, dims, ddof, keepdim);
    case ReduceOp::max: return amax(x, dims, keepdim);
    case ReduceOp::min: return amin(x, dims, keepdim);
    case ReduceOp::l1: return l1_norm(x, dims, keepdim);
    default: return l2_norm(x, dims, keepdim);
  }
}

inline std::vector<OpCase> reduce_cases() {
  std::vector<OpCase> out;
  const ReduceOp ops[] = {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::std,
                          ReduceOp::max, ReduceOp::min,  ReduceOp::l1,  ReduceOp::l2};
  for (const ReduceProblem& p : reduce_problems()) {
    const ReduceShape rs = p.reduce_shape();
    const int64_t numel = shape_numel(p.shape);
    for (int variant = 0; variant < 2; ++variant) {
      // Variant 0: plain values; variant 1: scale 100 with a special value every 37 elements.
      if (variant == 1 && numel > 100000) continue;
      for (ReduceOp op : ops) {
        if ((op == ReduceOp::max || op == ReduceOp::min) && rs.n == 0) continue;
        if (numel > 100000 && op != ReduceOp::sum && op != ReduceOp::var && op != ReduceOp::max) continue;
        const int64_t ddof = op == ReduceOp::var ? 1 : 0;
        const bool keepdim = p.shape.size() == 3 && p.first == 1 && p.count == 1;
        OpCase c;
        c.op = reduce_op_label(op);
        c.label = dims_label(p.shape, p.dims()) + (variant ? " specials" : "") + (keepdim ? " keepdim" : "");
        c.inputs = [p, variant] {
          return Tensors{variant ? plain_floats(p.shape, 77, 100.0f, 37) : plain_floats(p.shape, 76)};
        };
        auto reference = [op, p, rs, ddof, keepdim](const Tensors& in, bool sabotaged) {
          std::vector<float> x = floats_of(in[0]), y(static_cast<size_t>(rs.outer * rs.inner));
          reduce_reference(op, x.data(), rs, y.data(), ddof);
          if (sabotaged)
            for (int64_t o = 0; o < rs.outer; ++o)
              for (int64_t j = 0; j < rs.inner; ++j)
                y[o * rs.inner + j] = canonicalize(sequential_sum(x.data() + o * rs.n * rs.inner + j, rs.n, rs.inner));
          return Tensors{f32_tensor(y, reduced_shape(p.shape, p.first, p.count, keepdim))};
        };
        c.reference = [reference](const Tensors& in) { return reference(in, false); };
        c.run = [op, p, ddof, keepdim](const Tensors& in) {
          return Tensors{reduce_tensor(op, in[0], p.dims(), ddof, keepdim)};
        };
        if (op == ReduceOp::sum && variant == 0 && p.shape == Shape{4097}) {
          c.sabotage_what = "left-to-right sum instead of the lane and leaf schedule";
          c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
        }
        out.push_back(c);
      }
      if (p.count == 1 && rs.n > 0 && numel <= 100000) {
        for (ArgReduceOp op : {ArgReduceOp::argmax, ArgReduceOp::argmin}) {
          OpCase c;
          c.op = op == ArgReduceOp::argmax ? "argmax" : "argmin";
          c.label = dims_label(p.shape, p.dims()) + (variant ? " specials" : " ties");
          c.inputs = [p, variant] {
            if (variant) return Tensors{plain_floats(p.shape, 78, 100.0f, 37)};
            // Few distinct values, so ties decide most rows.
            std::vector<float> v = generate_floats(shape_numel(p.shape), 79);
            for (float& x : v) x = static_cast<float>(static_cast<int>(x * 3.0f));
            return Tensors{f32_tensor(v, p.shape)};
          };
          c.reference = [op, p, rs](const Tensors& in) {
            std::vector<float> x = floats_of(in[0]);
            std::vector<int64_t> y(static_cast<size_t>(rs.outer * rs.inner));
            arg_reduce_reference(op, x.data(), rs, y.data());
            return Tensors{i64_tensor(y, reduced_shape(p.shape, p.first, 1, false))};
          };
          c.run = [op, p](const Tensors& in) {
            int64_t d = static_cast<int64_t>(p.first);
            return Tensors{op == ArgReduceOp::argmax ? argmax(in[0], d) : argmin(in[0], d)};
          };
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

// Row problems of softmax and the norms: [rows, n] over the last dimension.
inline std::vector<Shape> row_shapes() {
  std::vector<Shape> out;
  for (int64_t n : interesting_lengths(false)) out.push_back({3, n});
  out.push_back({1, 1000003});
  out.push_back({257, 33});
  out.push_back({0, 17});
  return out;
}

inline std::vector<OpCase> softmax_cases() {
  std::vector<OpCase> out;
  for (const Shape& s : row_shapes()) {
    for (int variant = 0; variant < 2; ++variant) {
      if (variant == 1 && shape_numel(s) > 100000) continue;
      for (bool log_form : {false, true}) {
        OpCase c;
        c.op = log_form ? "log_softmax" : "softmax";
        c.label = shape_str(s) + (variant ? " specials" : "");
        c.inputs = [s, variant] {
          return Tensors{variant ? plain_floats(s, 81, 100.0f, 37) : plain_floats(s, 80, 20.0f)};
        };
        auto reference = [s, log_form](const Tensors& in, bool sabotaged) {
          std::vector<float> x = floats_of(in[0]), y(x.size());
          const int64_t rows = s[0], n = s[1];
          softmax_reference(x.data(), rows, n, y.data(), log_form);
          if (sabotaged) {
            for (int64_t r = 0; r < rows; ++r) {
              const float* xr = x.data() + r * n;
              float m = reference_reduce_one<StepMax>(xr, n, 1, 0.0f), sum_e = 0.0f;
              for (int64_t i = 0; i < n; ++i) sum_e = add(sum_e, exp(sub(xr[i], m)));
              for (int64_t i = 0; i < n; ++i)
                y[r * n + i] = log_form ? log_softmax_element(xr[i], m, log(sum_e)) : softmax_element(xr[i], m, sum_e);
            }
          }
          return Tensors{f32_tensor(y, s)};
        };
        c.reference = [reference](const Tensors& in) { return reference(in, false); };
        c.run = [log_form](const Tensors& in) {
          return Tensors{log_form ? log_softmax(in[0], -1) : softmax(in[0], -1)};
        };
        if (variant == 0 && s == Shape{3, 4097}) {
          c.sabotage_what = "denominator summed left to right";
          c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
        }
        out.push_back(c);
      }
    }
  }
  // Along the first dimension of a [97, 33] tensor: the reference works on the transpose.
  for (bool log_form : {false, true}) {
    OpCase c;
    c.op = log_form ? "log_softmax" : "softmax";
    c.label = "[97, 33] dim=0";
    c.inputs = [] { return Tensors{plain_floats({97, 33}, 82, 20.0f, 37)}; };
    c.reference = [log_form](const Tensors& in) {
      std::vector<float> x = floats_of(in[0].transpose(0, 1)), y(x.size());
      softmax_reference(x.data(), 33, 97, y.data(), log_form);
      Tensor yt = f32_tensor(y, {33, 97}).transpose(0, 1).contiguous();
      return Tensors{yt};
    };
    c.run = [log_form](const Tensors& in) {
      return Tensors{log_form ? log_softmax(in[0], 0) : softmax(in[0], 0)};
    };
    out.push_back(c);
  }
  return out;
}

inline std::vector<OpCase> norm_cases() {
  std::vector<OpCase> out;
  for (const Shape& s : row_shapes()) {
    const int64_t n = s[1];
    for (int variant = 0; variant < 3; ++variant) {
      // Variant 0: plain rows; 1: with gamma and beta; 2: affine with a special value every 41.
      if (variant == 2 && shape_numel(s) > 100000) continue;
      const bool affine = variant > 0;
      for (bool rms : {false, true}) {
        OpCase c;
        c.op = rms ? "rms_norm" : "layer_norm";
        c.label = shape_str(s) + (affine ? " affine" : "") + (variant == 2 ? " specials" : "");
        c.inputs = [s, n, variant] {
          return Tensors{plain_floats(s, 90, 3.0f, variant == 2 ? 41 : 0), plain_floats({n}, 91, 2.0f),
                         plain_floats({n}, 92)};
        };
        auto reference = [s, affine, rms](const Tensors& in, bool sabotaged) {
          std::vector<float> x = floats_of(in[0]), g = floats_of(in[1]), b = floats_of(in[2]), y(x.size());
          const int64_t rows = s[0], n = s[1];
          const float* gp = affine ? g.data() : nullptr;
          const float* bp = affine ? b.data() : nullptr;
          if (!sabotaged) {
            if (rms) rms_norm_reference(x.data(), rows, n, gp, 1e-6f, y.data(), nullptr);
            else layer_norm_reference(x.data(), rows, n, gp, bp, 1e-5f, y.data(), nullptr, nullptr);
          } else {
            // Sabotage (layer norm): the mean summed left to right.
            for (int64_t r = 0; r < rows; ++r) {
              const float* xr = x.data() + r * n;
              float m = finish_mean(sequential_sum(xr, n), n);
              float v = finish_var(reference_reduce_one<StepCenteredSquare>(xr, n, 1, m), n, 0);
              float den = norm_denominator(v, 1e-5f);
              for (int64_t i = 0; i < n; ++i)
                y[r * n + i] = layer_norm_element(xr[i], m, den, gp ? gp[i] : 1.0f, bp ? bp[i] : 0.0f,
                                                  gp != nullptr, bp != nullptr);
            }
          }
          return Tensors{f32_tensor(y, s)};
        };
        c.reference = [reference](const Tensors& in) { return reference(in, false); };
        c.run = [affine, rms](const Tensors& in) {
          Tensor g = affine ? in[1] : Tensor(), b = affine ? in[2] : Tensor();
          return Tensors{rms ? rms_norm(in[0], g, 1e-6f) : layer_norm(in[0], g, b, 1e-5f)};
        };
        if (!rms && variant == 1 && s == Shape{3, 4097}) {
          c.sabotage_what = "mean summed left to right";
          c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
        }
        out.push_back(c);
      }
    }
  }
  return out;
}

inline std::vector<OpCase> cumsum_cases() {
  std::vector<ReduceProblem> problems;
  for (int64_t n : interesting_lengths()) problems.push_back({{n}, 0, 1});
  problems.push_back({{5, 1025, 3}, 1, 1});
  problems.push_back({{5, 97, 3}, 0, 1});
  problems.push_back({{5, 97, 3}, 2, 1});
  problems.push_back({{2, 0, 3}, 1, 1});
  std::vector<OpCase> out;
  for (const ReduceProblem& p : problems) {
    for (int variant = 0; variant < 2; ++variant) {
      if (variant == 1 && shape_numel(p.shape) > 100000) continue;
      OpCase c;
      c.op = "cumsum";
      c.label = dims_label(p.shape, p.dims()) + (variant ? " specials" : "");
      c.inputs = [p, variant] {
        return Tensors{variant ? plain_floats(p.shape, 95, 100.0f, 37) : plain_floats(p.shape, 94)};
      };
      const ReduceShape rs = p.reduce_shape();
      auto reference = [p, rs](const Tensors& in, bool sabotaged) {
        std::vector<float> x = floats_of(in[0]), y(x.size());
        cumsum_reference(x.data(), rs, y.data());
        if (sabotaged) {
          // One running sum over the whole sequence, no blocks.
          for (int64_t o = 0; o < rs.outer; ++o)
            for (int64_t j = 0; j < rs.inner; ++j) {
              float acc = 0.0f;
              for (int64_t i = 0; i < rs.n; ++i) {
                int64_t at = (o * rs.n + i) * rs.inner + j;
                acc = i == 0 ? x[at] : add(acc, x[at]);
                y[at] = canonicalize(acc);
              }
            }
        }
        return Tensors{f32_tensor(y, p.shape)};
      };
      c.reference = [reference](const Tensors& in) { return reference(in, false); };
      c.run = [p](const Tensors& in) { return Tensors{cumsum(in[0], static_cast<int64_t>(p.first))}; };
      if (variant == 0 && p.shape == Shape{4097}) {
        c.sabotage_what = "one running sum instead of blocks of 512";
        c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
      }
      out.push_back(c);
    }
  }
  return out;
}

inline std::vector<OpCase> sort_cases() {
  std::vector<Shape> shapes = {{0}, {1}, {7}, {33}, {1021}, {4097}, {65537}, {37, 97}, {3, 0}};
  std::vector<OpCase> out;
  for (const Shape& s : shapes) {
    const int64_t rows = s.size() == 2 ? s[0] : 1, n = s.back();
    // Values with many ties (a few distinct values and both zeros) and special values.
    auto inputs = [s] {
      std::vector<float> v = generate_floats(shape_numel(s), 97, 1.0f, 13);
      for (size_t i = 0; i < v.size(); i += 3) v[i] = static_cast<float>(static_cast<int>(v[i] * 4.0f));
      return Tensors{f32_tensor(v, s)};
    };
    for (bool descending : {false, true}) {
      OpCase c;
      c.op = "sort";
      c.label = shape_str(s) + (descending ? " descending" : "");
      c.inputs = inputs;
      auto reference = [s, rows, n, descending](const Tensors& in, bool sabotaged) {
        std::vector<float> x = floats_of(in[0]), v(x.size());
        std::vector<int64_t> idx(x.size());
        if (!sabotaged) {
          sort_reference(x.data(), rows, n, descending, v.data(), idx.data());
        } else {
          // Sabotage: ties in reverse index order (an unstable sort would do this for some).
          for (int64_t r = 0; r < rows; ++r) {
            std::vector<int64_t> order(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) order[i] = n - 1 - i;
            const float* xr = x.data() + r * n;
            std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
              return descending ? sort_key(xr[a]) > sort_key(xr[b]) : sort_key(xr[a]) < sort_key(xr[b]);
            });
            for (int64_t i = 0; i < n; ++i) {
              v[r * n + i] = canonicalize(xr[order[i]]);
              idx[r * n + i] = order[i];
            }
          }
        }
        return Tensors{f32_tensor(v, s), i64_tensor(idx, s)};
      };
      c.reference = [reference](const Tensors& in) { return reference(in, false); };
      c.run = [descending](const Tensors& in) {
        SortResult r = sort(in[0], -1, descending);
        return Tensors{r.values, r.indices};
      };
      if (s == Shape{4097} && !descending) {
        c.sabotage_what = "ties in descending index order";
        c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
      }
      out.push_back(c);
    }
    std::vector<int64_t> ks;
    for (int64_t k : {int64_t(0), int64_t(1), int64_t(5), n})
      if (k <= n && std::find(ks.begin(), ks.end(), k) == ks.end()) ks.push_back(k);
    for (int64_t k : ks) {
      OpCase c;
      c.op = "topk";
      c.label = shape_str(s) + " k=" + std::to_string(k);
      c.inputs = inputs;
      c.reference = [s, rows, n, k](const Tensors& in) {
        std::vector<float> x = floats_of(in[0]), v(static_cast<size_t>(rows * k));
        std::vector<int64_t> idx(v.size());
        topk_reference(x.data(), rows, n, k, v.data(), idx.data());
        Shape os = s;
        os.back() = k;
        return Tensors{f32_tensor(v, os), i64_tensor(idx, os)};
      };
      c.run = [k](const Tensors& in) {
        SortResult r = topk(in[0], k, -1);
        return Tensors{r.values, r.indices};
      };
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace bl::conformance
