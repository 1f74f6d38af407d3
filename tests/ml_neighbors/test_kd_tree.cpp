// test_kd_tree.cpp: the kd-tree search (ml/neighbors/kd_tree.h) gives the brute force's bits. Over
// many shapes (1 to 20 features, n = 1, n below and above leaf_size, 20000 rows, two GEMM
// k-leaves), k values, leaf sizes and data styles (plain normals, a coarse grid with duplicates and
// exact ties, huge values whose squares overflow, tiny values whose squares underflow, rows far
// from the origin whose computed distances carry large cancellation errors, identical rows, mixed
// feature scales) the neighbor indices and squared distances memcmp-equal nearest_rows_cpu's, at
// threads 1, 2 and 3, with the AVX2 and the scalar leaf scans. Sabotage arms: pruning on the box distance alone (no rounding margin) loses
// neighbors on the far-from-origin data, and a tree that skips one leaf differs. At the estimator
// level, every algorithm (auto, brute, kd_tree, ball_tree) and leaf size gives the same output
// bytes and the same fitted state; the parameters are validated.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "contract/rng.h"
#include "core/thread_pool.h"
#include "kernels/matmul_packed.h"
#include "ml/cluster/distances.h"
#include "ml/neighbors/kd_tree.h"
#include "ml/neighbors/nearest_rows.h"
#include "ml_common/estimator_checks.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using ml::KdTree;
using ml::NeighborLists;

enum Style { plain, grid, huge, tiny, far, same, scales, kStyles };

// Row-major [rows, d] Philox data of one style.
std::vector<float> make_rows(int64_t rows, int64_t d, uint64_t seed, int style) {
  std::vector<float> v(static_cast<size_t>(rows * d));
  for (int64_t i = 0; i < rows * d; ++i) {
    float x = normal_element(seed, 3, static_cast<uint64_t>(i));
    const int64_t a = i % d;
    if (style == grid) x = static_cast<float>(static_cast<int>(x * 2.0f)) * 0.5f;
    if (style == huge && (i * 7 + static_cast<int64_t>(seed)) % 5 == 0) x *= 3.0e19f;
    if (style == tiny) x *= 1.0e-21f;
    if (style == far) x = 1000.0f + 0.01f * x;
    if (style == same) x = 0.25f;
    if (style == scales) x *= a % 3 == 0 ? 1.0e6f : (a % 3 == 1 ? 1.0e-6f : 1.0f);
    v[static_cast<size_t>(i)] = x;
  }
  return v;
}

struct Problem {
  int64_t m, n, d;
  std::vector<float> q, t, qq, tt;
};

Problem make_problem(int64_t m, int64_t n, int64_t d, int style, uint64_t seed) {
  Problem p{m, n, d, make_rows(m, d, seed, style), make_rows(n, d, seed + 1000, style), {}, {}};
  if (style == grid && m > 0)  // exact duplicates of a query among the training rows
    for (int64_t c = 0; c < 3; ++c)
      std::memcpy(p.t.data() + ((n / 2 + c * 7) % n) * d, p.q.data(), static_cast<size_t>(d) * sizeof(float));
  p.qq = ml::row_sq_norms(Tensor::from_vector(p.q, {m, d})).to_vector<float>();
  p.tt = ml::row_sq_norms(Tensor::from_vector(p.t, {n, d})).to_vector<float>();
  return p;
}

NeighborLists brute(const Problem& p, int64_t k) {
  PackedMatrix packed = matmul_pack_b_cpu(p.t.data(), p.d, p.n, p.d, true);
  return ml::nearest_rows_cpu(p.q.data(), p.m, p.qq.data(), packed, p.tt.data(), k);
}

bool same_lists(const NeighborLists& a, const NeighborLists& b) {
  return a.idx.size() == b.idx.size() && a.dist.size() == b.dist.size() &&
         (a.idx.empty() || std::memcmp(a.idx.data(), b.idx.data(), a.idx.size() * sizeof(int64_t)) == 0) &&
         (a.dist.empty() || std::memcmp(a.dist.data(), b.dist.data(), a.dist.size() * sizeof(float)) == 0);
}

struct Shape {
  int64_t m, n, d, k, leaf;
};

TEST(KdTree, EqualsBruteForceByMemcmp) {
  const std::vector<Shape> shapes = {
      {3, 1, 1, 1, 30},      {7, 1, 5, 1, 30},     {9, 5, 2, 5, 30},      {11, 29, 3, 4, 30},
      {40, 31, 3, 7, 30},    {50, 200, 1, 1, 30},  {50, 200, 1, 9, 4},    {60, 500, 2, 5, 30},
      {60, 777, 3, 1, 1},    {40, 1000, 4, 12, 7}, {40, 1500, 5, 5, 30},  {30, 1200, 8, 3, 16},
      {30, 900, 12, 6, 30},  {20, 800, 16, 5, 30}, {20, 700, 20, 10, 30}, {10, 300, 259, 4, 30},
      {10, 64, 6, 64, 8},  // k == n
  };
  int compared = 0;
  for (int style = 0; style < kStyles; ++style) {
    for (const Shape& s : shapes) {
      const Problem p = make_problem(s.m, s.n, s.d, style, 17 + static_cast<uint64_t>(s.n * 31 + s.d));
      const NeighborLists want = brute(p, s.k);
      const KdTree tree(p.t.data(), s.n, s.d, s.leaf);
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        for (ml::NearestRowsVariant v : {ml::NearestRowsVariant::by_isa, ml::NearestRowsVariant::portable}) {
          const NeighborLists got = tree.search(p.q.data(), s.m, p.qq.data(), p.tt.data(), s.k, &pool, v);
          EXPECT_TRUE(same_lists(got, want)) << "style=" << style << " m=" << s.m << " n=" << s.n << " d=" << s.d
                                             << " k=" << s.k << " leaf=" << s.leaf << " threads=" << threads
                                             << (v == ml::NearestRowsVariant::portable ? " portable" : " by_isa");
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 600);
}

TEST(KdTree, EqualsBruteForceOnManyRows) {
  for (int style : {plain, grid, far}) {
    const Problem p = make_problem(300, 20000, 3, style, 5);
    const KdTree tree(p.t.data(), p.n, p.d, 30);
    for (int64_t k : {1, 5, 33}) {
      const NeighborLists want = brute(p, k);
      ThreadPool pool(3);
      EXPECT_TRUE(same_lists(tree.search(p.q.data(), p.m, p.qq.data(), p.tt.data(), k, &pool), want))
          << "style=" << style << " k=" << k;
    }
  }
}

// The rounding margin matters: pruning on the box distance alone skips rows whose computed
// distance (large cancellation far from the origin) is below their true distance.
TEST(KdTree, SabotageNoMarginLosesNeighbors) {
  int differing = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const Problem p = make_problem(200, 3000, 3, far, seed);
    const NeighborLists want = brute(p, 5);
    const KdTree tree(p.t.data(), p.n, p.d, 8);
    EXPECT_TRUE(same_lists(tree.search(p.q.data(), p.m, p.qq.data(), p.tt.data(), 5), want));
    differing += same_lists(tree.search(p.q.data(), p.m, p.qq.data(), p.tt.data(), 5, nullptr, ml::NearestRowsVariant::by_isa, 0.0), want) ? 0 : 1;
  }
  EXPECT_GT(differing, 0) << "pruning without the rounding margin should lose a neighbor here";
}

TEST(KdTree, SabotageSkippedLeafDiffers) {
  const Problem p = make_problem(400, 400, 3, plain, 9);
  const KdTree tree(p.t.data(), p.n, p.d, 30);
  ASSERT_GT(tree.leaves(), 8);
  const NeighborLists want = brute(p, 3);
  for (int64_t leaf : {int64_t{0}, tree.leaves() / 2, tree.leaves() - 1})
    EXPECT_FALSE(same_lists(tree.search(p.q.data(), p.m, p.qq.data(), p.tt.data(), 3, nullptr, ml::NearestRowsVariant::by_isa, 1.0, leaf),
                                  want))
        << "leaf " << leaf;
}

// Every algorithm gives the same outputs and the same fitted state; only the parameter differs.
TEST(KdTree, EstimatorsSameBytesForEveryAlgorithm) {
  const Problem p = make_problem(150, 3000, 4, grid, 3);
  std::vector<float> y(3000), yc(3000);
  for (int64_t i = 0; i < 3000; ++i) y[i] = p.t[i * 4] + 0.5f * p.t[i * 4 + 1], yc[i] = static_cast<float>(i % 3);
  const Tensor X = Tensor::from_vector(p.t, {3000, 4}), Q = Tensor::from_vector(p.q, {150, 4});
  struct Est {
    std::string name;
    Tensor y;
    ml::Params extra;
  };
  const std::vector<Est> ests = {{"kneighbors_classifier", Tensor::from_vector(yc, {3000}), {{"weights", "distance"}}},
                                 {"kneighbors_regressor", Tensor::from_vector(y, {3000}), {{"n_neighbors", "7"}}},
                                 {"nearest_neighbors", Tensor(), {{"n_neighbors", "9"}}},
                                 {"local_outlier_factor", Tensor(), {}},
                                 {"radius_neighbors_regressor", Tensor::from_vector(y, {3000}), {{"radius", "1.5"}}}};
  for (const Est& e : ests) {
    std::vector<unsigned char> out0;
    nlohmann::json state0;
    bool first = true;
    for (const char* algo : {"brute", "auto", "kd_tree", "ball_tree"}) {
      for (const char* leaf : {"30", "1", "500"}) {
        ml::Params params = e.extra;
        params["algorithm"] = algo;
        params["leaf_size"] = leaf;
        auto est = ml::make_estimator(e.name, params);
        est->fit(X, e.y);
        const std::vector<unsigned char> out = ml_common::outputs_of(*est, Q);
        const nlohmann::json state = ml_common::state_of(*est);
        if (first) {
          out0 = out;
          state0 = state;
          first = false;
        } else {
          EXPECT_EQ(out, out0) << e.name << " algorithm=" << algo << " leaf_size=" << leaf;
          EXPECT_EQ(state, state0) << e.name << " algorithm=" << algo << " leaf_size=" << leaf;
        }
      }
    }
  }
  ml_common::expect_same_bytes_at_threads_123("kneighbors_regressor", {{"algorithm", "kd_tree"}, {"leaf_size", "5"}},
                                              X, Tensor::from_vector(y, {3000}), Q);
}

TEST(KdTree, ParametersValidated) {
  for (const char* name : {"kneighbors_classifier", "nearest_neighbors", "local_outlier_factor",
                           "radius_neighbors_classifier"}) {
    const std::string bad = ml_common::error_of([&] { ml::make_estimator(name, {{"algorithm", "octree"}}); });
    EXPECT_NE(bad.find("algorithm"), std::string::npos) << name << ": " << bad;
    const std::string zero = ml_common::error_of([&] { ml::make_estimator(name, {{"leaf_size", "0"}}); });
    EXPECT_NE(zero.find("leaf_size"), std::string::npos) << name << ": " << zero;
    auto est = ml::make_estimator(name, {});
    EXPECT_EQ(est->get_params().at("algorithm"), "auto");
    EXPECT_EQ(est->get_params().at("leaf_size"), "30");
  }
}

}  // namespace
}  // namespace bl
