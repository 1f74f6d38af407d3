// test_index_ops.cpp: conformance of index_select, gather, scatter, embedding and embedding
// backward on the CPU against the references of src/kernels/index.h: i32 and i64 indices, several
// dims, strided operands, > 10^6 elements, threads 1, 2, 3. Independent checks of scatter's
// "last wins" rule and of the streaming schedule sum. Sabotage arms: embedding gradients summed
// in another order, scatter with "first wins", must be caught. Bad indices give named errors.
#include "conformance/ops_test_util.h"
#include "kernels/index.h"

namespace bl::conformance {
namespace {

std::vector<int64_t> random_indices(int64_t n, int64_t extent, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(extent));
  return v;
}

TEST(IndexConformance, IndexSelectMatchesReference) {
  ThreadCountGuard guard;
  Shape shape{13, 101, 17};
  Tensor x = Tensor::from_vector(conformance_floats(shape_numel(shape), 201), shape);
  for (int64_t dim = 0; dim < 3; ++dim) {
    int64_t extent = shape[dim];
    for (int64_t count : {int64_t(0), int64_t(1), int64_t(7), int64_t(257)}) {
      std::vector<int64_t> idx = random_indices(count, extent, 300 + count + dim);
      std::vector<int32_t> idx32(idx.begin(), idx.end());
      int64_t outer = 1, inner = 1;
      for (int64_t k = 0; k < dim; ++k) outer *= shape[k];
      for (int64_t k = dim + 1; k < 3; ++k) inner *= shape[k];
      std::vector<uint32_t> expected(static_cast<size_t>(outer * count * inner));
      ASSERT_EQ((index_select_reference<uint32_t, int64_t>(static_cast<const uint32_t*>(x.raw_data()),
                                                           outer, extent, inner, idx.data(), count,
                                                           expected.data())),
                -1);
      for (int threads : kThreadCounts) {
        set_num_threads(threads);
        Tensor g64 = index_select(x, dim, Tensor::from_vector(idx, {count}));
        Tensor g32 = index_select(x, dim - 3, Tensor::from_vector(idx32, {count}));
        ASSERT_TRUE(bits_equal(expected.data(), raw_vector<uint32_t>(g64).data(), expected.size(), 4,
                               "index_select i64 dim " + std::to_string(dim)));
        ASSERT_TRUE(bits_equal(expected.data(), raw_vector<uint32_t>(g32).data(), expected.size(), 4,
                               "index_select i32 dim " + std::to_string(dim)));
      }
    }
  }
}

TEST(IndexConformance, GatherMatchesReference) {
  ThreadCountGuard guard;
  Shape xs{37, 41, 29};
  Tensor x = Tensor::from_vector(conformance_floats(shape_numel(xs), 210), xs);
  Tensor xt = x.transpose(0, 2);  // [29, 41, 37], strided
  for (const Tensor& src : {x, xt}) {
    for (int64_t dim = 0; dim < 3; ++dim) {
      Shape is = src.shape();
      is[dim] = 53;  // more than the extent along dim is fine for gather
      is[(dim + 1) % 3] -= 3;
      int64_t n = shape_numel(is);
      Tensor idx = Tensor::from_vector(random_indices(n, src.dim(dim), 400 + dim), is);
      Shape xstr = src.strides();
      int64_t dim_stride = xstr[dim];
      xstr[dim] = 0;
      StridedView xv;
      xv.ndim = 3;
      for (int d = 0; d < 3; ++d) {
        xv.shape[d] = is[d];
        xv.strides[d] = xstr[d];
      }
      std::vector<uint32_t> expected(static_cast<size_t>(n));
      ASSERT_EQ((gather_reference<uint32_t, int64_t>(static_cast<const uint32_t*>(src.raw_data()), xv,
                                                     dim_stride, src.dim(dim), idx.data<int64_t>(),
                                                     reference_view(idx, is), expected.data(), n)),
                -1);
      for (int threads : kThreadCounts) {
        set_num_threads(threads);
        ASSERT_TRUE(bits_equal(expected.data(), raw_vector<uint32_t>(gather(src, dim, idx)).data(),
                               expected.size(), 4, "gather dim " + std::to_string(dim)));
        ASSERT_TRUE(bits_equal(expected.data(),
                               raw_vector<uint32_t>(gather(src, dim, cast(idx, DType::i32))).data(),
                               expected.size(), 4, "gather i32 dim " + std::to_string(dim)));
      }
    }
  }
}

// Reference scatter through the spec function, on a contiguous copy of x.
std::vector<uint32_t> scatter_expected(const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& src) {
  std::vector<uint32_t> out = raw_vector<uint32_t>(x);
  Shape os = contiguous_strides(x.shape());
  int64_t out_dim_stride = os[dim];
  os[dim] = 0;
  StridedView ov;
  ov.ndim = static_cast<int>(idx.ndim());
  for (int d = 0; d < ov.ndim; ++d) {
    ov.shape[d] = idx.shape()[d];
    ov.strides[d] = os[d];
  }
  EXPECT_EQ((scatter_reference<uint32_t, int64_t>(out.data(), ov, out_dim_stride, x.dim(dim),
                                                  idx.data<int64_t>(), reference_view(idx, idx.shape()),
                                                  static_cast<const uint32_t*>(src.raw_data()),
                                                  reference_view(src, src.shape()), idx.numel())),
            -1);
  return out;
}

TEST(IndexConformance, ScatterMatchesReferenceWithDuplicates) {
  ThreadCountGuard guard;
  Shape xs{23, 19, 11};
  Tensor x = Tensor::from_vector(conformance_floats(shape_numel(xs), 220), xs);
  for (int64_t dim = 0; dim < 3; ++dim) {
    Shape is = xs;
    is[dim] = 3 * xs[dim];  // many duplicates along dim
    int64_t n = shape_numel(is);
    Tensor idx = Tensor::from_vector(random_indices(n, xs[dim], 500 + dim), is);
    Tensor src = Tensor::from_vector(conformance_floats(n, 600 + dim), is);
    std::vector<uint32_t> expected = scatter_expected(x, dim, idx, src);
    for (int threads : kThreadCounts) {
      set_num_threads(threads);
      ASSERT_TRUE(bits_equal(expected.data(), raw_vector<uint32_t>(scatter(x, dim, idx, src)).data(),
                             expected.size(), 4, "scatter dim " + std::to_string(dim)));
      // Strided src and index (transposed twice keeps the logical shape).
      Tensor src_s = src.transpose(0, 2).contiguous().transpose(0, 2);
      Tensor idx_s = idx.transpose(0, 1).contiguous().transpose(0, 1);
      ASSERT_TRUE(bits_equal(expected.data(), raw_vector<uint32_t>(scatter(x, dim, idx_s, src_s)).data(),
                             expected.size(), 4, "scatter strided dim " + std::to_string(dim)));
    }
  }
}

// scatter_into writes through a view: the rows of a column slice of a wider buffer get scatter's
// bits and the columns outside the slice keep theirs; a broadcast view is refused before anything
// is written.
TEST(IndexConformance, ScatterIntoWritesThroughViews) {
  ThreadCountGuard guard;
  Tensor wide = Tensor::from_vector(conformance_floats(17 * 13, 230), {17, 13});
  const std::vector<uint32_t> before = raw_vector<uint32_t>(wide);
  Tensor view = wide.slice(1, 2, 11, 2);  // 17 x 5, column stride 2
  Tensor idx = Tensor::from_vector(random_indices(40 * 5, 17, 231), {40, 5});
  Tensor src = Tensor::from_vector(conformance_floats(40 * 5, 232), {40, 5});
  const std::vector<uint32_t> expected = scatter_expected(view, 0, idx, src);
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    Tensor buffer = Tensor::from_vector(wide.to_vector<float>(), {17, 13});
    Tensor target = buffer.slice(1, 2, 11, 2);
    scatter_into(target, 0, idx, src);
    ASSERT_TRUE(bits_equal(expected.data(), raw_vector<uint32_t>(target.contiguous()).data(), expected.size(), 4,
                           "scatter_into a column slice, threads " + std::to_string(threads)));
    const std::vector<uint32_t> after = raw_vector<uint32_t>(buffer);
    for (int64_t r = 0; r < 17; ++r)
      for (int64_t c = 0; c < 13; ++c)
        if (c < 2 || c >= 11 || (c - 2) % 2 != 0) ASSERT_EQ(after[r * 13 + c], before[r * 13 + c]) << r << "," << c;
  }
  Tensor row = Tensor::zeros({1, 4});
  Tensor broadcast = row.expand({3, 4});
  expect_error([&] { scatter_into(broadcast, 0, Tensor::from_vector(std::vector<int64_t>{2}, {1, 1}),
                                  Tensor::full({1, 1}, 7.0)); },
               "broadcast view");
  EXPECT_EQ(row.to_vector<float>(), std::vector<float>(4, 0.0f));
}

TEST(IndexConformance, ScatterLastWinsByRule) {
  // 1-d: three writes to position 2; the last in index order (value 30) must win.
  Tensor x = Tensor::zeros({4});
  Tensor idx = Tensor::from_vector(std::vector<int64_t>{2, 0, 2, 2}, {4});
  Tensor src = Tensor::from_vector(std::vector<float>{10, 5, 20, 30}, {4});
  EXPECT_EQ(scatter(x, 0, idx, src).to_vector<float>(), (std::vector<float>{5, 0, 30, 0}));
  // 2-d along dim 0: column-wise lines, later rows win.
  Tensor x2 = Tensor::zeros({2, 2});
  Tensor i2 = Tensor::from_vector(std::vector<int64_t>{1, 0, 1, 0}, {2, 2});
  Tensor s2 = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(scatter(x2, 0, i2, s2).to_vector<float>(), (std::vector<float>{0, 4, 3, 0}));
}

TEST(IndexConformance, StreamingScheduleSumEqualsReference) {
  // The stack-based streaming sum builds the same tree as fold_leaves for every leaf count.
  std::vector<float> x = conformance_floats(40 * kReduceLeaf + 123, 700, 1000.0f);
  for (auto& v : x)
    if (!is_finite(v)) v = 1.5f;
  std::vector<float> scratch(64);
  for (int64_t leaves = 0; leaves <= 40; ++leaves) {
    for (int64_t extra : {int64_t(0), int64_t(1), int64_t(123)}) {
      int64_t n = leaves * kReduceLeaf + extra;
      float expected = schedule_sum_reference(x.data(), n, scratch.data());
      ScheduleSumState s;
      schedule_sum_begin(s);
      for (int64_t i = 0; i < n; ++i) schedule_sum_add(s, x[i]);
      ASSERT_EQ(bits_of(expected), bits_of(schedule_sum_end(s))) << "n=" << n;
    }
  }
}

TEST(IndexConformance, EmbeddingMatchesIndexSelect) {
  ThreadCountGuard guard;
  Tensor w = Tensor::from_vector(conformance_floats(1000 * 64, 800), {1000, 64});
  Tensor ids = Tensor::from_vector(random_indices(3 * 5000, 1000, 801), {3, 5000});  // 960000 values
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    Tensor e = embedding(w, ids);
    ASSERT_EQ(e.shape(), (Shape{3, 5000, 64}));
    auto ev = raw_vector<uint32_t>(e);
    auto wv = raw_vector<uint32_t>(w);
    auto iv = ids.to_vector<int64_t>();
    for (size_t p = 0; p < iv.size(); p += 97)
      for (int64_t d = 0; d < 64; ++d) ASSERT_EQ(ev[p * 64 + d], wv[iv[p] * 64 + d]);
  }
}

void check_embedding_backward(int64_t rows, int64_t n, int64_t width, uint64_t seed, bool skewed) {
  std::vector<int64_t> ids = random_indices(n, rows, seed);
  if (skewed)
    for (int64_t p = 0; p < n; p += 2) ids[p] = 1;  // one row with > 10 leaves of contributions
  std::vector<float> grad = conformance_floats(n * width, seed + 1, 3.0f);
  std::vector<float> expected(static_cast<size_t>(rows * width));
  ASSERT_EQ(embedding_backward_reference<int64_t>(grad.data(), ids.data(), n, width, rows,
                                                  expected.data()),
            -1);
  Tensor gt = Tensor::from_vector(grad, {n, width});
  Tensor it = Tensor::from_vector(ids, {n});
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    ASSERT_TRUE(bits_equal(expected, embedding_backward(gt, it, rows).to_vector<float>(),
                           "embedding_backward rows=" + std::to_string(rows) + " n=" + std::to_string(n)));
    ASSERT_TRUE(bits_equal(expected,
                           embedding_backward(gt, cast(it, DType::i32), rows).to_vector<float>(),
                           "embedding_backward i32"));
  }
}

TEST(IndexConformance, EmbeddingBackwardMatchesReference) {
  ThreadCountGuard guard;
  check_embedding_backward(1, 0, 5, 900, false);
  check_embedding_backward(7, 1, 3, 901, false);
  check_embedding_backward(50, 4097, 7, 902, false);
  check_embedding_backward(3, 12289, 2, 903, false);      // every row > 1 leaf
  check_embedding_backward(1000, 90001, 16, 904, true);  // row 1: 45001 values = 11 leaves; > 10^6 grads
  check_embedding_backward(100003, 2000, 3, 905, false);  // most rows empty (+0)
  // Gradient with a leading shape: [2, 3, D].
  Tensor g = Tensor::from_vector(conformance_floats(2 * 3 * 4, 906), {2, 3, 4});
  Tensor ids = Tensor::from_vector(std::vector<int32_t>{0, 2, 0, 2, 2, 1}, {2, 3});
  Tensor out = embedding_backward(g, ids, 3);
  EXPECT_EQ(out.shape(), (Shape{3, 4}));
}

// ---- sabotage arms ----

TEST(IndexSabotage, EmbeddingGradientInAnotherOrderIsCaught) {
  // Summing each row's contributions left to right (no lanes, no tree) must be caught.
  int64_t rows = 4, n = 40000, width = 8;
  std::vector<int64_t> ids = random_indices(n, rows, 950);
  // Ordinary values (no huge specials that would swamp every order to the same inf).
  std::vector<float> grad = generate_floats(n * width, 951, 3.0f, 0);
  std::vector<float> expected(rows * width), sabotaged(rows * width, 0.0f);
  embedding_backward_reference<int64_t>(grad.data(), ids.data(), n, width, rows, expected.data());
  for (int64_t p = 0; p < n; ++p)
    for (int64_t d = 0; d < width; ++d)
      sabotaged[ids[p] * width + d] = add(sabotaged[ids[p] * width + d], grad[p * width + d]);
  EXPECT_FALSE(bits_equal(expected, sabotaged, "sabotage: sequential gradient sum"));
  // And the reverse position order (as a descending sort would give) is caught too.
  std::vector<int64_t> rev_ids(ids.rbegin(), ids.rend());
  std::vector<float> rev_grad(grad.size());
  for (int64_t p = 0; p < n; ++p)
    for (int64_t d = 0; d < width; ++d) rev_grad[p * width + d] = grad[(n - 1 - p) * width + d];
  std::vector<float> reversed(rows * width);
  embedding_backward_reference<int64_t>(rev_grad.data(), rev_ids.data(), n, width, rows, reversed.data());
  EXPECT_FALSE(bits_equal(expected, reversed, "sabotage: descending position order"));
}

TEST(IndexSabotage, ScatterFirstWinsIsCaught) {
  Tensor x = Tensor::zeros({64});
  std::vector<int64_t> idx = random_indices(1000, 64, 960);
  std::vector<float> src = conformance_floats(1000, 961);
  std::vector<float> first_wins(64, 0.0f);
  std::vector<bool> written(64, false);
  for (size_t p = 0; p < idx.size(); ++p)
    if (!written[idx[p]]) {
      first_wins[idx[p]] = src[p];
      written[idx[p]] = true;
    }
  Tensor got = scatter(x, 0, Tensor::from_vector(idx, {1000}), Tensor::from_vector(src, {1000}));
  EXPECT_FALSE(bits_equal(first_wins, got.to_vector<float>(), "sabotage: first wins"));
}

// ---- bad input ----

TEST(IndexErrors, NamedErrors) {
  Tensor x = Tensor::zeros({4, 5});
  Tensor bad = Tensor::from_vector(std::vector<int64_t>{0, 4}, {2});
  Tensor neg = Tensor::from_vector(std::vector<int64_t>{-1, 0}, {2});
  Tensor fidx = Tensor::zeros({2});
  expect_error([&] { index_select(x, 0, bad); }, "index_select");
  expect_error([&] { index_select(x, 0, neg); }, "outside [0, 4)");
  expect_error([&] { index_select(x, 0, fidx); }, "i32 or i64");
  expect_error([&] { index_select(x, 2, neg); }, "dimension 2");
  expect_error([&] { gather(x, 1, Tensor::from_vector(std::vector<int64_t>{5}, {1, 1})); }, "gather");
  expect_error([&] { gather(x, 1, Tensor::from_vector(std::vector<int64_t>{0}, {1})); }, "dimensions");
  expect_error([&] { scatter(x, 0, Tensor::from_vector(std::vector<int64_t>{9}, {1, 1}), Tensor::zeros({1, 1})); },
               "scatter");
  expect_error([&] { scatter(x, 0, Tensor::from_vector(std::vector<int64_t>{0}, {1, 1}), Tensor::zeros({1, 2})); },
               "shape of index");
  expect_error([&] { embedding(x, Tensor::from_vector(std::vector<int64_t>{4}, {1})); }, "embedding");
  expect_error([&] { embedding(Tensor::zeros({4}), bad); }, "2-d");
  expect_error([&] { embedding_backward(Tensor::zeros({2, 3}), bad, 4); }, "embedding_backward");
  expect_error([&] { embedding_backward(Tensor::zeros({3, 3}), bad, 5); }, "shape of ids");
  // Nothing is written when an index is bad: x is unchanged.
  EXPECT_EQ(x.to_vector<float>(), std::vector<float>(20, 0.0f));
}

}  // namespace
}  // namespace bl::conformance
