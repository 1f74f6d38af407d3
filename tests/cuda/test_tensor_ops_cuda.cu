// test_tensor_ops_cuda.cu: conformance of the Tensor ops on CUDA: every elementwise op, cast,
// strided copy, concat, index_select, gather, scatter, embedding and embedding backward, compared
// bit for bit (memcmp) with the CPU reference under every LaunchConfig of kConformanceLaunchConfigs,
// with special values, broadcasting, strided operands and > 10^6 elements. Sabotage arm: an
// embedding-gradient sum with another leaf size must differ. Skips when no GPU is present.
#include <chrono>
#include <cstdio>

#include "conformance/ops_test_util.h"
#include "kernels/cast.h"
#include "kernels/copy.h"
#include "kernels/index.h"
#include "ops/op_util.h"

namespace bl::conformance {
namespace {

#define BL_REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device"

const Device kGpu = Device::cuda(0);

template <typename T>
std::vector<T> host_bytes(const Tensor& t) {
  Tensor h = t.to(Device::cpu());
  std::vector<T> out(static_cast<size_t>(h.numel()));
  if (!out.empty()) std::memcpy(out.data(), h.raw_data(), out.size() * sizeof(T));
  return out;
}

std::string cfg_str(const LaunchConfig& c) {
  return "cfg{" + std::to_string(c.block) + "," + std::to_string(c.grid_cap) + "," +
         std::to_string(c.variant) + "}";
}

TEST(TensorOpsCuda, UnaryMatchesReference) {
  BL_REQUIRE_GPU();
  for (int64_t n : interesting_lengths()) {
    std::vector<float> x = conformance_floats(n, 1000 + static_cast<uint64_t>(n));
    Tensor xg = Tensor::from_vector(x, {n}, kGpu);
    for (int k = 0; k < kUnaryOpCount; ++k) {
      UnaryOp op = static_cast<UnaryOp>(k);
      std::vector<float> expected(static_cast<size_t>(n));
      unary_f32_reference(op, x.data(), identity_view(n), expected.data(), n);
      for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
        ScopedLaunchConfig scoped(cfg);
        ASSERT_TRUE(bits_equal(expected, host_bytes<float>(unary_tensor_fn(op)(xg)),
                               std::string(unary_op_name(op)) + " n=" + std::to_string(n) + " " +
                                   cfg_str(cfg)));
      }
    }
  }
  // Strided input on the device.
  std::vector<float> x = conformance_floats(257 * 131, 7);
  Tensor base = Tensor::from_vector(x, {257, 131});
  Tensor t = base.transpose(0, 1);
  Tensor tg = Tensor::from_vector(x, {257, 131}, kGpu).transpose(0, 1);
  for (int k = 0; k < kUnaryOpCount; ++k) {
    UnaryOp op = static_cast<UnaryOp>(k);
    std::vector<float> expected(static_cast<size_t>(t.numel()));
    unary_f32_reference(op, t.data<float>(), reference_view(t, t.shape()), expected.data(), t.numel());
    for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
      ScopedLaunchConfig scoped(cfg);
      ASSERT_TRUE(bits_equal(expected, host_bytes<float>(unary_tensor_fn(op)(tg)),
                             std::string(unary_op_name(op)) + " strided " + cfg_str(cfg)));
    }
  }
}

TEST(TensorOpsCuda, BinaryCompareWhereMatchReference) {
  BL_REQUIRE_GPU();
  struct Case {
    Shape a, b;
  };
  const Case cases[] = {{{0}, {0}},          {{1}, {1}},         {{1000003}, {1000003}},
                        {{4097}, {1}},       {{31, 1}, {1, 33}}, {{7, 1, 97}, {255, 1}},
                        {{2, 1, 3, 1}, {1, 5, 1, 7}}, {{}, {3, 3}}};
  uint64_t seed = 1;
  for (const Case& c : cases) {
    std::vector<float> av = conformance_floats(shape_numel(c.a), seed++);
    std::vector<float> bv = conformance_floats(shape_numel(c.b), seed++);
    Tensor a = Tensor::from_vector(av, c.a), b = Tensor::from_vector(bv, c.b);
    Tensor ag = a.to(kGpu), bg = b.to(kGpu);
    Shape out_shape = broadcast_shapes(c.a, c.b, "test");
    int64_t n = shape_numel(out_shape);
    StridedView va = reference_view(a, out_shape), vb = reference_view(b, out_shape);
    for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
      ScopedLaunchConfig scoped(cfg);
      for (int k = 0; k < static_cast<int>(BinaryOp::count_); ++k) {
        BinaryOp op = static_cast<BinaryOp>(k);
        std::vector<float> expected(static_cast<size_t>(n));
        binary_f32_reference(op, av.data(), va, bv.data(), vb, expected.data(), n);
        ASSERT_TRUE(bits_equal(expected, host_bytes<float>(binary_tensor_fn(op)(ag, bg)),
                               std::string(binary_op_name(op)) + " " + shape_str(c.a) + "x" +
                                   shape_str(c.b) + " " + cfg_str(cfg)));
      }
      for (int k = 0; k < static_cast<int>(CompareOp::count_); ++k) {
        CompareOp op = static_cast<CompareOp>(k);
        std::vector<uint8_t> expected(static_cast<size_t>(n));
        compare_reference<float>(op, av.data(), va, bv.data(), vb, expected.data(), n);
        auto got = host_bytes<uint8_t>(compare_tensor_fn(op)(ag, bg));
        ASSERT_TRUE(bits_equal(expected.data(), got.data(), n, 1, compare_op_name(op)));
      }
      Tensor cond = gt(ag, bg);
      std::vector<float> expected(static_cast<size_t>(n));
      auto cv = host_bytes<uint8_t>(cond);
      where_reference<float>(cv.data(), identity_view(n), av.data(), va, bv.data(), vb,
                             expected.data(), n);
      ASSERT_TRUE(bits_equal(expected, host_bytes<float>(where(cond, ag, bg)), "where " + cfg_str(cfg)));
    }
  }
  // Integer arithmetic.
  int64_t n = 65537;
  test_rng::SplitMix64 rng(5);
  std::vector<int64_t> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<int64_t>(rng.next());
    b[i] = static_cast<int64_t>(rng.next() % 9) - 4;
  }
  for (int k = 0; k < static_cast<int>(BinaryOp::count_); ++k) {
    BinaryOp op = static_cast<BinaryOp>(k);
    if (!binary_op_supports_int(op)) continue;
    std::vector<int64_t> expected(n);
    binary_int_reference<int64_t, uint64_t>(op, a.data(), identity_view(n), b.data(), identity_view(n),
                                            expected.data(), n);
    auto got = host_bytes<int64_t>(
        binary_tensor_fn(op)(Tensor::from_vector(a, {n}, kGpu), Tensor::from_vector(b, {n}, kGpu)));
    ASSERT_TRUE(bits_equal(expected.data(), got.data(), n, 8, binary_op_name(op)));
  }
}

TEST(TensorOpsCuda, CastMatchesCpu) {
  BL_REQUIRE_GPU();
  int64_t n = 1000003;
  Tensor f = Tensor::from_vector(conformance_floats(n, 21, 3e9f), {n});
  test_rng::SplitMix64 rng(22);
  std::vector<int64_t> iv(n);
  for (auto& v : iv) v = static_cast<int64_t>(rng.next()) >> (rng.next() % 60);
  Tensor i = Tensor::from_vector(iv, {n});
  const DType all[] = {DType::f32, DType::i32, DType::i64, DType::u8, DType::boolean};
  for (const Tensor& src : {f, i, cast(i, DType::i32), cast(f, DType::u8), cast(f, DType::boolean)}) {
    Tensor g = src.to(kGpu);
    for (DType to : all) {
      Tensor expected = cast(src, to);  // CPU path, itself checked against the reference
      for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
        ScopedLaunchConfig scoped(cfg);
        auto e = host_bytes<uint8_t>(expected);
        auto got = host_bytes<uint8_t>(cast(g, to));
        ASSERT_TRUE(bits_equal(e.data(), got.data(), e.size(), 1,
                               std::string("cast ") + dtype_name(src.dtype()) + "->" + dtype_name(to)));
      }
    }
  }
}

TEST(TensorOpsCuda, CopiesAndConcatMatchReference) {
  BL_REQUIRE_GPU();
  Shape shape{3, 67, 71, 73};
  int64_t n = shape_numel(shape);
  std::vector<float> x = conformance_floats(n, 61);
  x[5] = float_of(0xFFC00001u);
  Tensor c = Tensor::from_vector(x, shape);
  Tensor g = c.to(kGpu);
  auto views = [](const Tensor& t) {
    return std::vector<Tensor>{t.transpose(0, 3), t.permute({2, 0, 3, 1}), t.slice(1, 1, 67, 2),
                               t.slice(3, 0, 73, 3).transpose(1, 2),
                               t.slice(0, 0, 1).expand({5, 67, 71, 73}),
                               // transposed reads (the tiled path): batched, 2-D, sliced
                               t.transpose(2, 3), t.reshape({201, 5183}).transpose(0, 1),
                               t.slice(2, 3, 70).transpose(1, 2)};
  };
  auto cv = views(c), gv = views(g);
  for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
    ScopedLaunchConfig scoped(cfg);
    for (size_t k = 0; k < cv.size(); ++k) {
      std::vector<uint32_t> expected(static_cast<size_t>(cv[k].numel()));
      strided_copy_reference<uint32_t>(static_cast<const uint32_t*>(cv[k].raw_data()),
                                       reference_view(cv[k], cv[k].shape()), expected.data(),
                                       identity_view(cv[k].numel()), cv[k].numel());
      auto got = host_bytes<uint32_t>(gv[k].contiguous());
      ASSERT_TRUE(bits_equal(expected.data(), got.data(), expected.size(), 4,
                             "copy " + cv[k].str() + " " + cfg_str(cfg)));
    }
    Tensor cc = concat({c.slice(1, 0, 10), c.slice(1, 20, 67)}, 1);
    Tensor gc = concat({g.slice(1, 0, 10), g.slice(1, 20, 67)}, 1);
    auto e = host_bytes<uint32_t>(cc), a = host_bytes<uint32_t>(gc);
    ASSERT_TRUE(bits_equal(e.data(), a.data(), e.size(), 4, "concat " + cfg_str(cfg)));
  }
}

TEST(TensorOpsCuda, IndexOpsMatchCpu) {
  BL_REQUIRE_GPU();
  Shape xs{37, 41, 29};
  Tensor x = Tensor::from_vector(conformance_floats(shape_numel(xs), 210), xs);
  Tensor xg = x.to(kGpu);
  test_rng::SplitMix64 rng(77);
  auto rand_idx = [&](const Shape& s, int64_t extent) {
    std::vector<int64_t> v(static_cast<size_t>(shape_numel(s)));
    for (auto& e : v) e = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(extent));
    return Tensor::from_vector(v, s);
  };
  for (int64_t dim = 0; dim < 3; ++dim) {
    Tensor sel = rand_idx({101}, xs[dim]);
    Shape is = xs;
    is[dim] = 3 * xs[dim];
    Tensor idx = rand_idx(is, xs[dim]);
    Tensor src = Tensor::from_vector(conformance_floats(shape_numel(is), 300 + dim), is);
    // CPU results are checked against the references in tests/conformance/test_index_ops.cpp.
    auto e_sel = host_bytes<uint32_t>(index_select(x, dim, sel));
    auto e_gat = host_bytes<uint32_t>(gather(x, dim, idx));
    auto e_sca = host_bytes<uint32_t>(scatter(x, dim, idx, src));
    for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
      ScopedLaunchConfig scoped(cfg);
      auto g_sel = host_bytes<uint32_t>(index_select(xg, dim, sel.to(kGpu)));
      auto g_gat = host_bytes<uint32_t>(gather(xg, dim, idx.to(kGpu)));
      auto g_sca = host_bytes<uint32_t>(scatter(xg, dim, idx.to(kGpu), src.to(kGpu)));
      ASSERT_TRUE(bits_equal(e_sel.data(), g_sel.data(), e_sel.size(), 4, "index_select " + cfg_str(cfg)));
      ASSERT_TRUE(bits_equal(e_gat.data(), g_gat.data(), e_gat.size(), 4, "gather " + cfg_str(cfg)));
      ASSERT_TRUE(bits_equal(e_sca.data(), g_sca.data(), e_sca.size(), 4, "scatter " + cfg_str(cfg)));
    }
  }
  // Bad indices are reported, as on the CPU.
  EXPECT_THROW(index_select(xg, 0, Tensor::from_vector(std::vector<int64_t>{0, 37}, {2}, kGpu)), Error);
  EXPECT_THROW(gather(xg, 1, Tensor::from_vector(std::vector<int64_t>{-1}, {1, 1, 1}, kGpu)), Error);
  EXPECT_THROW(embedding_backward(Tensor::zeros({2, 3}, DType::f32, kGpu),
                                  Tensor::from_vector(std::vector<int64_t>{0, 9}, {2}, kGpu), 4),
               Error);
}

TEST(TensorOpsCuda, EmbeddingBackwardMatchesReference) {
  BL_REQUIRE_GPU();
  struct Case {
    int64_t rows, n, width;
    bool skewed;
  };
  for (const Case& c : {Case{7, 1, 3, false}, Case{50, 4097, 7, false}, Case{3, 12289, 2, false},
                        Case{1000, 90001, 16, true}, Case{100003, 2000, 3, false}}) {
    test_rng::SplitMix64 rng(c.n);
    std::vector<int64_t> ids(static_cast<size_t>(c.n));
    for (auto& v : ids) v = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(c.rows));
    if (c.skewed)
      for (int64_t p = 0; p < c.n; p += 2) ids[p] = 1;
    std::vector<float> grad = conformance_floats(c.n * c.width, c.n + 1, 3.0f);
    std::vector<float> expected(static_cast<size_t>(c.rows * c.width));
    ASSERT_EQ(embedding_backward_reference<int64_t>(grad.data(), ids.data(), c.n, c.width, c.rows,
                                                    expected.data()),
              -1);
    Tensor gg = Tensor::from_vector(grad, {c.n, c.width}, kGpu);
    Tensor ig = Tensor::from_vector(ids, {c.n}, kGpu);
    for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
      ScopedLaunchConfig scoped(cfg);
      ASSERT_TRUE(bits_equal(expected, host_bytes<float>(embedding_backward(gg, ig, c.rows)),
                             "embedding_backward rows=" + std::to_string(c.rows) + " " + cfg_str(cfg)));
    }
    // Sabotage arm: on finite gradients (special values would make every column NaN or inf either
    // way), summing a row's contributions with 1024-value leaves instead of the contract's 4096 must
    // give different bits than the GPU result in some column of a row with > 1024 contributions.
    if (c.skewed) {
      std::vector<float> finite(static_cast<size_t>(c.n * c.width));
      test_rng::SplitMix64 frng(c.n + 7);
      for (auto& v : finite) v = frng.uniform_pm1() * 3.0f;
      std::vector<float> got =
          host_bytes<float>(embedding_backward(Tensor::from_vector(finite, {c.n, c.width}, kGpu), ig, c.rows));
      int differing = 0;
      for (int64_t j = 0; j < c.width; ++j) {
        std::vector<float> vals;
        for (int64_t p = 0; p < c.n; ++p)
          if (ids[p] == 1) vals.push_back(finite[p * c.width + j]);
        std::vector<float> leaves;
        for (size_t b = 0; b < vals.size(); b += 1024)
          leaves.push_back(reference_leaf_sum(vals.data() + b, std::min<size_t>(1024, vals.size() - b)));
        float alt = fold_leaves(leaves.data(), static_cast<int64_t>(leaves.size()));
        if (bits_of(alt) != bits_of(got[1 * c.width + j])) ++differing;
      }
      EXPECT_GT(differing, 0) << "sabotage: another leaf size was not caught";
    }
  }
}

// Throughput of a large add and a strided copy (printed for the GPU report; never fails).
TEST(TensorOpsCuda, BandwidthReport) {
  BL_REQUIRE_GPU();
  int64_t n = int64_t(1) << 26;
  Tensor a = Tensor::full({n}, 1.5, DType::f32, kGpu), b = Tensor::full({n}, 2.5, DType::f32, kGpu);
  add(a, b);  // warm up
  auto t0 = std::chrono::steady_clock::now();
  const int reps = 20;
  for (int r = 0; r < reps; ++r) add(a, b);
  cudaDeviceSynchronize();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  std::printf("BANDWIDTH add f32 n=%lld: %.1f GB/s (%.3f ms)\n", static_cast<long long>(n),
              3.0 * 4.0 * n / s / 1e9, s * 1e3);
  Tensor m = a.reshape({8192, 8192});
  m.transpose(0, 1).contiguous();
  t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) m.transpose(0, 1).contiguous();
  cudaDeviceSynchronize();
  s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  std::printf("BANDWIDTH transpose-copy 8192x8192 f32: %.1f GB/s (%.3f ms)\n", 2.0 * 4.0 * n / s / 1e9,
              s * 1e3);
  t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) bl::exp(a);
  cudaDeviceSynchronize();
  s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  std::printf("BANDWIDTH exp f32 n=%lld: %.1f GB/s (%.3f ms)\n", static_cast<long long>(n),
              2.0 * 4.0 * n / s / 1e9, s * 1e3);
}

}  // namespace
}  // namespace bl::conformance
