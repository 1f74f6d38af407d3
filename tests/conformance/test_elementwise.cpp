// test_elementwise.cpp: conformance of the elementwise ops on the CPU: every unary op, binary op,
// comparison, where and cast against the scalar reference (src/kernels/unary.h, binary.h, cast.h),
// memcmp over lengths 0 .. 10^6+3, special values, threads 1, 2, 3, strided and broadcast operands.
// Independent checks of floor/ceil/round and the cast rules; sabotage arms that must be caught.
#include <cmath>
#include <type_traits>

#include "conformance/ops_test_util.h"
#include "kernels/cast.h"

namespace bl::conformance {
namespace {

TEST(ElementwiseConformance, UnaryF32MatchesReference) {
  ThreadCountGuard guard;
  for (int64_t n : interesting_lengths()) {
    std::vector<float> x = conformance_floats(n, 1000 + static_cast<uint64_t>(n));
    Tensor xt = Tensor::from_vector(x, {n});
    for (int k = 0; k < kUnaryOpCount; ++k) {
      UnaryOp op = static_cast<UnaryOp>(k);
      // The 10^6 length runs for a few ops of each kind (a math function, bit ops, arithmetic),
      // to keep the suite quick on small machines; every op runs every other length.
      bool large_op = op == UnaryOp::exp || op == UnaryOp::neg || op == UnaryOp::round ||
                      op == UnaryOp::relu || op == UnaryOp::reciprocal;
      if (n > 100000 && !large_op) continue;
      std::vector<float> expected(static_cast<size_t>(n));
      unary_f32_reference(op, x.data(), identity_view(n), expected.data(), n);
      for (int threads : kThreadCounts) {
        set_num_threads(threads);
        std::vector<float> got = unary_tensor_fn(op)(xt).to_vector<float>();
        ASSERT_TRUE(bits_equal(expected, got,
                               std::string(unary_op_name(op)) + " n=" + std::to_string(n) +
                                   " threads=" + std::to_string(threads)));
      }
    }
  }
}

TEST(ElementwiseConformance, UnaryStridedInput) {
  ThreadCountGuard guard;
  // A transposed and a stepped slice: the kernel walks strides, the reference reads element-wise.
  std::vector<float> x = conformance_floats(257 * 131, 7);
  Tensor base = Tensor::from_vector(x, {257, 131});
  for (const Tensor& t : {base.transpose(0, 1), base.slice(1, 1, 131, 3), base.slice(0, 5, 200, 7)}) {
    StridedView v = reference_view(t, t.shape());
    int64_t n = t.numel();
    for (int k = 0; k < kUnaryOpCount; ++k) {
      UnaryOp op = static_cast<UnaryOp>(k);
      std::vector<float> expected(static_cast<size_t>(n));
      unary_f32_reference(op, t.data<float>(), v, expected.data(), n);
      for (int threads : kThreadCounts) {
        set_num_threads(threads);
        ASSERT_TRUE(bits_equal(expected, unary_tensor_fn(op)(t).to_vector<float>(),
                               std::string(unary_op_name(op)) + " strided " + t.str()));
      }
    }
  }
}

TEST(ElementwiseConformance, UnaryIntMatchesReference) {
  ThreadCountGuard guard;
  const UnaryOp int_ops[] = {UnaryOp::abs, UnaryOp::neg, UnaryOp::relu, UnaryOp::square, UnaryOp::sign};
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(97), int64_t(65537), int64_t(1000003)}) {
    test_rng::SplitMix64 rng(n + 5);
    std::vector<int32_t> a(static_cast<size_t>(n));
    std::vector<int64_t> b(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<int32_t>(rng.next());
      b[i] = static_cast<int64_t>(rng.next());
    }
    if (n > 2) {
      a[0] = INT32_MIN;
      b[0] = INT64_MIN;
      a[1] = 0;
    }
    for (UnaryOp op : int_ops) {
      std::vector<int32_t> ea(static_cast<size_t>(n));
      std::vector<int64_t> eb(static_cast<size_t>(n));
      unary_int_reference<int32_t, uint32_t>(op, a.data(), identity_view(n), ea.data(), n);
      unary_int_reference<int64_t, uint64_t>(op, b.data(), identity_view(n), eb.data(), n);
      for (int threads : kThreadCounts) {
        set_num_threads(threads);
        auto ga = unary_tensor_fn(op)(Tensor::from_vector(a, {n})).to_vector<int32_t>();
        auto gb = unary_tensor_fn(op)(Tensor::from_vector(b, {n})).to_vector<int64_t>();
        ASSERT_TRUE(bits_equal(ea.data(), ga.data(), ea.size(), 4, unary_op_name(op)));
        ASSERT_TRUE(bits_equal(eb.data(), gb.data(), eb.size(), 8, unary_op_name(op)));
      }
    }
  }
}

// floor / ceil / round by bit manipulation against the C library, on a sample of every 61st bit
// pattern plus the rounding edge cases (the test may use libm; the library may not).
TEST(ElementwiseConformance, FloorCeilRoundExact) {
  int64_t mismatches = 0;
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 61) {
    float x = float_of(static_cast<uint32_t>(u));
    float f = floor_bits(x), c = ceil_bits(x), r = round_bits(x);
    if (is_nan(x)) continue;  // NaN is canonicalized by unary_f32
    if (bits_of(f) != bits_of(std::floor(x)) || bits_of(c) != bits_of(std::ceil(x)) ||
        bits_of(r) != bits_of(std::nearbyint(x)))
      ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
  for (float x : {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 8388607.5f, 0.49999997f, -0.0f, 1e-45f,
                  -1e-45f, 3.5f, 4.5f, 0.99999994f, -0.99999994f}) {
    EXPECT_EQ(bits_of(round_bits(x)), bits_of(std::nearbyint(x))) << x;
    EXPECT_EQ(bits_of(floor_bits(x)), bits_of(std::floor(x))) << x;
    EXPECT_EQ(bits_of(ceil_bits(x)), bits_of(std::ceil(x))) << x;
  }
  EXPECT_EQ(bits_of(unary_f32(UnaryOp::floor, float_of(0xFFC00001u))), kCanonicalNanBits);
}

TEST(ElementwiseConformance, BinaryF32BroadcastMatchesReference) {
  ThreadCountGuard guard;
  struct Case {
    Shape a, b;
  };
  const Case cases[] = {{{0}, {0}},           {{1}, {1}},          {{1000003}, {1000003}},
                        {{4097}, {1}},        {{1}, {12289}},       {{31, 1}, {1, 33}},
                        {{7, 1, 97}, {255, 1}},  {{3, 4, 5}, {4, 1}},  {{1000}, {1000}},
                        {{2, 1, 3, 1}, {1, 5, 1, 7}}, {{}, {3, 3}}};
  uint64_t seed = 1;
  for (const Case& c : cases) {
    Tensor a = Tensor::from_vector(conformance_floats(shape_numel(c.a), seed++), c.a);
    Tensor b = Tensor::from_vector(conformance_floats(shape_numel(c.b), seed++), c.b);
    Shape out_shape = broadcast_shapes(c.a, c.b, "test");
    int64_t n = shape_numel(out_shape);
    StridedView va = reference_view(a, out_shape), vb = reference_view(b, out_shape);
    for (int k = 0; k < static_cast<int>(BinaryOp::count_); ++k) {
      BinaryOp op = static_cast<BinaryOp>(k);
      std::vector<float> expected(static_cast<size_t>(n));
      binary_f32_reference(op, a.data<float>(), va, b.data<float>(), vb, expected.data(), n);
      for (int threads : kThreadCounts) {
        set_num_threads(threads);
        Tensor got = binary_tensor_fn(op)(a, b);
        ASSERT_EQ(got.shape(), out_shape);
        ASSERT_TRUE(bits_equal(expected, got.to_vector<float>(),
                               std::string(binary_op_name(op)) + " " + shape_str(c.a) + " x " +
                                   shape_str(c.b) + " threads=" + std::to_string(threads)));
      }
      // The transposed operand (strided) gives the same as its contiguous copy.
      if (c.a.size() == 2 && c.a == c.b) {
        Tensor at = a.transpose(0, 1);
        ASSERT_TRUE(bits_equal(binary_tensor_fn(op)(at, b.transpose(0, 1)).to_vector<float>(),
                               binary_tensor_fn(op)(at.contiguous(), b.transpose(0, 1).contiguous())
                                   .to_vector<float>(),
                               "strided binary"));
      }
    }
  }
}

TEST(ElementwiseConformance, BinaryIntAndCompare) {
  ThreadCountGuard guard;
  for (int64_t n : {int64_t(0), int64_t(33), int64_t(65537), int64_t(1000003)}) {
    test_rng::SplitMix64 rng(n);
    std::vector<int32_t> a(n), b(n);
    std::vector<int64_t> c(n), d(n);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<int32_t>(rng.next() % 7) - 3;  // many ties for comparisons
      b[i] = static_cast<int32_t>(rng.next());
      c[i] = static_cast<int64_t>(rng.next());
      d[i] = static_cast<int64_t>(rng.next() % 5);
    }
    std::vector<float> fa = conformance_floats(n, 3), fb = conformance_floats(n, 4);
    for (int64_t i = 0; i < n; i += 5) fb[i] = fa[i];  // equal pairs
    for (int threads : kThreadCounts) {
      set_num_threads(threads);
      for (int k = 0; k < static_cast<int>(BinaryOp::count_); ++k) {
        BinaryOp op = static_cast<BinaryOp>(k);
        if (!binary_op_supports_int(op)) continue;
        std::vector<int32_t> e32(n);
        std::vector<int64_t> e64(n);
        binary_int_reference<int32_t, uint32_t>(op, a.data(), identity_view(n), b.data(),
                                                identity_view(n), e32.data(), n);
        binary_int_reference<int64_t, uint64_t>(op, c.data(), identity_view(n), d.data(),
                                                identity_view(n), e64.data(), n);
        auto g32 = binary_tensor_fn(op)(Tensor::from_vector(a, {n}), Tensor::from_vector(b, {n}))
                       .to_vector<int32_t>();
        auto g64 = binary_tensor_fn(op)(Tensor::from_vector(c, {n}), Tensor::from_vector(d, {n}))
                       .to_vector<int64_t>();
        ASSERT_TRUE(bits_equal(e32.data(), g32.data(), n, 4, binary_op_name(op)));
        ASSERT_TRUE(bits_equal(e64.data(), g64.data(), n, 8, binary_op_name(op)));
      }
      for (int k = 0; k < static_cast<int>(CompareOp::count_); ++k) {
        CompareOp op = static_cast<CompareOp>(k);
        std::vector<uint8_t> ef(n), ei(n);
        compare_reference<float>(op, fa.data(), identity_view(n), fb.data(), identity_view(n),
                                 ef.data(), n);
        compare_reference<int32_t>(op, a.data(), identity_view(n), b.data(), identity_view(n),
                                   ei.data(), n);
        Tensor gf = compare_tensor_fn(op)(Tensor::from_vector(fa, {n}), Tensor::from_vector(fb, {n}));
        ASSERT_EQ(gf.dtype(), DType::boolean);
        auto gfv = gf.to_vector<uint8_t>();
        auto giv = compare_tensor_fn(op)(Tensor::from_vector(a, {n}), Tensor::from_vector(b, {n}))
                       .to_vector<uint8_t>();
        ASSERT_TRUE(bits_equal(ef.data(), gfv.data(), n, 1, compare_op_name(op)));
        ASSERT_TRUE(bits_equal(ei.data(), giv.data(), n, 1, compare_op_name(op)));
      }
    }
  }
}

TEST(ElementwiseConformance, WhereAndLogicalNot) {
  ThreadCountGuard guard;
  int64_t rows = 1001, cols = 1009;  // > 10^6 elements
  std::vector<float> a = conformance_floats(rows * cols, 11);
  std::vector<float> b = conformance_floats(cols, 12);
  std::vector<uint8_t> c(rows);
  for (int64_t i = 0; i < rows; ++i) c[i] = (i * 7 % 3) == 0;
  Tensor at = Tensor::from_vector(a, {rows, cols});
  Tensor bt = Tensor::from_vector(b, {cols});
  Tensor ct = Tensor::from_vector(c, {rows, 1}, DType::boolean);
  Shape shape{rows, cols};
  std::vector<float> expected(rows * cols);
  where_reference<float>(c.data(), reference_view(ct, shape), a.data(), reference_view(at, shape),
                         b.data(), reference_view(bt, shape), expected.data(), rows * cols);
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    ASSERT_TRUE(bits_equal(expected, where(ct, at, bt).to_vector<float>(), "where"));
    auto nc = logical_not(ct).to_vector<uint8_t>();
    for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(nc[i], c[i] ? 0 : 1);
  }
  EXPECT_EQ(logical_not(Tensor::from_vector(std::vector<float>{0.0f, -0.0f, 2.0f}, {3}))
                .to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 1, 0}));
}

template <typename From, typename To>
void check_cast(DType from, DType to, const std::vector<From>& values, bool to_bool) {
  int64_t n = static_cast<int64_t>(values.size());
  std::vector<To> expected(n);
  cast_reference<From, To>(values.data(), identity_view(n), expected.data(), n, to_bool);
  Tensor x;
  if constexpr (std::is_same<From, uint8_t>::value)
    x = Tensor::from_vector(values, {n}, from);
  else
    x = Tensor::from_vector(values, {n});
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    Tensor y = cast(x, to);
    ASSERT_EQ(y.dtype(), to);
    std::vector<To> got(n);
    if (n) std::memcpy(got.data(), y.contiguous().raw_data(), n * sizeof(To));
    ASSERT_TRUE(bits_equal(expected.data(), got.data(), n, sizeof(To),
                           std::string("cast ") + dtype_name(from) + "->" + dtype_name(to)));
  }
}

TEST(ElementwiseConformance, CastAllPairs) {
  ThreadCountGuard guard;
  int64_t n = 1000003;
  std::vector<float> f = conformance_floats(n, 21, 3e9f);
  std::vector<int32_t> i32(n);
  std::vector<int64_t> i64(n);
  std::vector<uint8_t> u8(n), bo(n);
  test_rng::SplitMix64 rng(22);
  for (int64_t i = 0; i < n; ++i) {
    i32[i] = static_cast<int32_t>(rng.next());
    i64[i] = static_cast<int64_t>(rng.next()) >> (rng.next() % 60);
    u8[i] = static_cast<uint8_t>(rng.next());
    bo[i] = rng.next() & 1;
  }
  check_cast<float, float>(DType::f32, DType::f32, f, false);
  check_cast<float, int32_t>(DType::f32, DType::i32, f, false);
  check_cast<float, int64_t>(DType::f32, DType::i64, f, false);
  check_cast<float, uint8_t>(DType::f32, DType::u8, f, false);
  check_cast<float, uint8_t>(DType::f32, DType::boolean, f, true);
  check_cast<int32_t, float>(DType::i32, DType::f32, i32, false);
  check_cast<int32_t, int64_t>(DType::i32, DType::i64, i32, false);
  check_cast<int32_t, uint8_t>(DType::i32, DType::u8, i32, false);
  check_cast<int32_t, uint8_t>(DType::i32, DType::boolean, i32, true);
  check_cast<int64_t, float>(DType::i64, DType::f32, i64, false);
  check_cast<int64_t, int32_t>(DType::i64, DType::i32, i64, false);
  check_cast<int64_t, uint8_t>(DType::i64, DType::u8, i64, false);
  check_cast<int64_t, uint8_t>(DType::i64, DType::boolean, i64, true);
  check_cast<uint8_t, float>(DType::u8, DType::f32, u8, false);
  check_cast<uint8_t, int32_t>(DType::u8, DType::i32, u8, false);
  check_cast<uint8_t, int64_t>(DType::u8, DType::i64, u8, false);
  check_cast<uint8_t, uint8_t>(DType::u8, DType::boolean, u8, true);
  check_cast<uint8_t, float>(DType::boolean, DType::f32, bo, false);
  check_cast<uint8_t, int64_t>(DType::boolean, DType::i64, bo, false);
  check_cast<uint8_t, uint8_t>(DType::boolean, DType::u8, bo, false);
}

// The documented cast rules, value by value (independent of the reference).
TEST(ElementwiseConformance, CastRules) {
  Tensor f = Tensor::from_vector(std::vector<float>{2.9f, -2.9f, -0.5f, float_of(0x7FC00000u),
                                                    3e9f, -3e9f, float_of(0x7F800000u), -0.0f},
                                 {8});
  EXPECT_EQ(cast(f, DType::i32).to_vector<int32_t>(),
            (std::vector<int32_t>{2, -2, 0, 0, INT32_MAX, INT32_MIN, INT32_MAX, 0}));
  EXPECT_EQ(cast(f, DType::u8).to_vector<uint8_t>(),
            (std::vector<uint8_t>{2, 0, 0, 0, 255, 0, 255, 0}));
  EXPECT_EQ(cast(f, DType::boolean).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 0}));
  Tensor big = Tensor::from_vector(std::vector<int64_t>{16777217, 16777219, INT64_MAX, -300}, {4});
  EXPECT_EQ(cast(big, DType::f32).to_vector<float>(),
            (std::vector<float>{16777216.0f, 16777220.0f, 9223372036854775808.0f, -300.0f}));
  EXPECT_EQ(cast(big, DType::i32).to_vector<int32_t>()[3], -300);
  EXPECT_EQ(cast(big, DType::u8).to_vector<uint8_t>()[3], 212);  // -300 mod 256
}

// Every NaN an op stores is canonical: NaN payloads and signs in, 0x7FC00000 out.
TEST(ElementwiseConformance, NaNOutputsAreCanonical) {
  std::vector<float> x = {float_of(0xFFC00001u), float_of(0x7FA00000u), -1.0f, float_of(0xFF800000u)};
  Tensor xt = Tensor::from_vector(x, {4});
  for (int k = 0; k < kUnaryOpCount; ++k) {
    for (float v : unary_tensor_fn(static_cast<UnaryOp>(k))(xt).to_vector<float>())
      if (is_nan(v)) EXPECT_EQ(bits_of(v), kCanonicalNanBits) << unary_op_name(static_cast<UnaryOp>(k));
  }
  for (int k = 0; k < static_cast<int>(BinaryOp::count_); ++k) {
    for (float v : binary_tensor_fn(static_cast<BinaryOp>(k))(xt, xt.slice(0, 0, 1)).to_vector<float>())
      if (is_nan(v)) EXPECT_EQ(bits_of(v), kCanonicalNanBits) << binary_op_name(static_cast<BinaryOp>(k));
  }
}

// ---- sabotage arms: deliberately altered variants that the same comparison must reject ----

TEST(ElementwiseSabotage, MissingCanonicalizationIsCaught) {
  // neg without canonicalization flips the NaN's sign bit instead of storing 0x7FC00000.
  std::vector<float> x = conformance_floats(4097, 31);
  std::vector<float> expected(x.size()), sabotaged(x.size());
  unary_f32_reference(UnaryOp::neg, x.data(), identity_view(4097), expected.data(), 4097);
  for (size_t i = 0; i < x.size(); ++i) sabotaged[i] = neg(x[i]);
  EXPECT_FALSE(bits_equal(expected, sabotaged, "sabotage: neg without canonicalize"));
  EXPECT_TRUE(bits_equal(expected, bl::neg(Tensor::from_vector(x, {4097})).to_vector<float>(), "neg"));
}

TEST(ElementwiseSabotage, LibraryMaxSemanticsAreCaught) {
  // a > b ? a : b (the usual library max) differs from bl::max on NaN and signed zeros.
  std::vector<float> a = conformance_floats(4097, 41), b = conformance_floats(4097, 42);
  for (size_t i = 0; i < a.size(); i += 13) {
    a[i] = -0.0f;
    b[i] = 0.0f;
  }
  std::vector<float> expected(a.size()), sabotaged(a.size());
  binary_f32_reference(BinaryOp::maximum, a.data(), identity_view(4097), b.data(),
                       identity_view(4097), expected.data(), 4097);
  for (size_t i = 0; i < a.size(); ++i) sabotaged[i] = a[i] > b[i] ? a[i] : b[i];
  EXPECT_FALSE(bits_equal(expected, sabotaged, "sabotage: library max"));
}

TEST(ElementwiseSabotage, CastWithoutSaturationIsCaught) {
  // float -> i32 through i64 then a wrapping narrow gives other bits than the saturating rule.
  std::vector<float> x = conformance_floats(4097, 51, 1e10f);
  std::vector<int32_t> expected(x.size()), sabotaged(x.size());
  cast_reference<float, int32_t>(x.data(), identity_view(4097), expected.data(), 4097, false);
  for (size_t i = 0; i < x.size(); ++i)
    sabotaged[i] = is_nan(x[i]) ? 0 : static_cast<int32_t>(CastValue<float, int64_t>::apply(x[i]));
  EXPECT_FALSE(bits_equal(expected.data(), sabotaged.data(), x.size(), 4, "sabotage: cast wrap"));
}

// ---- bad input ----

TEST(ElementwiseErrors, NamedErrors) {
  Tensor f = Tensor::zeros({2, 3});
  Tensor i = Tensor::zeros({2, 3}, DType::i32);
  expect_error([&] { add(f, i); }, "add");
  expect_error([&] { add(f, Tensor::zeros({4})); }, "do not broadcast");
  expect_error([&] { bl::exp(i); }, "exp");
  expect_error([&] { div(i, i); }, "div");
  expect_error([&] { where(f, f, f); }, "cond");
  expect_error([&] { add(f, Tensor()); }, "undefined");
  expect_error([&] { bl::neg(Tensor::zeros({2}, DType::boolean)); }, "neg");
  if (!cuda_available())
    expect_error([&] { Tensor::zeros({2}, DType::f32, Device::cuda(0)); }, "CUDA");
}

}  // namespace
}  // namespace bl::conformance
