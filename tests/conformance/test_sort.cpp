// Conformance of sort and top-k (kernels/sort.h): CPU == reference bit for bit.
#include <string>
#include <vector>

#include "conformance/test_reduce_util.h"
#include "core/error.h"
#include "kernels/sort.h"

namespace bl::conformance {
namespace {

// Data with many ties: values drawn from a small set plus special values.
std::vector<float> tied_floats(int64_t n, uint64_t seed) {
  auto v = generate_floats(n, seed, 1.0f, 13);
  for (int64_t i = 0; i < n; ++i)
    if (i % 3 == 0) v[i] = static_cast<float>(static_cast<int>(v[i] * 4.0f));  // -3..3, with -0 and +0
  return v;
}

void check(int64_t rows, int64_t n, const std::vector<float>& x) {
  for (bool desc : {false, true}) {
    std::vector<float> ev(x.size()), av(x.size());
    std::vector<int64_t> ei(x.size()), ai(x.size());
    sort_reference(x.data(), rows, n, desc, ev.data(), ei.data());
    for (int t : kThreadCounts) {
      sort_cpu(x.data(), rows, n, desc, av.data(), ai.data(), pool_with(t));
      std::string ctx = std::string("sort desc=") + (desc ? "1" : "0") + " rows=" + std::to_string(rows) +
                        " n=" + std::to_string(n) + " threads=" + std::to_string(t);
      ASSERT_TRUE(bits_equal(ev, av, ctx + " values"));
      ASSERT_TRUE(bits_equal(ei.data(), ai.data(), ei.size(), sizeof(int64_t), ctx + " indices"));
    }
  }
  for (int64_t k : {int64_t{0}, int64_t{1}, n / 3, n}) {
    if (k > n) continue;
    std::vector<float> ev(rows * k), av(rows * k);
    std::vector<int64_t> ei(rows * k), ai(rows * k);
    topk_reference(x.data(), rows, n, k, ev.data(), ei.data());
    for (int t : kThreadCounts) {
      topk_cpu(x.data(), rows, n, k, av.data(), ai.data(), pool_with(t));
      std::string ctx = "topk k=" + std::to_string(k) + " n=" + std::to_string(n) + " threads=" + std::to_string(t);
      ASSERT_TRUE(bits_equal(ev, av, ctx + " values"));
      ASSERT_TRUE(bits_equal(ei.data(), ai.data(), ei.size(), sizeof(int64_t), ctx + " indices"));
    }
  }
}

TEST(SortConformance, AllLengths) {
  for (int64_t n : interesting_lengths()) {
    check(1, n, tied_floats(n, 700 + n));
    check(1, n, generate_floats(n, 800 + n, 1.0f, 37));
  }
}

TEST(SortConformance, Batches) {
  check(100, 33, tied_floats(3300, 5));
  check(3, 4097, tied_floats(3 * 4097, 6));
  check(0, 5, {});
  check(4, 0, {});
}

TEST(SortConformance, OrderRules) {
  const float nan_neg = float_of(0xFFC00001u), inf = float_of(0x7F800000u);
  std::vector<float> x = {1.0f, nan_neg, -0.0f, 0.0f, -inf, 1.0f, float_of(0x7FC00000u), -0.0f};
  std::vector<float> v(x.size());
  std::vector<int64_t> i(x.size());
  sort_cpu(x.data(), 1, 8, false, v.data(), i.data(), pool_with(1));
  EXPECT_EQ(i, (std::vector<int64_t>{4, 2, 7, 3, 0, 5, 1, 6}));  // NaN last, -0 < +0, stable
  EXPECT_EQ(bits_of(v[6]), kCanonicalNanBits);
  sort_cpu(x.data(), 1, 8, true, v.data(), i.data(), pool_with(1));
  EXPECT_EQ(i, (std::vector<int64_t>{1, 6, 0, 5, 3, 2, 7, 4}));  // NaN first, ties lowest index first
  std::vector<float> tv(3);
  std::vector<int64_t> ti(3);
  topk_cpu(x.data(), 1, 8, 3, tv.data(), ti.data(), pool_with(1));
  EXPECT_EQ(ti, (std::vector<int64_t>{1, 6, 0}));
  EXPECT_THROW(topk_cpu(x.data(), 1, 8, 9, tv.data(), ti.data(), pool_with(1)), Error);
}

// Sabotage arm: an unstable order (ties by highest index) is caught by the same comparison.
TEST(SortConformance, SabotageUnstableIsCaught) {
  const int64_t n = 4097;
  auto x = tied_floats(n, 9);
  std::vector<float> ev(n), sv(n);
  std::vector<int64_t> ei(n), si(n);
  sort_reference(x.data(), 1, n, false, ev.data(), ei.data());
  std::vector<uint64_t> words(n);
  for (int64_t i = 0; i < n; ++i)
    words[i] = (static_cast<uint64_t>(sort_key(x[i])) << 32) | static_cast<uint64_t>(0xFFFFFFFFu - i);
  std::sort(words.begin(), words.end());
  for (int64_t i = 0; i < n; ++i) si[i] = 0xFFFFFFFFu - (words[i] & 0xFFFFFFFFu);
  EXPECT_FALSE(bits_equal(ei.data(), si.data(), n, sizeof(int64_t), "ties by highest index"));
}

}  // namespace
}  // namespace bl::conformance
