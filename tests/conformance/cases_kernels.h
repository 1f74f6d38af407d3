// cases_kernels.h: the case lists of the kernels that have no Tensor-level public op and are reached
// through their dispatch point (src/ops/dispatch.h): im2col and tile max (the conv / pool layers),
// the skinny GEMM (few-row products of the models), the contract math map, the histogram of
// boosting and the contract random fill. Each run allocates its outputs on the inputs' device and
// calls dispatch::<op>, so the same case runs on every backend.
#pragma once

#include <cstdint>
#include <vector>

#include "conformance/case_util.h"
#include "contract/rng.h"
#include "bitlearn/ops_optim.h"
#include "kernels/adam.h"
#include "kernels/histogram.h"
#include "kernels/im2col.h"
#include "kernels/math_map.h"
#include "kernels/matmul.h"
#include "kernels/rng_fill.h"
#include "kernels/skinny_matmul.h"
#include "kernels/tile_max.h"
#include "ops/dispatch.h"

namespace bl::conformance {

template <typename T>
const T* cptr(const Tensor& t) {
  return static_cast<const T*>(t.raw_data());
}
template <typename T>
T* mptr(Tensor& t) {
  return static_cast<T*>(t.raw_data());
}

inline std::vector<OpCase> im2col_cases() {
  std::vector<OpCase> out;
  struct Conv {
    Im2colShape s;
    float pad_value;
  };
  // Odd images, stride, dilation, padding wider than the kernel, one channel and many, an empty batch.
  const Conv convs[] = {
      {{2, 9, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1}, 0.0f},
      {{1, 13, 11, 5, 5, 3, 2, 3, 2, 1, 1, 2}, -0.0f},
      {{3, 8, 8, 1, 2, 2, 2, 2, 0, 0, 1, 1}, float_of(0xFF800000u)},
      {{1, 5, 6, 33, 3, 2, 1, 1, 3, 2, 2, 1}, 0.0f},
      {{0, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1}, 0.0f}};
  uint64_t seed = 700;
  for (const Conv& cv : convs) {
    OpCase c;
    c.op = "im2col";
    const Im2colShape s = cv.s;
    const float pad = cv.pad_value;
    c.label = "n=" + std::to_string(s.n) + " " + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" +
              std::to_string(s.c) + " k=" + std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w);
    const uint64_t sd = seed++;
    c.inputs = [s, sd] { return Tensors{special_floats({s.n, s.h, s.w, s.c}, sd)}; };
    const Shape out_shape = {s.rows(), s.kernel_h * s.kernel_w, s.c};
    c.reference = [s, pad, out_shape](const Tensors& in) {
      std::vector<float> x = floats_of(in[0]), y(static_cast<size_t>(s.out_numel()));
      im2col_reference(x.data(), s, pad, y.data());
      return Tensors{f32_tensor(y, out_shape)};
    };
    c.run = [s, pad, out_shape](const Tensors& in) {
      Tensor x = in[0].contiguous();
      Tensor y = Tensor::empty(out_shape, DType::f32, x.device());
      dispatch::im2col(x.device(), cptr<float>(x), s, pad, mptr<float>(y));
      return Tensors{y};
    };
    if (s.pad_h > 0 && s.n > 0) {
      c.sabotage_what = "padding written as +0 whatever the pad value";
      c.sabotage = [s, out_shape](const Tensors& in) {
        std::vector<float> x = floats_of(in[0]), y(static_cast<size_t>(s.out_numel()));
        im2col_reference(x.data(), s, 1.0f, y.data());
        return Tensors{f32_tensor(y, out_shape)};
      };
    }
    out.push_back(c);
  }
  return out;
}

inline std::vector<OpCase> tile_max_cases() {
  std::vector<OpCase> out;
  // Ties (values on a coarse grid), NaN and infinities; odd extents (multiples of the tile side).
  const TileMaxShape shapes[] = {{2, 8, 8, 3, 2}, {1, 9, 6, 5, 3}, {3, 4, 6, 1, 2}, {0, 4, 4, 2, 2}, {1, 4, 4, 7, 4}};
  uint64_t seed = 720;
  for (const TileMaxShape& s : shapes) {
    const uint64_t sd = seed++;
    const Shape in_shape = {s.n, s.h, s.w, s.c}, out_shape = {s.n, s.out_h(), s.out_w(), s.c};
    auto inputs = [in_shape, out_shape, sd] {
      std::vector<float> x = floats_of(special_floats(in_shape, sd));
      for (size_t i = 0; i < x.size(); i += 3)
        if (is_finite(x[i])) x[i] = static_cast<float>(static_cast<int>(mul(x[i], 2.0f)));
      return Tensors{f32_tensor(x, in_shape), plain_floats(out_shape, sd + 50)};
    };
    const std::string label = std::to_string(s.n) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" +
                              std::to_string(s.c) + " k=" + std::to_string(s.k);
    OpCase c;
    c.op = "tile_max";
    c.label = label;
    c.inputs = inputs;
    c.reference = [s, out_shape, in_shape](const Tensors& in) {
      std::vector<float> x = floats_of(in[0]), g = floats_of(in[1]);
      std::vector<float> y(static_cast<size_t>(s.out_numel())), dx(static_cast<size_t>(shape_numel(in_shape)));
      std::vector<int32_t> arg(y.size());
      tile_max_reference(x.data(), s, y.data(), arg.data());
      tile_max_backward_reference(g.data(), arg.data(), s, dx.data());
      return Tensors{f32_tensor(y, out_shape), tensor_from_bytes(arg.data(), out_shape, DType::i32),
                     f32_tensor(dx, in_shape)};
    };
    c.run = [s, out_shape, in_shape](const Tensors& in) {
      Tensor x = in[0].contiguous(), g = in[1].contiguous();
      Tensor y = Tensor::empty(out_shape, DType::f32, x.device());
      Tensor arg = Tensor::empty(out_shape, DType::i32, x.device());
      Tensor dx = Tensor::empty(in_shape, DType::f32, x.device());
      dispatch::tile_max(x.device(), cptr<float>(x), s, mptr<float>(y), mptr<int32_t>(arg));
      dispatch::tile_max_backward(x.device(), cptr<float>(g), cptr<int32_t>(arg), s, mptr<float>(dx));
      return Tensors{y, arg, dx};
    };
    if (s.n > 0 && s.k > 1) {
      c.sabotage_what = "every arg 0 (the tile's first element), so the backward sends gradients there";
      c.sabotage = [s, out_shape, in_shape](const Tensors& in) {
        std::vector<float> x = floats_of(in[0]), g = floats_of(in[1]);
        std::vector<float> y(static_cast<size_t>(s.out_numel())), dx(static_cast<size_t>(shape_numel(in_shape)));
        std::vector<int32_t> arg(y.size());
        tile_max_reference(x.data(), s, y.data(), arg.data());
        for (int32_t& a : arg) a = 0;
        tile_max_backward_reference(g.data(), arg.data(), s, dx.data());
        return Tensors{f32_tensor(y, out_shape), tensor_from_bytes(arg.data(), out_shape, DType::i32),
                       f32_tensor(dx, in_shape)};
      };
    }
    out.push_back(c);
  }
  return out;
}

inline std::vector<OpCase> skinny_matmul_cases() {
  std::vector<OpCase> out;
  // Row counts up to kSkinnyMaxRows; k around the 256 leaf; n odd and past a vector width.
  const int64_t shapes[][3] = {{1, 1, 1}, {1, 257, 511}, {3, 130, 256}, {7, 33, 257}, {16, 65, 769}, {5, 0, 9}, {2, 9, 0}};
  uint64_t seed = 740;
  for (const auto& sh : shapes) {
    const int64_t m = sh[0], n = sh[1], k = sh[2];
    const uint64_t sd = seed++;
    OpCase c;
    c.op = "skinny_matmul";
    c.label = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    // Special values for short k; plain values for long k, where a NaN would hide the leaf order.
    c.inputs = [m, n, k, sd] {
      Tensor a = k > 256 ? plain_floats({m, k}, sd, 2.0f) : special_floats({m, k}, sd, 2.0f);
      return Tensors{a, plain_floats({k, n}, sd + 1)};
    };
    c.reference = [m, n, k](const Tensors& in) {
      std::vector<float> a = floats_of(in[0]), b = floats_of(in[1]), y(static_cast<size_t>(m * n));
      matmul_reference(matmul_dense_args(1, m, n, k), a.data(), b.data(), y.data());
      return Tensors{f32_tensor(y, {m, n})};
    };
    c.run = [m, n, k](const Tensors& in) {
      Tensor a = in[0].contiguous(), b = in[1].contiguous();
      Tensor y = Tensor::empty({m, n}, DType::f32, a.device());
      dispatch::skinny_matmul(a.device(), cptr<float>(a), cptr<float>(b), mptr<float>(y), m, n, k);
      return Tensors{y};
    };
    if (k > 256) {
      c.sabotage_what = "one fma chain over all of k (no 256 leaves)";
      c.sabotage = [m, n, k](const Tensors& in) {
        std::vector<float> a = floats_of(in[0]), b = floats_of(in[1]), y(static_cast<size_t>(m * n));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (int64_t p = 0; p < k; ++p) acc = fma(a[i * k + p], b[p * n + j], acc);
            y[i * n + j] = canonicalize(acc);
          }
        return Tensors{f32_tensor(y, {m, n})};
      };
    }
    out.push_back(c);
  }
  return out;
}

inline std::vector<OpCase> math_map_cases() {
  std::vector<OpCase> out;
  uint64_t seed = 760;
  for (MathFn fn : all_math_fns()) {
    const bool binary = fn == MathFn::pow;
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{33}, int64_t{65537}}) {
      const uint64_t sd = seed++;
      OpCase c;
      c.op = std::string("math_map ") + math_fn_name(fn);
      c.label = "n=" + std::to_string(n);
      c.inputs = [n, sd, binary] {
        Tensors t{special_floats({n}, sd, 30.0f)};
        if (binary) t.push_back(special_floats({n}, sd + 1, 6.0f));
        return t;
      };
      c.reference = [fn, n, binary](const Tensors& in) {
        std::vector<float> x = floats_of(in[0]), y = binary ? floats_of(in[1]) : std::vector<float>(), o(n);
        math_map_reference(fn, x.data(), binary ? y.data() : nullptr, o.data(), n);
        return Tensors{f32_tensor(o, {n})};
      };
      c.run = [fn, n, binary](const Tensors& in) {
        Tensor o = Tensor::empty({n}, DType::f32, in[0].device());
        if (binary)
          dispatch::math_map(in[0].device(), fn, cptr<float>(in[0]), cptr<float>(in[1]), mptr<float>(o), n);
        else
          dispatch::math_map(in[0].device(), fn, cptr<float>(in[0]), mptr<float>(o), n);
        return Tensors{o};
      };
      if (n == 65537) {
        c.sabotage_what = "one result one ulp off";
        c.sabotage = [fn, n, binary](const Tensors& in) {
          std::vector<float> x = floats_of(in[0]), y = binary ? floats_of(in[1]) : std::vector<float>(), o(n);
          math_map_reference(fn, x.data(), binary ? y.data() : nullptr, o.data(), n);
          o[n / 2] = float_of(bits_of(o[n / 2]) ^ 1u);
          return Tensors{f32_tensor(o, {n})};
        };
      }
      out.push_back(c);
    }
  }
  return out;
}

inline std::vector<OpCase> histogram_cases() {
  std::vector<OpCase> out;
  struct Hist {
    int64_t n, d, listed;
  };
  // All rows or a listed subset (repeats allowed), one feature and many; gradients of both signs
  // and near the int64 range (sums wrap modulo 2^64, as the reference's do).
  const Hist hists[] = {{1000, 3, -1}, {4097, 9, 1500}, {17, 1, 17}, {0, 2, -1}};
  uint64_t seed = 780;
  for (const Hist& hp : hists) {
    const uint64_t sd = seed++;
    const int64_t n = hp.n, d = hp.d, count = hp.listed < 0 ? n : hp.listed;
    OpCase c;
    c.op = "histogram";
    c.label = "n=" + std::to_string(n) + " d=" + std::to_string(d) + " rows=" + std::to_string(count);
    c.inputs = [n, d, count, sd] {
      test_rng::SplitMix64 rng(sd);
      std::vector<uint8_t> bins(static_cast<size_t>(n * d));
      for (auto& b : bins) b = static_cast<uint8_t>(rng.next());
      std::vector<int64_t> gq(static_cast<size_t>(n)), hq(static_cast<size_t>(n));
      for (auto& g : gq) g = static_cast<int64_t>(rng.next());
      for (auto& h : hq) h = static_cast<int64_t>(rng.next() >> 20);
      std::vector<int32_t> rows(static_cast<size_t>(count));
      for (auto& r : rows) r = n > 0 ? static_cast<int32_t>(rng.next() % static_cast<uint64_t>(n)) : 0;
      return Tensors{tensor_from_bytes(bins.data(), {n * d}, DType::u8), i64_tensor(gq, {n}), i64_tensor(hq, {n}),
                     tensor_from_bytes(rows.data(), {count}, DType::i32)};
    };
    c.reference = [d, count](const Tensors& in) {
      std::vector<int64_t> hist(static_cast<size_t>(histogram_size(d)));
      histogram_reference(cptr<uint8_t>(in[0]), d, cptr<int32_t>(in[3]), count, cptr<int64_t>(in[1]),
                          cptr<int64_t>(in[2]), hist.data());
      return Tensors{i64_tensor(hist, {histogram_size(d)})};
    };
    c.run = [d, count](const Tensors& in) {
      Tensor hist = Tensor::empty({histogram_size(d)}, DType::i64, in[0].device());
      dispatch::histogram(in[0].device(), cptr<uint8_t>(in[0]), d, cptr<int32_t>(in[3]), count,
                          cptr<int64_t>(in[1]), cptr<int64_t>(in[2]), mptr<int64_t>(hist));
      return Tensors{hist};
    };
    if (count > 1) {
      c.sabotage_what = "the first listed row left out";
      c.sabotage = [d, count](const Tensors& in) {
        std::vector<int64_t> hist(static_cast<size_t>(histogram_size(d)));
        histogram_reference(cptr<uint8_t>(in[0]), d, cptr<int32_t>(in[3]) + 1, count - 1, cptr<int64_t>(in[1]),
                            cptr<int64_t>(in[2]), hist.data());
        return Tensors{i64_tensor(hist, {histogram_size(d)})};
      };
    }
    out.push_back(c);
  }
  return out;
}

inline std::vector<OpCase> rng_fill_cases() {
  std::vector<OpCase> out;
  struct Fill {
    RngKind kind;
    float a, b;
    const char* what;
  };
  const Fill fills[] = {{RngKind::uniform01, 0.0f, 1.0f, "uniform01"},
                        {RngKind::uniform_ab, -3.0f, 1.0000001f, "uniform_ab"},
                        {RngKind::normal, 0.5f, 2.0f, "normal"}};
  for (const Fill& f : fills)
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{65537}, int64_t{1} << 20}) {
      const uint64_t seed = 0x5eed, stream = 11;
      OpCase c;
      c.op = std::string("rng_fill ") + f.what;
      c.label = "n=" + std::to_string(n);
      c.inputs = [] { return Tensors{Tensor::zeros({1})}; };  // only its device matters
      const Fill fl = f;
      c.reference = [fl, n, seed, stream](const Tensors&) {
        std::vector<float> y(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) y[i] = rng_fill_element(fl.kind, seed, stream, static_cast<uint64_t>(i), fl.a, fl.b);
        return Tensors{f32_tensor(y, {n})};
      };
      c.run = [fl, n, seed, stream](const Tensors& in) {
        Tensor y = Tensor::empty({n}, DType::f32, in[0].device());
        dispatch::rng_fill(in[0].device(), fl.kind, seed, stream, fl.a, fl.b, mptr<float>(y), n);
        return Tensors{y};
      };
      if (n == 65537) {
        c.sabotage_what = "the neighbouring stream";
        c.sabotage = [fl, n, seed, stream](const Tensors&) {
          std::vector<float> y(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i)
            y[i] = rng_fill_element(fl.kind, seed, stream + 1, static_cast<uint64_t>(i), fl.a, fl.b);
          return Tensors{f32_tensor(y, {n})};
        };
      }
      out.push_back(c);
    }
  return out;
}

// The fused Adam update (kernels/adam.h) through the public op adam_update: special values in
// every operand, the three decay kinds, odd and empty sizes, a size past the CPU task block.
inline std::vector<OpCase> adam_cases() {
  struct Problem {
    int64_t n;
    AdamDecayKind kind;
  };
  const Problem problems[] = {{1, AdamDecayKind::none}, {1000, AdamDecayKind::decoupled}, {777, AdamDecayKind::l2},
                              {0, AdamDecayKind::decoupled}, {200003, AdamDecayKind::decoupled}};
  std::vector<OpCase> out;
  uint64_t seed = 790;
  for (const Problem& pr : problems) {
    seed += 4;
    AdamStepScalars st;
    st.beta1 = 0.9f;
    st.beta2 = 0.95f;
    st.eps = 1e-8f;
    st.step_size = 3e-4f / 0.271f;
    st.bc2_sqrt = 0.3122499f;
    st.decay_kind = pr.kind;
    st.decay = pr.kind == AdamDecayKind::l2 ? 0.01f : 1.0f - 3e-4f * 0.1f;
    const Shape shape = {pr.n};
    const bool special = pr.n < 100000;
    OpCase c;
    c.op = "adam_update";
    c.label = "n=" + std::to_string(pr.n) + (pr.kind == AdamDecayKind::none ? " no decay"
                                             : pr.kind == AdamDecayKind::l2 ? " L2 decay" : " decoupled decay");
    const uint64_t sd = seed;
    c.inputs = [shape, sd, special] {
      std::vector<float> v = floats_of(plain_floats(shape, sd + 2, 1.0f, special ? 17 : 0));
      for (float& x : v) x = abs(x);  // second moments are never negative (a NaN stays NaN)
      return Tensors{special ? special_floats(shape, sd) : plain_floats(shape, sd), plain_floats(shape, sd + 1, 0.1f, special ? 19 : 0),
                     f32_tensor(v, shape), special ? special_floats(shape, sd + 3, 1.0f) : plain_floats(shape, sd + 3)};
    };
    auto reference = [st, shape](const Tensors& in, bool sabotaged) {
      std::vector<float> p = floats_of(in[0]), m = floats_of(in[1]), v = floats_of(in[2]), g = floats_of(in[3]);
      AdamScalars k;
      k.beta1 = st.beta1, k.one_minus_beta1 = sub(1.0f, st.beta1);
      k.beta2 = st.beta2, k.one_minus_beta2 = sub(1.0f, st.beta2);
      k.bc2_sqrt = st.bc2_sqrt, k.eps = st.eps, k.step_size = st.step_size, k.decay = st.decay;
      k.decay_mode = st.decay_kind == AdamDecayKind::decoupled ? AdamDecay::decoupled
                     : st.decay_kind == AdamDecayKind::l2      ? AdamDecay::l2
                                                               : AdamDecay::none;
      // Sabotage: 1 - beta1 taken as the decimal 0.1 instead of the rounded difference.
      if (sabotaged) k.one_minus_beta1 = 0.1f;
      std::vector<float> po(p.size()), mo(p.size()), vo(p.size());
      adam_reference(k, p.data(), m.data(), v.data(), g.data(), po.data(), mo.data(), vo.data(),
                     static_cast<int64_t>(p.size()));
      return Tensors{f32_tensor(po, shape), f32_tensor(mo, shape), f32_tensor(vo, shape)};
    };
    c.reference = [reference](const Tensors& in) { return reference(in, false); };
    c.run = [st](const Tensors& in) {
      std::array<Tensor, 3> r = adam_update(in[0], in[1], in[2], in[3], st);
      return Tensors{r[0], r[1], r[2]};
    };
    if (pr.n == 1000) {
      c.sabotage_what = "1 - beta1 as the constant 0.1";
      c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace bl::conformance
