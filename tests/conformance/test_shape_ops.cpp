// test_shape_ops.cpp: conformance of copies (contiguous, copy_into, concat) on the CPU: the strided
// copy kernel against the reference (src/kernels/copy.h) over views (transpose, permute, slices
// with steps, expand), element sizes 1/4/8, lengths up to > 10^6, threads 1, 2, 3. Copies are
// bit-exact (NaN payloads survive). Sabotage arm: a copy in the wrong order must be caught.
#include "conformance/ops_test_util.h"
#include "kernels/copy.h"

namespace bl::conformance {
namespace {

// Reference copy of any view into a contiguous vector of T.
template <typename T>
std::vector<T> reference_copy(const Tensor& t) {
  int64_t n = t.numel();
  std::vector<T> out(static_cast<size_t>(n));
  if (n == 0) return out;
  const T* src = static_cast<const T*>(t.raw_data());
  strided_copy_reference<T>(src, reference_view(t, t.shape()), out.data(), identity_view(n), n);
  return out;
}

std::vector<Tensor> views_of(const Tensor& base4d) {
  // base4d is [a, b, c, d]
  return {base4d,
          base4d.transpose(0, 3),
          base4d.permute({2, 0, 3, 1}),
          base4d.slice(1, 1, base4d.dim(1), 2),
          base4d.slice(3, 0, base4d.dim(3), 3).transpose(1, 2),
          base4d.slice(0, 0, 1).expand({5, base4d.dim(1), base4d.dim(2), base4d.dim(3)}),
          base4d.slice(2, 2, 2)};  // empty
}

TEST(ShapeConformance, ContiguousCopyOfViews) {
  ThreadCountGuard guard;
  // [3, 67, 71, 73]: > 10^6 elements, prime extents.
  Shape shape{3, 67, 71, 73};
  int64_t n = shape_numel(shape);
  std::vector<float> f = conformance_floats(n, 61);
  f[5] = float_of(0xFFC00001u);  // a NaN payload a copy must keep
  Tensor tf = Tensor::from_vector(f, shape);
  Tensor ti = Tensor::arange(n, DType::i64).reshape(shape);
  Tensor tb = cast(Tensor::from_vector(f, shape), DType::u8);
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    for (const Tensor& v : views_of(tf)) {
      ASSERT_TRUE(bits_equal(reference_copy<uint32_t>(v).data(), raw_vector<uint32_t>(v).data(),
                             static_cast<size_t>(v.numel()), 4, "copy f32 " + v.str()));
    }
    for (const Tensor& v : views_of(ti))
      ASSERT_TRUE(bits_equal(reference_copy<uint64_t>(v).data(), raw_vector<uint64_t>(v).data(),
                             static_cast<size_t>(v.numel()), 8, "copy i64 " + v.str()));
    for (const Tensor& v : views_of(tb))
      ASSERT_TRUE(bits_equal(reference_copy<uint8_t>(v).data(), raw_vector<uint8_t>(v).data(),
                             static_cast<size_t>(v.numel()), 1, "copy u8 " + v.str()));
  }
  EXPECT_EQ(bits_of(tf.transpose(0, 3).contiguous().transpose(0, 3).contiguous().to_vector<float>()[5]),
            0xFFC00001u);
}

TEST(ShapeConformance, CopyIntoStridedDestination) {
  ThreadCountGuard guard;
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    Tensor dst = Tensor::zeros({97, 89});
    Tensor src = Tensor::from_vector(conformance_floats(89 * 97, 71), {89, 97});
    Tensor dt = dst.transpose(0, 1);  // [89, 97] strided
    copy_into(dt, src);
    ASSERT_TRUE(bits_equal(reference_copy<uint32_t>(src.transpose(0, 1)).data(),
                           raw_vector<uint32_t>(dst).data(), 97 * 89, 4, "copy_into transposed"));
    // Writing into every other column.
    Tensor dst2 = Tensor::zeros({10, 20});
    Tensor cols = dst2.slice(1, 0, 20, 2);
    copy_into(cols, Tensor::full({10, 10}, 1.0));
    auto v = dst2.to_vector<float>();
    for (int64_t i = 0; i < 200; ++i) ASSERT_EQ(v[i], (i % 2 == 0) ? 1.0f : 0.0f);
  }
}

TEST(ShapeConformance, ConcatMatchesReference) {
  ThreadCountGuard guard;
  std::vector<Shape> parts = {{3, 0, 5}, {3, 7, 5}, {3, 1, 5}, {3, 131, 5}};
  std::vector<Tensor> ts;
  uint64_t seed = 80;
  for (const Shape& s : parts) ts.push_back(Tensor::from_vector(conformance_floats(shape_numel(s), seed++), s));
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    Tensor c = concat(ts, 1);
    ASSERT_EQ(c.shape(), (Shape{3, 139, 5}));
    // Reference: element (i, j, k) comes from the part that holds j.
    auto got = raw_vector<uint32_t>(c);
    std::vector<uint32_t> expected;
    for (int64_t i = 0; i < 3; ++i)
      for (const Tensor& t : ts) {
        auto tv = raw_vector<uint32_t>(t);
        int64_t m = t.dim(1);
        for (int64_t j = 0; j < m; ++j)
          for (int64_t k = 0; k < 5; ++k) expected.push_back(tv[(i * m + j) * 5 + k]);
      }
    ASSERT_TRUE(bits_equal(expected.data(), got.data(), expected.size(), 4, "concat dim 1"));
    // Concat along the last dim of transposed (strided) inputs.
    Tensor a = ts[1].transpose(0, 2), b = ts[3].transpose(0, 2);  // [5, 7, 3], [5, 131, 3]
    Tensor d = concat({a, b}, -2);
    ASSERT_TRUE(bits_equal(raw_vector<uint32_t>(d.slice(1, 0, 7)).data(),
                           reference_copy<uint32_t>(a).data(), 5 * 7 * 3, 4, "concat strided a"));
    ASSERT_TRUE(bits_equal(raw_vector<uint32_t>(d.slice(1, 7, 138)).data(),
                           reference_copy<uint32_t>(b).data(), 5 * 131 * 3, 4, "concat strided b"));
  }
  // Large: two halves of a 10^6+ vector.
  Tensor big = Tensor::from_vector(conformance_floats(1000003, 90), {1000003});
  Tensor joined = concat({big.slice(0, 0, 500000), big.slice(0, 500000, 1000003)}, 0);
  ASSERT_TRUE(bits_equal(raw_vector<uint32_t>(big).data(), raw_vector<uint32_t>(joined).data(),
                         1000003, 4, "concat large"));
}

TEST(ShapeSabotage, WrongTraversalOrderIsCaught) {
  // A "copy" of a transposed view that walks the base in storage order is wrong and must differ.
  Tensor base = Tensor::from_vector(conformance_floats(31 * 37, 95), {31, 37});
  Tensor t = base.transpose(0, 1);
  auto expected = reference_copy<uint32_t>(t);
  auto sabotaged = raw_vector<uint32_t>(base);  // storage order instead of view order
  EXPECT_FALSE(bits_equal(expected.data(), sabotaged.data(), expected.size(), 4, "sabotage: order"));
  EXPECT_TRUE(bits_equal(expected.data(), raw_vector<uint32_t>(t).data(), expected.size(), 4, "copy"));
}

TEST(ShapeErrors, NamedErrors) {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({2, 4}), i = Tensor::zeros({2, 3}, DType::i32);
  expect_error([&] { concat({a, b}, 0); }, "concat");
  expect_error([&] { concat({a, i}, 0); }, "concat");
  expect_error([&] { concat({}, 0); }, "concat");
  expect_error([&] { concat({a, a}, 2); }, "dimension 2");
  expect_error([&] { Tensor d = a; copy_into(d, b); }, "copy_into");
  expect_error([&] { Tensor d = Tensor::zeros({3}).expand({2, 3}); copy_into(d, a); }, "broadcast");
  EXPECT_EQ(concat({a, b}, 1).shape(), (Shape{2, 7}));
}

}  // namespace
}  // namespace bl::conformance
