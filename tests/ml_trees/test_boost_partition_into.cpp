// The partitions of histogram boosting that write into the other row list
// (partition_rows_serial / _blocked / partition_rows to PartitionTo::scratch, ml/boosting/row_partition.h):
// the scratch arrays' positions [begin, end) must hold the stable partition of the node's
// (row, g, h) triples byte for byte, with the same left count and sums, positions outside the
// range untouched in both lists; node sizes 0, 1, primes, block boundaries and larger, block sizes
// 1 ... 8192, threads 1, 2, 3, with and without hessians. Sabotage arm: a result with two rows of
// one side swapped, and the source list read as the result, must be reported as different.
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

struct IntoCase {
  std::vector<uint8_t> column;
  uint8_t goes_left[256];
  std::vector<int32_t> rows;
  std::vector<int64_t> g, h;
  int64_t begin = 0, end = 0;
};

IntoCase make_into_case(int64_t count, int64_t pad, uint64_t stream) {
  IntoCase c;
  const int64_t n_rows = 3 * count + 3;  // rows step by 1 to 3
  c.column.resize(static_cast<size_t>(n_rows));
  for (int64_t r = 0; r < n_rows; ++r) {
    const uint32_t u = random_u32_element(41, stream, static_cast<uint64_t>(r));
    c.column[r] = (u % 13 == 0) ? 255 : static_cast<uint8_t>(u % 180);
  }
  const uint32_t split = random_u32_element(41, stream + 1, 0) % 180;
  for (int b = 0; b < 256; ++b) c.goes_left[b] = b <= static_cast<int>(split) ? 1 : 0;
  c.goes_left[255] = static_cast<uint8_t>(random_u32_element(41, stream + 1, 1) & 1u);
  c.begin = pad;
  c.end = pad + count;
  const int64_t length = count + 2 * pad;
  c.rows.assign(static_cast<size_t>(length), -7);
  c.g.assign(static_cast<size_t>(length), -11);
  c.h.assign(static_cast<size_t>(length), -13);
  int32_t r = 0;
  for (int64_t i = c.begin; i < c.end; ++i) {
    r += 1 + static_cast<int32_t>(random_u32_element(41, stream + 2, static_cast<uint64_t>(i)) % 3u);
    c.rows[i] = r;
    const uint64_t hi = random_u32_element(41, stream + 3, static_cast<uint64_t>(i));
    const uint64_t lo = random_u32_element(41, stream + 4, static_cast<uint64_t>(i));
    c.g[i] = static_cast<int64_t>((hi << 32) | lo);
    c.h[i] = static_cast<int64_t>(lo * 2246822519u);
  }
  return c;
}

// The result list (scratch) and the parts of the source list outside [begin, end).
struct IntoResult {
  std::vector<int32_t> rows, src_rows_outside;
  std::vector<int64_t> g, h, src_g_outside;
  int64_t left = 0;
  uint64_t g_left = 0, h_left = 0;
};

bool same(const IntoResult& a, const IntoResult& b) {
  auto eq = [](const auto& x, const auto& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
  };
  return a.left == b.left && a.g_left == b.g_left && a.h_left == b.h_left && eq(a.rows, b.rows) && eq(a.g, b.g) &&
         eq(a.h, b.h) && eq(a.src_rows_outside, b.src_rows_outside) && eq(a.src_g_outside, b.src_g_outside);
}

template <typename T>
std::vector<T> outside(const std::vector<T>& v, int64_t begin, int64_t end) {
  std::vector<T> out(v.begin(), v.begin() + begin);
  out.insert(out.end(), v.begin() + end, v.end());
  return out;
}

// The specification: std::stable_partition of the triples, written into a scratch list whose
// positions outside [begin, end) keep their fill value.
IntoResult reference(const IntoCase& c, bool with_h) {
  struct Triple {
    int32_t row;
    int64_t g, h;
  };
  std::vector<Triple> t;
  for (int64_t i = c.begin; i < c.end; ++i) t.push_back({c.rows[i], c.g[i], c.h[i]});
  auto left = [&](const Triple& x) { return c.goes_left[c.column[x.row]] != 0; };
  IntoResult out;
  for (const Triple& x : t) {
    if (!left(x)) continue;
    ++out.left;
    out.g_left += static_cast<uint64_t>(x.g);
    out.h_left += with_h ? static_cast<uint64_t>(x.h) : 0u;
  }
  std::stable_partition(t.begin(), t.end(), left);
  const size_t length = c.rows.size();
  out.rows.assign(length, 99);
  out.g.assign(length, 99);
  out.h.assign(length, 99);
  for (size_t j = 0; j < t.size(); ++j) {
    out.rows[c.begin + j] = t[j].row;
    out.g[c.begin + j] = t[j].g;
    if (with_h) out.h[c.begin + j] = t[j].h;
  }
  out.src_rows_outside = outside(c.rows, c.begin, c.end);
  out.src_g_outside = outside(c.g, c.begin, c.end);
  return out;
}

// block 0: the serial form; -1: the size dispatch; otherwise the blocked form with that block.
IntoResult run_into(const IntoCase& c, bool with_h, int64_t block, ThreadPool& pool) {
  std::vector<int32_t> rows = c.rows;
  std::vector<int64_t> g = c.g, h = c.h;
  IntoResult out;
  const size_t length = c.rows.size();
  out.rows.assign(length, 99);
  out.g.assign(length, 99);
  out.h.assign(length, 99);
  RowPartitionArrays a{rows.data(),     g.data(),     with_h ? h.data() : nullptr,
                       out.rows.data(), out.g.data(), with_h ? out.h.data() : nullptr};
  if (block == 0) {
    out.left = partition_rows_serial(c.column.data(), c.goes_left, a, c.begin, c.end, &out.g_left, &out.h_left,
                                     PartitionTo::scratch);
  } else if (block == -1) {
    out.left = partition_rows(c.column.data(), c.goes_left, a, c.begin, c.end, &out.g_left, &out.h_left, pool,
                              PartitionTo::scratch);
  } else {
    out.left = partition_rows_blocked(c.column.data(), c.goes_left, a, c.begin, c.end, block, &out.g_left,
                                      &out.h_left, pool, PartitionTo::scratch);
  }
  out.src_rows_outside = outside(rows, c.begin, c.end);
  out.src_g_outside = outside(g, c.begin, c.end);
  return out;
}

TEST(BoostRowPartitionInto, SerialBlockedAndDispatchEqualTheStablePartition) {
  const int64_t counts[] = {0, 1, 2, 3, 7, 31, 97, 1000, 8191, 8192, 8193, 16383, 16384, 24593};
  const int64_t blocks[] = {-1, 0, 1, 7, 64, 1000, 8192};
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  uint64_t stream = 20;
  for (int64_t count : counts) {
    for (int64_t pad : {int64_t{0}, int64_t{4}}) {
      const IntoCase c = make_into_case(count, pad, stream);
      stream += 10;
      for (bool with_h : {true, false}) {
        const IntoResult want = reference(c, with_h);
        for (int64_t block : blocks) {
          if (block == 1 && count > 1000) continue;  // one task per row: slow, says nothing new
          for (ThreadPool& pool : pools) {
            EXPECT_TRUE(same(run_into(c, with_h, block, pool), want))
                << "count " << count << " pad " << pad << " hessians " << with_h << " block " << block
                << " threads " << pool.threads();
          }
        }
      }
    }
  }
}

TEST(BoostRowPartitionInto, SabotageIsCaught) {
  ThreadPool pool(2);
  const IntoCase c = make_into_case(5000, 2, 88);
  const IntoResult want = reference(c, true);
  IntoResult broken = run_into(c, true, 1000, pool);
  ASSERT_TRUE(same(broken, want));
  std::swap(broken.rows[c.begin + 1], broken.rows[c.begin + 2]);  // two left rows out of order
  std::swap(broken.g[c.begin + 1], broken.g[c.begin + 2]);
  EXPECT_FALSE(same(broken, want));
  // The source list is not the result (reading the wrong list after a partition).
  IntoResult source = want;
  source.rows = c.rows;
  source.g = c.g;
  source.h = c.h;
  EXPECT_FALSE(same(source, want));
}

TEST(BoostRowPartitionInto, BadBlockIsAnError) {
  ThreadPool pool(1);
  const IntoCase c = make_into_case(10, 0, 5);
  EXPECT_THROW(run_into(c, true, -2, pool), Error);
}

}  // namespace
}  // namespace bl::ml
