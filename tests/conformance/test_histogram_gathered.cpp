// Conformance of the gathered histogram kernel (kernels/histogram.h): histogram_gathered_cpu equals
// histogram_reference (the pairs scattered back to their rows) and histogram_gathered_reference
// bit for bit over many shapes (0, 1, primes, both the feature-range and the row-range cut of the
// work), ascending and shuffled row lists, varying and constant hessians (h == nullptr), extreme
// fixed-point values, at 1, 2 and 3 threads. Sabotage arms: a constant hessian off by one unit and
// pairs shifted by one list position must both change the bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "conformance/harness.h"
#include "core/thread_pool.h"
#include "kernels/histogram.h"

namespace bl::conformance {
namespace {

struct GatheredCase {
  int64_t n = 0, d = 0;
  std::vector<uint8_t> bins;
  std::vector<int32_t> rows;
  std::vector<int64_t> g, h;        // in list order
  std::vector<int64_t> gq, hq;      // the same pairs by row (rows not listed: 0)
};

GatheredCase make_case(int64_t n, int64_t d, uint64_t seed, bool shuffled) {
  test_rng::SplitMix64 rng{seed};
  GatheredCase c;
  c.n = n;
  c.d = d;
  c.bins.resize(static_cast<size_t>(n * d));
  for (auto& b : c.bins) b = static_cast<uint8_t>(rng.next() & 0xFF);  // includes the missing bin 255
  for (int64_t i = 0; i < n; ++i) {
    if (rng.next() % 4 != 0) c.rows.push_back(static_cast<int32_t>(i));
  }
  if (shuffled) {
    for (size_t i = c.rows.size(); i > 1; --i) std::swap(c.rows[i - 1], c.rows[rng.next() % i]);
  }
  c.gq.assign(static_cast<size_t>(n), 0);
  c.hq.assign(static_cast<size_t>(n), 0);
  for (int32_t r : c.rows) {
    // Large magnitudes of both signs, as the 2^62 / n scaling produces.
    c.gq[r] = static_cast<int64_t>(rng.next() >> 24) - (int64_t{1} << 39);
    c.hq[r] = static_cast<int64_t>(rng.next() >> 25);
    c.g.push_back(c.gq[r]);
    c.h.push_back(c.hq[r]);
  }
  return c;
}

std::vector<int64_t> gathered(const GatheredCase& c, const int64_t* h, int64_t h_const, ThreadPool& pool) {
  std::vector<int64_t> out(static_cast<size_t>(histogram_size(c.d)), 777);
  histogram_gathered_cpu(c.bins.data(), c.d, c.rows.data(), static_cast<int64_t>(c.rows.size()), c.g.data(), h,
                         h_const, out.data(), pool);
  return out;
}

bool same(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(int64_t)) == 0;
}

TEST(HistogramGatheredConformance, CpuEqualsReference) {
  const std::vector<int64_t> ns = {0, 1, 2, 3, 7, 97, 257, 8191, 16385, 40009};
  const std::vector<int64_t> ds = {1, 2, 3, 5, 6, 9, 20};
  const int64_t kConstants[] = {0, 1, int64_t{1} << 40, -3};
  int cases = 0;
  for (int64_t n : ns) {
    for (int64_t d : ds) {
      for (bool shuffled : {false, true}) {
        GatheredCase c = make_case(n, d, static_cast<uint64_t>(n * 131 + d * 7 + shuffled), shuffled);
        const int64_t m = static_cast<int64_t>(c.rows.size());
        const size_t size = static_cast<size_t>(histogram_size(d));
        std::vector<int64_t> by_row(size), by_list(size);
        histogram_reference(c.bins.data(), d, c.rows.data(), m, c.gq.data(), c.hq.data(), by_row.data());
        histogram_gathered_reference(c.bins.data(), d, c.rows.data(), m, c.g.data(), c.h.data(), 0, by_list.data());
        ASSERT_TRUE(same(by_row, by_list)) << "n=" << n << " d=" << d;
        for (int64_t k : kConstants) {
          std::vector<int64_t> hq_const(static_cast<size_t>(n), k), ref_const(size);
          histogram_reference(c.bins.data(), d, c.rows.data(), m, c.gq.data(), hq_const.data(), ref_const.data());
          for (int threads : kThreadCounts) {
            ThreadPool pool(threads);
            ASSERT_TRUE(same(gathered(c, nullptr, k, pool), ref_const))
                << "constant hessian " << k << " n=" << n << " d=" << d << " threads=" << threads;
            ++cases;
          }
        }
        for (int threads : kThreadCounts) {
          ThreadPool pool(threads);
          ASSERT_TRUE(same(gathered(c, c.h.data(), 0, pool), by_row))
              << "n=" << n << " d=" << d << " shuffled=" << shuffled << " threads=" << threads;
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(cases, 500);
}

// Sabotage arms: each deliberately wrong input must change the bits, or the comparison above
// could not have caught the mistake it stands for.
TEST(HistogramGatheredConformance, SabotageWrongInputsDiffer) {
  GatheredCase c = make_case(20011, 7, 5, false);
  ThreadPool pool(2);
  const int64_t k = int64_t{1} << 33;
  EXPECT_FALSE(same(gathered(c, nullptr, k, pool), gathered(c, nullptr, k + 1, pool)))
      << "a constant hessian off by one unit gave the same histogram";
  const std::vector<int64_t> good = gathered(c, c.h.data(), 0, pool);
  GatheredCase shifted = c;
  std::rotate(shifted.g.begin(), shifted.g.begin() + 1, shifted.g.end());
  EXPECT_FALSE(same(gathered(shifted, c.h.data(), 0, pool), good))
      << "pairs shifted by one list position gave the same histogram";
}

}  // namespace
}  // namespace bl::conformance
