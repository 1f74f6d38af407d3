// Conformance of the boosting histogram kernel (kernels/histogram.h): histogram_cpu equals the
// reference bit for bit over many shapes (0, 1, primes, all rows or row lists, every bin value,
// extreme fixed-point values) at 1, 2 and 3 threads; parent - child equals the sibling. Sabotage
// arm: the same sums accumulated in float (as float atomics would) in two orders must differ,
// proving the comparison can fail and why the kernel uses integers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "conformance/harness.h"
#include "core/thread_pool.h"
#include "kernels/histogram.h"

namespace bl::conformance {
namespace {

struct HistCase {
  int64_t n, d;
  std::vector<uint8_t> bins;
  std::vector<int64_t> gq, hq;
  std::vector<int32_t> rows;  // empty: all rows
};

HistCase make_case(int64_t n, int64_t d, uint64_t seed, bool use_rows) {
  test_rng::SplitMix64 rng{seed};
  HistCase c{n, d, {}, {}, {}, {}};
  c.bins.resize(static_cast<size_t>(n * d));
  for (auto& b : c.bins) b = static_cast<uint8_t>(rng.next() & 0xFF);  // includes the missing bin 255
  c.gq.resize(static_cast<size_t>(n));
  c.hq.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    // Large magnitudes of both signs, as the 2^62 / n scaling produces.
    c.gq[i] = static_cast<int64_t>(rng.next() >> 24) - (int64_t{1} << 39);
    c.hq[i] = static_cast<int64_t>(rng.next() >> 25);
  }
  if (use_rows) {
    for (int64_t i = 0; i < n; ++i) {
      if (rng.next() % 3 != 0) c.rows.push_back(static_cast<int32_t>(i));
    }
  }
  return c;
}

std::vector<int64_t> run_reference(const HistCase& c) {
  std::vector<int64_t> h(static_cast<size_t>(histogram_size(c.d)));
  histogram_reference(c.bins.data(), c.d, c.rows.empty() ? nullptr : c.rows.data(),
                      c.rows.empty() ? c.n : static_cast<int64_t>(c.rows.size()), c.gq.data(), c.hq.data(), h.data());
  return h;
}

TEST(HistogramConformance, CpuEqualsReference) {
  const std::vector<int64_t> ns = {0, 1, 2, 3, 7, 97, 255, 256, 257, 8191, 8192, 16385, 40009};
  const std::vector<int64_t> ds = {1, 2, 3, 8, 9, 13};
  int cases = 0;
  for (int64_t n : ns) {
    for (int64_t d : ds) {
      for (bool use_rows : {false, true}) {
        HistCase c = make_case(n, d, static_cast<uint64_t>(n * 131 + d * 7 + use_rows), use_rows);
        std::vector<int64_t> ref = run_reference(c);
        for (int threads : kThreadCounts) {
          ThreadPool pool(threads);
          std::vector<int64_t> got(ref.size(), 12345);
          histogram_cpu(c.bins.data(), d, use_rows ? c.rows.data() : nullptr,
                        use_rows ? static_cast<int64_t>(c.rows.size()) : n, c.gq.data(), c.hq.data(), got.data(), pool);
          ASSERT_EQ(std::memcmp(got.data(), ref.data(), ref.size() * sizeof(int64_t)), 0)
              << "n=" << n << " d=" << d << " rows=" << use_rows << " threads=" << threads;
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(cases, 400);
}

TEST(HistogramConformance, SubtractionGivesTheSibling) {
  HistCase c = make_case(5003, 5, 77, false);
  std::vector<int32_t> left, right;
  for (int64_t i = 0; i < c.n; ++i) ((i * 7919) % 5 < 2 ? left : right).push_back(static_cast<int32_t>(i));
  const int64_t size = histogram_size(c.d);
  std::vector<int64_t> parent(size), hl(size), hr(size), derived(size);
  histogram_reference(c.bins.data(), c.d, nullptr, c.n, c.gq.data(), c.hq.data(), parent.data());
  histogram_reference(c.bins.data(), c.d, left.data(), static_cast<int64_t>(left.size()), c.gq.data(), c.hq.data(), hl.data());
  histogram_reference(c.bins.data(), c.d, right.data(), static_cast<int64_t>(right.size()), c.gq.data(), c.hq.data(), hr.data());
  histogram_subtract(parent.data(), hl.data(), c.d, derived.data());
  EXPECT_EQ(std::memcmp(derived.data(), hr.data(), size * sizeof(int64_t)), 0);
}

// Sabotage arm: float accumulation in ascending and in reversed row order (what float atomics
// would do at the mercy of scheduling) gives different bits; integer sums in both orders do not.
TEST(HistogramConformance, SabotageFloatOrderDiffers) {
  HistCase c = make_case(20000, 1, 99, false);
  std::vector<float> g(static_cast<size_t>(c.n));
  for (int64_t i = 0; i < c.n; ++i) g[i] = static_cast<float>(c.gq[i]) * 1e-9f;
  auto float_hist = [&](bool reverse) {
    std::vector<float> h(kHistBins, 0.0f);
    for (int64_t k = 0; k < c.n; ++k) {
      int64_t i = reverse ? c.n - 1 - k : k;
      h[c.bins[i]] += g[i];
    }
    return h;
  };
  std::vector<float> a = float_hist(false), b = float_hist(true);
  EXPECT_NE(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
      << "float sums in two orders agreed: the sabotage arm proves nothing";
  std::vector<int32_t> reversed(static_cast<size_t>(c.n));
  for (int64_t i = 0; i < c.n; ++i) reversed[i] = static_cast<int32_t>(c.n - 1 - i);
  std::vector<int64_t> fwd = run_reference(c), rev(fwd.size());
  histogram_reference(c.bins.data(), c.d, reversed.data(), c.n, c.gq.data(), c.hq.data(), rev.data());
  EXPECT_EQ(std::memcmp(fwd.data(), rev.data(), fwd.size() * sizeof(int64_t)), 0);
}

}  // namespace
}  // namespace bl::conformance
