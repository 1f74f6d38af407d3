// cases_shape.h: the case lists of the data-movement ops (src/kernels/copy.h, index.h): strided
// copies, concat, index_select, gather, scatter, embedding, and embedding backward (the one of them
// that sums). Apart from that sum, outputs are exact copies of input elements, NaN payloads included.
#pragma once

#include <algorithm>

#include "conformance/case_util.h"
#include "kernels/index.h"

namespace bl::conformance {

// i64 indices in [0, extent), deterministic in seed (repeats included).
inline std::vector<int64_t> index_values(int64_t count, int64_t extent, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  std::vector<int64_t> v(static_cast<size_t>(count));
  for (auto& x : v) x = extent > 0 ? static_cast<int64_t>(rng.next() % static_cast<uint64_t>(extent)) : 0;
  return v;
}

inline Tensor index_tensor(const std::vector<int64_t>& v, const Shape& shape, DType dtype) {
  Tensor t = i64_tensor(v, shape);
  return dtype == DType::i64 ? t : t.to(dtype);
}

inline std::vector<OpCase> shape_cases() {
  std::vector<OpCase> out;
  // Strided copies: transposes, stepped slices, a permuted 3-d view (payload NaNs must survive).
  struct View {
    const char* what;
    Shape shape;
    Tensor (*make)(const Tensor&);
  };
  const View views[] = {
      {"transpose", {257, 131}, [](const Tensor& x) { return x.transpose(0, 1); }},
      {"slice step 3", {257, 131}, [](const Tensor& x) { return x.slice(1, 1, 131, 3); }},
      {"slice rows", {257, 131}, [](const Tensor& x) { return x.slice(0, 5, 200, 7); }},
      {"permute", {7, 33, 97}, [](const Tensor& x) { return x.permute({2, 0, 1}); }},
      {"empty", {0, 5}, [](const Tensor& x) { return x.transpose(0, 1); }}};
  for (const View& v : views) {
    OpCase c;
    c.op = "copy";
    c.label = std::string(v.what) + " of " + shape_str(v.shape);
    Shape s = v.shape;
    c.inputs = [s] { return Tensors{special_floats(s, 600)}; };
    auto make = v.make;
    c.reference = [make](const Tensors& in) {
      Tensor w = make(in[0]);
      return Tensors{f32_tensor(floats_of(w), w.shape())};
    };
    c.run = [make](const Tensors& in) { return Tensors{copy(make(in[0]))}; };
    if (std::string(v.what) == "transpose") {
      c.sabotage_what = "NaN payloads canonicalized (a copy through float arithmetic)";
      c.sabotage = [make](const Tensors& in) {
        Tensor w = make(in[0]);
        std::vector<float> y = floats_of(w);
        for (float& x : y) x = canonicalize(x);
        return Tensors{f32_tensor(y, w.shape())};
      };
    }
    out.push_back(c);
  }
  // concat along each dimension of [3, 5, 7]-like parts, one part empty along the joined dim.
  for (int64_t dim = 0; dim < 3; ++dim) {
    OpCase c;
    c.op = "concat";
    c.label = "dim=" + std::to_string(dim);
    c.inputs = [dim] {
      Shape a = {3, 5, 7}, b = a, e = a;
      b[dim] = 4;
      e[dim] = 0;
      return Tensors{special_floats(a, 610), special_floats(b, 611), special_floats(e, 612)};
    };
    c.reference = [dim](const Tensors& in) {
      Shape s = in[0].shape();
      s[dim] = in[0].shape()[dim] + in[1].shape()[dim];
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < dim; ++d) outer *= s[d];
      for (int64_t d = dim + 1; d < 3; ++d) inner *= s[d];
      std::vector<float> a = floats_of(in[0]), b = floats_of(in[1]), y;
      const int64_t ea = in[0].shape()[dim] * inner, eb = in[1].shape()[dim] * inner;
      for (int64_t o = 0; o < outer; ++o) {
        y.insert(y.end(), a.begin() + o * ea, a.begin() + (o + 1) * ea);
        y.insert(y.end(), b.begin() + o * eb, b.begin() + (o + 1) * eb);
      }
      return Tensors{f32_tensor(y, s)};
    };
    c.run = [dim](const Tensors& in) { return Tensors{concat({in[0], in[2], in[1]}, dim)}; };
    out.push_back(c);
  }
  return out;
}

inline std::vector<OpCase> index_cases() {
  std::vector<OpCase> out;
  // index_select along each dimension of [9, 13, 5], i32 and i64 indices, with repeats.
  for (int64_t dim = 0; dim < 3; ++dim) {
    for (DType idt : {DType::i32, DType::i64}) {
      OpCase c;
      c.op = "index_select";
      c.label = "[9, 13, 5] dim=" + std::to_string(dim) + " " + dtype_name(idt);
      const Shape s = {9, 13, 5};
      c.inputs = [s, dim, idt] {
        return Tensors{special_floats(s, 620), index_tensor(index_values(17, s[dim], 621), {17}, idt)};
      };
      c.reference = [s, dim](const Tensors& in) {
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < dim; ++d) outer *= s[d];
        for (int64_t d = dim + 1; d < 3; ++d) inner *= s[d];
        std::vector<uint32_t> x = raw_vector<uint32_t>(in[0]), y(static_cast<size_t>(outer * 17 * inner));
        std::vector<int64_t> idx = raw_vector<int64_t>(in[1].to(DType::i64));
        index_select_reference<uint32_t, int64_t>(x.data(), outer, s[dim], inner, idx.data(), 17, y.data());
        Shape os = s;
        os[dim] = 17;
        return Tensors{tensor_from_bytes(y.data(), os, DType::f32)};
      };
      c.run = [dim](const Tensors& in) { return Tensors{index_select(in[0], dim, in[1])}; };
      out.push_back(c);
    }
  }
  // gather and scatter on [31, 17] along each dimension; the index has fewer rows / columns.
  for (int64_t dim = 0; dim < 2; ++dim) {
    const Shape xs = {31, 17}, is = {11, 13};
    OpCase g;
    g.op = "gather";
    g.label = "[31, 17] dim=" + std::to_string(dim);
    g.inputs = [xs, is, dim] {
      return Tensors{special_floats(xs, 630), i64_tensor(index_values(shape_numel(is), xs[dim], 631), is),
                     special_floats(is, 632)};
    };
    g.reference = [xs, is, dim](const Tensors& in) {
      std::vector<float> x = floats_of(in[0]), y(static_cast<size_t>(shape_numel(is)));
      std::vector<int64_t> idx = raw_vector<int64_t>(in[1]);
      for (int64_t i = 0; i < is[0]; ++i)
        for (int64_t j = 0; j < is[1]; ++j) {
          int64_t k = idx[i * is[1] + j];
          y[i * is[1] + j] = dim == 0 ? x[k * xs[1] + j] : x[i * xs[1] + k];
        }
      return Tensors{tensor_from_bytes(y.data(), is, DType::f32)};
    };
    g.run = [dim](const Tensors& in) { return Tensors{gather(in[0], dim, in[1])}; };
    out.push_back(g);
    OpCase s = g;
    s.op = "scatter";
    s.reference = [xs, is, dim](const Tensors& in) {
      std::vector<float> y = floats_of(in[0]), src = floats_of(in[2]);
      std::vector<int64_t> idx = raw_vector<int64_t>(in[1]);
      for (int64_t i = 0; i < is[0]; ++i)  // row-major over index: the latest write wins
        for (int64_t j = 0; j < is[1]; ++j) {
          int64_t k = idx[i * is[1] + j];
          y[dim == 0 ? k * xs[1] + j : i * xs[1] + k] = src[i * is[1] + j];
        }
      return Tensors{tensor_from_bytes(y.data(), xs, DType::f32)};
    };
    s.run = [dim](const Tensors& in) { return Tensors{scatter(in[0], dim, in[1], in[2])}; };
    out.push_back(s);
  }
  // embedding and its backward: ids of shape [5, 7] into 11 rows of width 9; and a long id list
  // where each row collects thousands of contributions (the sum schedule matters).
  struct Emb {
    Shape ids;
    int64_t rows, width;
  };
  const Emb embs[] = {{{5, 7}, 11, 9}, {{20000}, 3, 4}, {{0}, 4, 3}};
  for (const Emb& e : embs) {
    const std::string label = "ids " + shape_str(e.ids) + " rows=" + std::to_string(e.rows) +
                              " width=" + std::to_string(e.width);
    OpCase f;
    f.op = "embedding";
    f.label = label;
    f.inputs = [e] {
      Shape gs = e.ids;
      gs.push_back(e.width);
      return Tensors{special_floats({e.rows, e.width}, 640),
                     i64_tensor(index_values(shape_numel(e.ids), e.rows, 641), e.ids),
                     // Specials would make the long sums NaN and hide their order.
                     plain_floats(gs, 642, 1.0f, e.rows == 3 ? 0 : 53)};
    };
    f.reference = [e](const Tensors& in) {
      std::vector<float> w = floats_of(in[0]), y;
      for (int64_t id : raw_vector<int64_t>(in[1]))
        y.insert(y.end(), w.begin() + id * e.width, w.begin() + (id + 1) * e.width);
      Shape os = e.ids;
      os.push_back(e.width);
      return Tensors{tensor_from_bytes(y.data(), os, DType::f32)};
    };
    f.run = [](const Tensors& in) { return Tensors{embedding(in[0], in[1])}; };
    out.push_back(f);
    OpCase b = f;
    b.op = "embedding_backward";
    auto reference = [e](const Tensors& in, bool sabotaged) {
      std::vector<float> g = floats_of(in[2]), y(static_cast<size_t>(e.rows * e.width), 0.0f);
      std::vector<int64_t> ids = raw_vector<int64_t>(in[1]);
      const int64_t n = static_cast<int64_t>(ids.size());
      embedding_backward_reference<int64_t>(g.data(), ids.data(), n, e.width, e.rows, y.data());
      if (sabotaged) {
        // Contributions accumulated left to right instead of the contract sum schedule.
        std::fill(y.begin(), y.end(), 0.0f);
        for (int64_t p = 0; p < n; ++p)
          for (int64_t d = 0; d < e.width; ++d)
            y[ids[p] * e.width + d] = add(y[ids[p] * e.width + d], g[p * e.width + d]);
        for (float& v : y) v = canonicalize(v);
      }
      return Tensors{f32_tensor(y, {e.rows, e.width})};
    };
    b.reference = [reference](const Tensors& in) { return reference(in, false); };
    b.run = [e](const Tensors& in) { return Tensors{embedding_backward(in[2], in[1], e.rows)}; };
    if (e.rows == 3) {
      b.sabotage_what = "left-to-right sum of the contributions";
      b.sabotage = [reference](const Tensors& in) { return reference(in, true); };
    }
    out.push_back(b);
  }
  // Sabotage of the pure copies: the index list read in reverse, as a kernel with a wrong
  // addressing would; caught by the comparison of copied elements.
  OpCase r = out.front();
  r.label += " (reversed-index sabotage)";
  r.sabotage_what = "indices read in reverse";
  auto ref = r.reference;
  r.sabotage = [ref](const Tensors& in) {
    Tensor idx = in[1].to(DType::i64);
    std::vector<int64_t> v = raw_vector<int64_t>(idx);
    std::reverse(v.begin(), v.end());
    return ref(Tensors{in[0], i64_tensor(v, idx.shape()).to(in[1].dtype())});
  };
  out.push_back(r);
  return out;
}

}  // namespace bl::conformance
