// Row partition of histogram boosting (ml/boosting/row_partition.h): the serial and the blocked
// partition must both equal the stable partition (std::stable_partition of (row, g, h) triples)
// byte for byte, for node sizes 0, 1, primes, block boundaries and larger, block sizes 1 ... 8192,
// threads 1, 2, 3, with and without hessians, on a sub-range of the list (positions outside it
// untouched). Sabotage arm: an unstable partition (std::partition) and a blocked layout with two
// blocks' right rows swapped must be reported as different by the same comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/boosting/row_partition.h"

namespace bl::ml {
namespace {

constexpr uint64_t kSeed = 617;

// One node's worth of partition input: a column of bins over n_rows rows, the node's rows
// (ascending, a random subset) at positions [begin, begin + count) of a longer list, their pairs.
struct PartitionCase {
  std::vector<uint8_t> column;
  uint8_t goes_left[256];
  std::vector<int32_t> rows;
  std::vector<int64_t> g, h;
  int64_t begin = 0, end = 0;
};

PartitionCase make_case(int64_t count, int64_t pad, uint64_t stream) {
  PartitionCase c;
  const int64_t n_rows = 2 * count + 3;
  c.column.resize(static_cast<size_t>(n_rows));
  for (int64_t r = 0; r < n_rows; ++r) {
    const uint32_t u = random_u32_element(kSeed, stream, static_cast<uint64_t>(r));
    c.column[r] = (u % 11 == 0) ? 255 : static_cast<uint8_t>(u % 200);  // 255: the missing bin
  }
  const uint32_t split = random_u32_element(kSeed, stream + 1, 0) % 200;
  for (int b = 0; b < 256; ++b) c.goes_left[b] = b <= static_cast<int>(split) ? 1 : 0;
  c.goes_left[255] = static_cast<uint8_t>(random_u32_element(kSeed, stream + 1, 1) & 1u);
  c.begin = pad;
  c.end = pad + count;
  const int64_t length = count + 2 * pad;
  c.rows.assign(static_cast<size_t>(length), -7);
  c.g.assign(static_cast<size_t>(length), -11);
  c.h.assign(static_cast<size_t>(length), -13);
  int32_t r = 0;
  for (int64_t i = c.begin; i < c.end; ++i) {
    r += 1 + static_cast<int32_t>(random_u32_element(kSeed, stream + 2, static_cast<uint64_t>(i)) & 1u);
    c.rows[i] = r;
    // Pairs spread over the whole int64 range: the sums wrap modulo 2^64 like the grower's.
    const uint64_t hi = random_u32_element(kSeed, stream + 3, static_cast<uint64_t>(i));
    const uint64_t lo = random_u32_element(kSeed, stream + 4, static_cast<uint64_t>(i));
    c.g[i] = static_cast<int64_t>((hi << 32) | lo);
    c.h[i] = static_cast<int64_t>(lo * 2654435761u);
  }
  return c;
}

struct PartitionResult {
  std::vector<int32_t> rows;
  std::vector<int64_t> g, h;
  int64_t left = 0;
  uint64_t g_left = 0, h_left = 0;
};

bool same_bytes(const PartitionResult& a, const PartitionResult& b) {
  return a.left == b.left && a.g_left == b.g_left && a.h_left == b.h_left && a.rows.size() == b.rows.size() &&
         (a.rows.empty() || std::memcmp(a.rows.data(), b.rows.data(), a.rows.size() * sizeof(int32_t)) == 0) &&
         (a.g.empty() || std::memcmp(a.g.data(), b.g.data(), a.g.size() * sizeof(int64_t)) == 0) &&
         (a.h.empty() || std::memcmp(a.h.data(), b.h.data(), a.h.size() * sizeof(int64_t)) == 0);
}

// The specification: std::stable_partition (or, for the sabotage arm, std::partition) of the
// node's (row, g, h) triples by goes_left[column[row]].
PartitionResult reference(const PartitionCase& c, bool with_h, bool stable) {
  struct Triple {
    int32_t row;
    int64_t g, h;
  };
  std::vector<Triple> t;
  for (int64_t i = c.begin; i < c.end; ++i) t.push_back({c.rows[i], c.g[i], c.h[i]});
  auto left = [&](const Triple& x) { return c.goes_left[c.column[x.row]] != 0; };
  PartitionResult out;
  for (const Triple& x : t) {
    if (left(x)) {
      ++out.left;
      out.g_left += static_cast<uint64_t>(x.g);
      out.h_left += with_h ? static_cast<uint64_t>(x.h) : 0u;
    }
  }
  if (stable) std::stable_partition(t.begin(), t.end(), left);
  else std::partition(t.begin(), t.end(), left);
  out.rows = c.rows;
  out.g = c.g;
  out.h = c.h;
  for (size_t j = 0; j < t.size(); ++j) {
    out.rows[c.begin + j] = t[j].row;
    out.g[c.begin + j] = t[j].g;
    if (with_h) out.h[c.begin + j] = t[j].h;
  }
  return out;
}

// block 0: the serial partition.
PartitionResult run_partition(const PartitionCase& c, bool with_h, int64_t block, ThreadPool& pool) {
  PartitionResult out;
  out.rows = c.rows;
  out.g = c.g;
  out.h = c.h;
  const size_t length = c.rows.size();
  std::vector<int32_t> scratch_rows(length, 99);
  std::vector<int64_t> scratch_g(length, 99), scratch_h(length, 99);
  RowPartitionArrays a{out.rows.data(),     out.g.data(),     with_h ? out.h.data() : nullptr,
                       scratch_rows.data(), scratch_g.data(), with_h ? scratch_h.data() : nullptr};
  out.left = block == 0
                 ? partition_rows_serial(c.column.data(), c.goes_left, a, c.begin, c.end, &out.g_left, &out.h_left)
                 : partition_rows_blocked(c.column.data(), c.goes_left, a, c.begin, c.end, block, &out.g_left,
                                          &out.h_left, pool);
  return out;
}

TEST(BoostRowPartition, SerialAndBlockedEqualTheStablePartition) {
  const int64_t counts[] = {0, 1, 2, 3, 7, 31, 97, 1000, 8191, 8192, 8193, 16384, 24593};
  const int64_t blocks[] = {0, 1, 7, 64, 1000, 8192};
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  uint64_t stream = 10;
  for (int64_t count : counts) {
    for (int64_t pad : {int64_t{0}, int64_t{5}}) {
      const PartitionCase c = make_case(count, pad, stream);
      stream += 10;
      for (bool with_h : {true, false}) {
        const PartitionResult want = reference(c, with_h, true);
        for (int64_t block : blocks) {
          if (block == 1 && count > 1000) continue;  // one task per row: slow, says nothing new
          for (ThreadPool& pool : pools) {
            EXPECT_TRUE(same_bytes(run_partition(c, with_h, block, pool), want))
                << "count " << count << " pad " << pad << " hessians " << with_h << " block " << block
                << " threads " << pool.threads();
          }
        }
      }
    }
  }
}

TEST(BoostRowPartition, DispatchBySizeGivesTheSameBytes) {
  ThreadPool pool(2);
  for (int64_t count : {2 * kPartitionBlock - 1, 2 * kPartitionBlock, 2 * kPartitionBlock + 5}) {
    const PartitionCase c = make_case(count, 3, 900 + static_cast<uint64_t>(count));
    PartitionResult out;
    out.rows = c.rows;
    out.g = c.g;
    out.h = c.h;
    std::vector<int32_t> sr(c.rows.size());
    std::vector<int64_t> sg(c.rows.size()), sh(c.rows.size());
    RowPartitionArrays a{out.rows.data(), out.g.data(), out.h.data(), sr.data(), sg.data(), sh.data()};
    out.left = partition_rows(c.column.data(), c.goes_left, a, c.begin, c.end, &out.g_left, &out.h_left, pool);
    EXPECT_TRUE(same_bytes(out, reference(c, true, true))) << "count " << count;
  }
}

TEST(BoostRowPartition, SabotageUnstableOrderIsCaught) {
  ThreadPool pool(2);
  const PartitionCase c = make_case(5000, 0, 77);
  const PartitionResult want = reference(c, true, true);
  // An unstable partition keeps the sides and the sums but not the order: must differ.
  EXPECT_FALSE(same_bytes(reference(c, true, false), want));
  // Blocked layout with the right rows of two blocks swapped (a wrong prefix offset).
  PartitionResult broken = run_partition(c, true, 1000, pool);
  ASSERT_TRUE(same_bytes(broken, want));
  const int64_t r0 = broken.left;
  std::swap(broken.rows[r0], broken.rows[r0 + 600]);
  std::swap(broken.g[r0], broken.g[r0 + 600]);
  std::swap(broken.h[r0], broken.h[r0 + 600]);
  EXPECT_FALSE(same_bytes(broken, want));
}

TEST(BoostRowPartition, BadBlockIsAnError) {
  ThreadPool pool(1);
  const PartitionCase c = make_case(10, 0, 5);
  EXPECT_THROW(run_partition(c, true, -1, pool), Error);
}

}  // namespace
}  // namespace bl::ml
