// cases_elementwise.h: the case lists of the elementwise ops (src/kernels/unary.h, binary.h,
// cast.h): every unary op on f32 over interesting_lengths() and a transposed view, every binary op
// with broadcasting and strides, integer arithmetic, comparisons, where and casts.
#pragma once

#include "conformance/case_util.h"
#include "kernels/binary.h"
#include "kernels/cast.h"
#include "kernels/unary.h"

namespace bl::conformance {

// Sabotage of a float elementwise op: NaN inputs pass their payload through instead of becoming the
// canonical NaN (the contract canonicalizes every stored NaN).
inline void keep_nan_payloads(const float* in, const StridedView& view, std::vector<float>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    float x = in[strided_offset(view, static_cast<int64_t>(i))];
    if (is_nan(x)) out[i] = x;
  }
}

inline std::vector<OpCase> unary_f32_cases() {
  std::vector<OpCase> out;
  for (int k = 0; k < kUnaryOpCount; ++k) {
    const UnaryOp op = static_cast<UnaryOp>(k);
    // The 10^6 length runs for a few ops of each kind (math, bit ops, arithmetic) to keep the
    // suite quick; every op runs every other length.
    const bool large_op = op == UnaryOp::exp || op == UnaryOp::neg || op == UnaryOp::round ||
                          op == UnaryOp::relu || op == UnaryOp::reciprocal;
    auto reference = [op](const Tensor& x) {
      std::vector<float> xv = floats_of(x), y(xv.size());
      unary_f32_reference(op, xv.data(), identity_view(x.numel()), y.data(), x.numel());
      return y;
    };
    for (int64_t n : interesting_lengths()) {
      if (n > 100000 && !large_op) continue;
      OpCase c;
      c.op = unary_op_name(op);
      c.label = "n=" + std::to_string(n);
      c.inputs = [n] { return Tensors{special_floats({n}, 1000 + static_cast<uint64_t>(n))}; };
      c.reference = [reference](const Tensors& in) { return Tensors{f32_tensor(reference(in[0]), in[0].shape())}; };
      c.run = [op](const Tensors& in) { return Tensors{unary_tensor_fn(op)(in[0])}; };
      if (n == 4097) {
        c.sabotage_what = "NaN payloads kept";
        c.sabotage = [reference](const Tensors& in) {
          std::vector<float> x = floats_of(in[0]), y = reference(in[0]);
          keep_nan_payloads(x.data(), identity_view(in[0].numel()), y);
          return Tensors{f32_tensor(y, in[0].shape())};
        };
      }
      out.push_back(c);
    }
    OpCase t;
    t.op = unary_op_name(op);
    t.label = "transposed [257, 131]";
    t.inputs = [] { return Tensors{special_floats({257, 131}, 7)}; };
    t.reference = [reference](const Tensors& in) {
      Tensor v = in[0].transpose(0, 1);
      return Tensors{f32_tensor(reference(v), v.shape())};
    };
    t.run = [op](const Tensors& in) { return Tensors{unary_tensor_fn(op)(in[0].transpose(0, 1))}; };
    out.push_back(t);
  }
  return out;
}

inline std::vector<OpCase> binary_f32_cases() {
  struct Pair {
    Shape a, b;
    bool transposed;
  };
  const Pair pairs[] = {{{0}, {0}, false},          {{1}, {1}, false},
                        {{1000003}, {1000003}, false}, {{4097}, {1}, false},
                        {{1}, {12289}, false},      {{31, 1}, {1, 33}, false},
                        {{7, 1, 97}, {255, 1}, false}, {{3, 4, 5}, {4, 1}, false},
                        {{1000}, {1000}, false},    {{2, 1, 3, 1}, {1, 5, 1, 7}, false},
                        {{}, {3, 3}, false},        {{97, 33}, {97, 33}, true}};
  std::vector<OpCase> out;
  uint64_t seed = 1;
  for (const Pair& p : pairs) {
    seed += 2;
    for (int k = 0; k < static_cast<int>(BinaryOp::count_); ++k) {
      const BinaryOp op = static_cast<BinaryOp>(k);
      const bool tr = p.transposed;
      OpCase c;
      c.op = binary_op_name(op);
      c.label = shape_str(p.a) + " x " + shape_str(p.b) + (tr ? " transposed" : "");
      c.inputs = [p, seed] { return Tensors{special_floats(p.a, seed), special_floats(p.b, seed + 1)}; };
      auto views = [tr](const Tensors& in) {
        return tr ? Tensors{in[0].transpose(0, 1), in[1].transpose(0, 1)} : in;
      };
      auto reference = [op, views](const Tensors& in, bool sabotaged) {
        Tensors v = views(in);
        Shape shape = broadcast_shapes(v[0].shape(), v[1].shape(), "test");
        int64_t n = shape_numel(shape);
        StridedView va = reference_view(v[0], shape), vb = reference_view(v[1], shape);
        std::vector<float> y(static_cast<size_t>(n));
        binary_f32_reference(op, v[0].data<float>(), va, v[1].data<float>(), vb, y.data(), n);
        if (sabotaged) keep_nan_payloads(v[0].data<float>(), va, y);
        return Tensors{f32_tensor(y, shape)};
      };
      c.reference = [reference](const Tensors& in) { return reference(in, false); };
      c.run = [op, views](const Tensors& in) {
        Tensors v = views(in);
        return Tensors{binary_tensor_fn(op)(v[0], v[1])};
      };
      if (p.a == Shape{1000} && !tr) {
        c.sabotage_what = "NaN payloads of the first operand kept";
        c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
      }
      out.push_back(c);
    }
  }
  return out;
}

// Integers with wrap-around cases (INT_MIN, 0) and many ties; f32 pairs with equal entries.
inline Tensor int_values(int64_t n, uint64_t seed, DType dtype, int64_t modulo = 0) {
  test_rng::SplitMix64 rng(seed);
  if (dtype == DType::i32) {
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = modulo ? static_cast<int32_t>(rng.next() % modulo) - 3 : static_cast<int32_t>(rng.next());
    if (n > 2) v[0] = INT32_MIN, v[1] = 0;
    return Tensor::from_vector(v, {n});
  }
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = modulo ? static_cast<int64_t>(rng.next() % modulo) - 3 : static_cast<int64_t>(rng.next());
  if (n > 2) v[0] = INT64_MIN, v[1] = 0;
  return Tensor::from_vector(v, {n});
}

template <typename I, typename U>
Tensor unary_int_expected(UnaryOp op, const Tensor& x) {
  std::vector<I> xv = raw_vector<I>(x), y(xv.size());
  unary_int_reference<I, U>(op, xv.data(), identity_view(x.numel()), y.data(), x.numel());
  return tensor_from_bytes(y.data(), x.shape(), x.dtype());
}

template <typename I, typename U>
Tensor binary_int_expected(BinaryOp op, const Tensor& a, const Tensor& b) {
  std::vector<I> av = raw_vector<I>(a), bv = raw_vector<I>(b), y(av.size());
  binary_int_reference<I, U>(op, av.data(), identity_view(a.numel()), bv.data(), identity_view(b.numel()),
                             y.data(), a.numel());
  return tensor_from_bytes(y.data(), a.shape(), a.dtype());
}

template <typename T>
Tensor compare_expected(CompareOp op, const Tensor& a, const Tensor& b, bool total_order) {
  std::vector<T> av = raw_vector<T>(a), bv = raw_vector<T>(b);
  std::vector<uint8_t> y(av.size());
  compare_reference<T>(op, av.data(), identity_view(a.numel()), bv.data(), identity_view(b.numel()),
                       y.data(), a.numel());
  if (total_order) {
    // Sabotage: floats ordered by their total-order key, so NaN compares as greater than +inf.
    for (size_t i = 0; i < y.size(); ++i)
      y[i] = total_order_key(static_cast<float>(av[i])) < total_order_key(static_cast<float>(bv[i])) ? 1 : 0;
  }
  return tensor_from_bytes(y.data(), a.shape(), DType::boolean);
}

template <typename From, typename To>
Tensor cast_expected(const Tensor& x, DType to) {
  std::vector<From> xv = raw_vector<From>(x);
  std::vector<To> y(xv.size());
  cast_reference<From, To>(xv.data(), identity_view(x.numel()), y.data(), x.numel(), to == DType::boolean);
  return tensor_from_bytes(y.data(), x.shape(), to);
}

inline Tensor cast_expected_any(const Tensor& x, DType to) {
  switch (x.dtype()) {
    case DType::f32:
      switch (to) {
        case DType::f32: return cast_expected<float, float>(x, to);
        case DType::i32: return cast_expected<float, int32_t>(x, to);
        case DType::i64: return cast_expected<float, int64_t>(x, to);
        default: return cast_expected<float, uint8_t>(x, to);
      }
    case DType::i64:
      switch (to) {
        case DType::f32: return cast_expected<int64_t, float>(x, to);
        case DType::i32: return cast_expected<int64_t, int32_t>(x, to);
        case DType::i64: return cast_expected<int64_t, int64_t>(x, to);
        default: return cast_expected<int64_t, uint8_t>(x, to);
      }
    default:
      switch (to) {
        case DType::f32: return cast_expected<int32_t, float>(x, to);
        case DType::i32: return cast_expected<int32_t, int32_t>(x, to);
        case DType::i64: return cast_expected<int32_t, int64_t>(x, to);
        default: return cast_expected<int32_t, uint8_t>(x, to);
      }
  }
}

inline std::vector<OpCase> elementwise_int_cases() {
  std::vector<OpCase> out;
  const int64_t lengths[] = {0, 1, 97, 65537};
  const UnaryOp int_unary[] = {UnaryOp::abs, UnaryOp::neg, UnaryOp::relu, UnaryOp::square, UnaryOp::sign};
  for (int64_t n : lengths) {
    const std::string nl = "n=" + std::to_string(n);
    for (DType dt : {DType::i32, DType::i64}) {
      const std::string dl = std::string(dtype_name(dt)) + " " + nl;
      for (UnaryOp op : int_unary) {
        OpCase c;
        c.op = unary_op_name(op);
        c.label = dl;
        c.inputs = [n, dt] { return Tensors{int_values(n, 5 + static_cast<uint64_t>(n), dt)}; };
        c.reference = [op, dt](const Tensors& in) {
          return Tensors{dt == DType::i32 ? unary_int_expected<int32_t, uint32_t>(op, in[0])
                                          : unary_int_expected<int64_t, uint64_t>(op, in[0])};
        };
        c.run = [op](const Tensors& in) { return Tensors{unary_tensor_fn(op)(in[0])}; };
        out.push_back(c);
      }
      for (int k = 0; k < static_cast<int>(BinaryOp::count_); ++k) {
        const BinaryOp op = static_cast<BinaryOp>(k);
        if (!binary_op_supports_int(op)) continue;
        OpCase c;
        c.op = binary_op_name(op);
        c.label = dl;
        c.inputs = [n, dt] { return Tensors{int_values(n, 11 + n, dt), int_values(n, 12 + n, dt, 9)}; };
        c.reference = [op, dt](const Tensors& in) {
          return Tensors{dt == DType::i32 ? binary_int_expected<int32_t, uint32_t>(op, in[0], in[1])
                                          : binary_int_expected<int64_t, uint64_t>(op, in[0], in[1])};
        };
        c.run = [op](const Tensors& in) { return Tensors{binary_tensor_fn(op)(in[0], in[1])}; };
        out.push_back(c);
      }
    }
    for (int k = 0; k < static_cast<int>(CompareOp::count_); ++k) {
      const CompareOp op = static_cast<CompareOp>(k);
      OpCase c;
      c.op = compare_op_name(op);
      c.label = "f32 " + nl;
      c.inputs = [n] {
        std::vector<float> a = conformance_floats(n, 3), b = conformance_floats(n, 4);
        for (int64_t i = 0; i < n; i += 5) b[static_cast<size_t>(i)] = a[static_cast<size_t>(i)];
        return Tensors{f32_tensor(a, {n}), f32_tensor(b, {n})};
      };
      c.reference = [op](const Tensors& in) { return Tensors{compare_expected<float>(op, in[0], in[1], false)}; };
      c.run = [op](const Tensors& in) { return Tensors{compare_tensor_fn(op)(in[0], in[1])}; };
      if (op == CompareOp::lt && n == 65537) {
        c.sabotage_what = "NaN ordered above +inf (total order instead of IEEE)";
        c.sabotage = [op](const Tensors& in) { return Tensors{compare_expected<float>(op, in[0], in[1], true)}; };
      }
      out.push_back(c);
      OpCase ci = c;
      ci.label = "i32 " + nl;
      ci.inputs = [n] { return Tensors{int_values(n, 21, DType::i32, 7), int_values(n, 22, DType::i32, 7)}; };
      ci.reference = [op](const Tensors& in) { return Tensors{compare_expected<int32_t>(op, in[0], in[1], false)}; };
      ci.sabotage = nullptr;
      out.push_back(ci);
    }
    OpCase w;
    w.op = "where";
    w.label = "f32 " + nl;
    w.inputs = [n] {
      std::vector<uint8_t> cond(static_cast<size_t>(n));
      test_rng::SplitMix64 rng(31);
      for (auto& v : cond) v = static_cast<uint8_t>(rng.next() & 1);
      return Tensors{Tensor::from_vector(cond, {n}, DType::boolean), special_floats({n}, 32),
                     special_floats({n}, 33)};
    };
    w.reference = [](const Tensors& in) {
      int64_t m = in[0].numel();
      std::vector<uint8_t> cv = raw_vector<uint8_t>(in[0]);
      std::vector<float> a = floats_of(in[1]), b = floats_of(in[2]), y(static_cast<size_t>(m));
      where_reference<float>(cv.data(), identity_view(m), a.data(), identity_view(m), b.data(),
                             identity_view(m), y.data(), m);
      return Tensors{f32_tensor(y, in[1].shape())};
    };
    w.run = [](const Tensors& in) { return Tensors{where(in[0], in[1], in[2])}; };
    out.push_back(w);
    // Casts between every pair of the numeric dtypes and to boolean; large magnitudes to saturate.
    for (DType from : {DType::f32, DType::i32, DType::i64}) {
      for (DType to : {DType::f32, DType::i32, DType::i64, DType::u8, DType::boolean}) {
        OpCase c;
        c.op = "cast";
        c.label = std::string(dtype_name(from)) + "->" + dtype_name(to) + " " + nl;
        c.inputs = [n, from] {
          return Tensors{from == DType::f32 ? special_floats({n}, 41, 3e9f) : int_values(n, 42, from)};
        };
        c.reference = [to](const Tensors& in) { return Tensors{cast_expected_any(in[0], to)}; };
        c.run = [to](const Tensors& in) { return Tensors{cast(in[0], to)}; };
        out.push_back(c);
      }
    }
  }
  return out;
}

}  // namespace bl::conformance
