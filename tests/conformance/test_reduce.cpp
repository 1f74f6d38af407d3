// Conformance of the reductions (kernels/reduce.h): CPU == reference, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "conformance/test_reduce_util.h"
#include "core/error.h"
#include "kernels/reduce.h"

namespace bl::conformance {
namespace {

const ReduceOp kFloatOps[] = {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::std,
                              ReduceOp::max, ReduceOp::min,  ReduceOp::l1,  ReduceOp::l2};

std::string shape_label(ReduceShape s) {
  return "(" + std::to_string(s.outer) + "," + std::to_string(s.n) + "," + std::to_string(s.inner) + ")";
}

void check_all_ops(ReduceShape s, const std::vector<float>& x) {
  const int64_t r = s.outer * s.inner;
  for (ReduceOp op : kFloatOps) {
    if ((op == ReduceOp::max || op == ReduceOp::min) && s.n == 0) continue;
    for (int64_t ddof : {0, 1}) {
      if (ddof == 1 && op != ReduceOp::var && op != ReduceOp::std) continue;
      std::vector<float> expected(r), actual(r);
      reduce_reference(op, x.data(), s, expected.data(), ddof);
      for_each_cpu_config([&](ThreadPool& pool, const std::string& label) {
        std::fill(actual.begin(), actual.end(), 12345.0f);
        reduce_cpu(op, x.data(), s, actual.data(), ddof, pool);
        ASSERT_TRUE(bits_equal(expected, actual,
                               std::string(reduce_op_name(op)) + " ddof=" + std::to_string(ddof) +
                                   " shape=" + shape_label(s) + " " + label));
      });
    }
  }
  if (s.n == 0) return;
  for (ArgReduceOp op : {ArgReduceOp::argmax, ArgReduceOp::argmin}) {
    std::vector<int64_t> expected(r), actual(r);
    arg_reduce_reference(op, x.data(), s, expected.data());
    for_each_cpu_config([&](ThreadPool& pool, const std::string& label) {
      arg_reduce_cpu(op, x.data(), s, actual.data(), pool);
      ASSERT_TRUE(bits_equal(expected.data(), actual.data(), r, sizeof(int64_t),
                             std::string(op == ArgReduceOp::argmax ? "argmax" : "argmin") +
                                 " shape=" + shape_label(s) + " " + label));
    });
  }
}

// The reference sum is exactly the schedule of src/contract/schedule.h (reference_leaf_sum, fold_leaves).
TEST(ReduceConformance, ReferenceSumIsTheContractSchedule) {
  for (int64_t n : interesting_lengths()) {
    for (const auto& x : data_variants(n, 11 + n)) {
      std::vector<float> leaves;
      for (int64_t s = 0; s < n; s += kReduceLeaf)
        leaves.push_back(reference_leaf_sum(x.data() + s, std::min<int64_t>(kReduceLeaf, n - s)));
      float spec = canonicalize(fold_leaves(leaves.data(), static_cast<int64_t>(leaves.size())));
      float ref = 0.0f;
      reduce_reference(ReduceOp::sum, x.data(), ReduceShape{1, n, 1}, &ref);
      ASSERT_TRUE(bits_equal(&spec, &ref, 1, sizeof(float), "n=" + std::to_string(n)));
    }
  }
}

TEST(ReduceConformance, ContiguousAllLengths) {
  for (int64_t n : interesting_lengths())
    for (const auto& x : data_variants(n, 100 + n)) check_all_ops(ReduceShape{1, n, 1}, x);
}

TEST(ReduceConformance, BatchedAndStrided) {
  const ReduceShape shapes[] = {{3, 4097, 1}, {1000, 7, 1}, {2, 33, 17}, {3, 8193, 5},
                                {4, 1, 3},    {5, 0, 2},    {0, 9, 4},   {1, 65537, 2},
                                {7, 300, 33}, {2, 12289, 1},
                                // several leaves of whole 16-column blocks; a full and a partial
                                // 256-column block (the widest column blocks)
                                {1, 4100, 32}, {2, 4099, 17}, {16, 300, 300}};
  for (ReduceShape s : shapes) {
    for (const auto& x : data_variants(s.outer * s.n * s.inner, 7 + s.n)) check_all_ops(s, x);
  }
}

TEST(ReduceConformance, SpecialValueRules) {
  ThreadPool& pool = pool_with(2);
  auto run = [&](ReduceOp op, std::vector<float> x) {
    float out = 0.0f;
    reduce_cpu(op, x.data(), ReduceShape{1, static_cast<int64_t>(x.size()), 1}, &out, 0, pool);
    return bits_of(out);
  };
  auto arg = [&](ArgReduceOp op, std::vector<float> x) {
    int64_t out = -1;
    arg_reduce_cpu(op, x.data(), ReduceShape{1, static_cast<int64_t>(x.size()), 1}, &out, pool);
    return out;
  };
  const float nan_neg = float_of(0xFFC00001u);
  const float inf = float_of(0x7F800000u);
  EXPECT_EQ(run(ReduceOp::sum, {}), 0u);  // empty sum is +0
  EXPECT_EQ(run(ReduceOp::sum, {-0.0f, -0.0f}), 0u);  // lanes start at +0
  EXPECT_EQ(run(ReduceOp::sum, {1.0f, nan_neg}), kCanonicalNanBits);
  EXPECT_EQ(run(ReduceOp::sum, {inf, -inf}), kCanonicalNanBits);
  EXPECT_EQ(run(ReduceOp::mean, {}), kCanonicalNanBits);
  EXPECT_EQ(run(ReduceOp::max, {-0.0f, 0.0f}), 0u);
  EXPECT_EQ(run(ReduceOp::min, {0.0f, -0.0f}), 0x80000000u);
  EXPECT_EQ(run(ReduceOp::max, {1.0f, nan_neg, 2.0f}), kCanonicalNanBits);
  EXPECT_EQ(run(ReduceOp::var, {2.0f, 4.0f}), bits_of(1.0f));
  EXPECT_EQ(arg(ArgReduceOp::argmax, {1.0f, 3.0f, 3.0f, 2.0f}), 1);
  EXPECT_EQ(arg(ArgReduceOp::argmin, {1.0f, 0.5f, 3.0f, 0.5f}), 1);
  EXPECT_EQ(arg(ArgReduceOp::argmax, {1.0f, nan_neg, inf, float_of(0x7FC00000u)}), 1);
  EXPECT_EQ(arg(ArgReduceOp::argmin, {1.0f, -inf, nan_neg, nan_neg}), 2);
  EXPECT_EQ(arg(ArgReduceOp::argmax, {-0.0f, 0.0f}), 1);
  EXPECT_EQ(arg(ArgReduceOp::argmin, {0.0f, -0.0f}), 1);
  // Signed zeros and NaN inside the 8-wide SIMD body (not only in the scalar tail).
  std::vector<float> zeros(40, -0.0f);
  zeros[13] = 0.0f;
  EXPECT_EQ(run(ReduceOp::max, zeros), 0u);
  std::vector<float> pos(40, 0.0f);
  pos[21] = -0.0f;
  EXPECT_EQ(run(ReduceOp::min, pos), 0x80000000u);
  std::vector<float> with_nan(40, -inf);
  with_nan[9] = nan_neg;
  EXPECT_EQ(run(ReduceOp::max, with_nan), kCanonicalNanBits);
  EXPECT_EQ(run(ReduceOp::min, with_nan), kCanonicalNanBits);
  with_nan[9] = -inf;
  EXPECT_EQ(run(ReduceOp::max, with_nan), bits_of(-inf));
  // var with n - ddof <= 0 is NaN
  float out = 0.0f;
  float one = 1.0f;
  reduce_cpu(ReduceOp::var, &one, ReduceShape{1, 1, 1}, &out, 1, pool);
  EXPECT_EQ(bits_of(out), kCanonicalNanBits);
}

TEST(ReduceConformance, BadInputThrows) {
  ThreadPool& pool = pool_with(1);
  float out[4];
  float x[4] = {1, 2, 3, 4};
  EXPECT_THROW(reduce_cpu(ReduceOp::max, x, ReduceShape{1, 0, 1}, out, 0, pool), Error);
  EXPECT_THROW(reduce_cpu(ReduceOp::sum, x, ReduceShape{-1, 2, 1}, out, 0, pool), Error);
  EXPECT_THROW(reduce_cpu(ReduceOp::var, x, ReduceShape{1, 4, 1}, out, -1, pool), Error);
  EXPECT_THROW(reduce_cpu(ReduceOp::sum, nullptr, ReduceShape{1, 4, 1}, out, 0, pool), Error);
  int64_t idx[1];
  EXPECT_THROW(arg_reduce_cpu(ArgReduceOp::argmax, x, ReduceShape{1, 0, 1}, idx, pool), Error);
}

// Sabotage arms: other schedules must be caught by the same bitwise comparison on the same data.
float sum_with_leaf(const std::vector<float>& x, int64_t leaf) {
  std::vector<float> leaves;
  for (int64_t s = 0; s < static_cast<int64_t>(x.size()); s += leaf) {
    float lanes[kReduceLanes] = {};
    for (int64_t i = s; i < std::min<int64_t>(s + leaf, x.size()); ++i)
      lanes[(i - s) % kReduceLanes] = add(lanes[(i - s) % kReduceLanes], x[i]);
    leaves.push_back(fold_lanes(lanes));
  }
  return canonicalize(fold_leaves(leaves.data(), static_cast<int64_t>(leaves.size())));
}

TEST(ReduceConformance, SabotageOtherScheduleIsCaught) {
  const int64_t n = 1000003;
  auto x = generate_floats(n, 4242);
  float expected = 0.0f;
  reduce_reference(ReduceOp::sum, x.data(), ReduceShape{1, n, 1}, &expected);
  float actual = 0.0f;
  reduce_cpu(ReduceOp::sum, x.data(), ReduceShape{1, n, 1}, &actual, 0, pool_with(3));
  EXPECT_TRUE(bits_equal(&expected, &actual, 1, sizeof(float), "cpu"));
  float leaf2048 = sum_with_leaf(x, 2048);
  EXPECT_FALSE(bits_equal(&expected, &leaf2048, 1, sizeof(float), "leaf 2048"));
  float sequential = 0.0f;
  for (float v : x) sequential = add(sequential, v);
  EXPECT_FALSE(bits_equal(&expected, &sequential, 1, sizeof(float), "sequential"));
  // A different lane count (16) is caught too.
  float l16[16] = {};
  std::vector<float> leaves;
  for (int64_t s = 0; s < n; s += kReduceLeaf) {
    for (float& v : l16) v = 0.0f;
    for (int64_t i = s; i < std::min<int64_t>(s + kReduceLeaf, n); ++i)
      l16[(i - s) % 16] = add(l16[(i - s) % 16], x[i]);
    for (int st = 8; st >= 1; st /= 2)
      for (int j = 0; j < st; ++j) l16[j] = add(l16[j], l16[j + st]);
    leaves.push_back(l16[0]);
  }
  float lanes16 = fold_leaves(leaves.data(), static_cast<int64_t>(leaves.size()));
  EXPECT_FALSE(bits_equal(&expected, &lanes16, 1, sizeof(float), "16 lanes"));
}

// Accuracy sanity against float64: the lane/pairwise schedule's error bound.
TEST(ReduceConformance, SumAccuracyAgainstFloat64) {
  for (int64_t n : {int64_t{4097}, int64_t{65537}, int64_t{1000003}}) {
    auto x = generate_floats(n, 99 + n);
    double exact = 0.0, abs_sum = 0.0, sq = 0.0;
    for (float v : x) {
      exact += v;
      abs_sum += std::fabs(v);
      sq += static_cast<double>(v) * v;
    }
    float s = 0.0f, l2 = 0.0f;
    reduce_cpu(ReduceOp::sum, x.data(), ReduceShape{1, n, 1}, &s, 0, pool_with(2));
    reduce_cpu(ReduceOp::l2, x.data(), ReduceShape{1, n, 1}, &l2, 0, pool_with(2));
    // Depth: 128 additions per lane, 5 lane folds, ceil(log2(leaves)) tree levels.
    const double depth = 128 + 5 + std::ceil(std::log2(static_cast<double>(reduce_leaf_count(n))));
    EXPECT_LE(std::fabs(s - exact), depth * 0x1p-24 * abs_sum) << "n=" << n;
    EXPECT_LE(std::fabs(l2 - std::sqrt(sq)), (depth + 2) * 0x1p-24 * std::sqrt(sq)) << "n=" << n;
  }
}

}  // namespace
}  // namespace bl::conformance

namespace bl::conformance {
namespace {

// Folds p[0..m) by passes of leaf_tree_segment (segments of `seg` values) until one is left, as
// the CUDA tree does; seg must be 32 for leaf_tree's bits.
float segment_tree_passes(std::vector<float> p, int64_t seg) {
  int64_t m = static_cast<int64_t>(p.size());
  if (m == 0) return 0.0f;
  while (m > 1) {
    const int64_t next = (m + seg - 1) / seg;
    std::vector<float> q(static_cast<size_t>(next));
    for (int64_t i = 0; i < next; ++i) {
      if (seg == 32) {
        q[static_cast<size_t>(i)] = leaf_tree_segment<StepAdd>(p.data(), m, i);
      } else {
        const int64_t len = std::min<int64_t>(seg, m - i * seg);
        std::vector<float> buf(p.begin() + i * seg, p.begin() + i * seg + len);
        q[static_cast<size_t>(i)] = leaf_tree<StepAdd>(buf.data(), len);
      }
    }
    p.swap(q);
    m = next;
  }
  return p[0];
}

// The 32-segment passes of the CUDA leaf tree equal the pairwise tree of schedule.h for every
// length; segments of 24 (not a power of two) are caught by the same comparison.
TEST(ReduceConformance, SegmentedLeafTreeIsTheTree) {
  bool sabotage_caught = false;
  for (int64_t m : {1, 2, 3, 31, 32, 33, 63, 64, 65, 100, 1023, 1024, 1025, 4097, 65536, 70001}) {
    auto p = generate_floats(m, 900 + m, 1000.0f, 0);
    std::vector<float> copy = p;
    const float expected = leaf_tree<StepAdd>(copy.data(), m);
    const float got = segment_tree_passes(p, 32);
    ASSERT_TRUE(bits_equal(&expected, &got, 1, sizeof(float), "segment tree m=" + std::to_string(m)));
    const float sabotaged = segment_tree_passes(p, 24);
    if (std::memcmp(&expected, &sabotaged, sizeof(float)) != 0) sabotage_caught = true;
  }
  EXPECT_TRUE(sabotage_caught) << "segments of 24 were not caught";
}

}  // namespace
}  // namespace bl::conformance
