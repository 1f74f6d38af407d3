// row_partition.cpp: serial and blocked stable row partitions (see row_partition.h).
#include "ml/boosting/row_partition.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::ml {

namespace {

constexpr int64_t kPrefetchAhead = 16;  // rows

// Every row is written to both sides' next slot and only its own side advances (a data-dependent
// branch mispredicts about half the time). In place (kInto false), left rows go to the source at
// slot begin + nl and right rows to the scratch arrays at begin + nr; into the scratch arrays
// (kInto true), the roles swap. Either way a slot is written only after the row it held was read
// (nl, nr <= i), and at the end the right rows are copied after the left ones.
template <bool kHasHessian, bool kInto>
int64_t serial_impl(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a, int64_t begin,
                    int64_t end, uint64_t* g_left, uint64_t* h_left) {
  int32_t* rows = a.rows + begin;
  int64_t* rg = a.g + begin;
  int64_t* rh = kHasHessian ? a.h + begin : nullptr;
  int32_t* scratch_rows = a.scratch_rows + begin;
  int64_t* scratch_g = a.scratch_g + begin;
  int64_t* scratch_h = kHasHessian ? a.scratch_h + begin : nullptr;
  int32_t* left_rows = kInto ? scratch_rows : rows;
  int64_t* left_g = kInto ? scratch_g : rg;
  int64_t* left_h = kInto ? scratch_h : rh;
  int32_t* right_rows = kInto ? rows : scratch_rows;
  int64_t* right_g = kInto ? rg : scratch_g;
  int64_t* right_h = kInto ? rh : scratch_h;
  const int64_t count = end - begin;
  int64_t nl = 0, nr = 0;
  uint64_t gs = 0, hs = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (i + kPrefetchAhead < count) __builtin_prefetch(column + rows[i + kPrefetchAhead]);
    const int32_t r = rows[i];
    const int64_t g = rg[i];
    const int64_t left = goes_left[column[r]];
    const uint64_t mask = uint64_t{0} - static_cast<uint64_t>(left);
    left_rows[nl] = r;
    left_g[nl] = g;
    right_rows[nr] = r;
    right_g[nr] = g;
    gs += static_cast<uint64_t>(g) & mask;
    if (kHasHessian) {
      const int64_t h = rh[i];
      left_h[nl] = h;
      right_h[nr] = h;
      hs += static_cast<uint64_t>(h) & mask;
    }
    nl += left;
    nr += 1 - left;
  }
  std::copy(right_rows, right_rows + nr, left_rows + nl);
  std::copy(right_g, right_g + nr, left_g + nl);
  if (kHasHessian) std::copy(right_h, right_h + nr, left_h + nl);
  *g_left += gs;
  *h_left += hs;
  return nl;
}

// Block step 1: records the side of positions [i0, i1) in side[i - i0] and returns their left
// count. Plain pointer parameters: the byte stores to `side` may alias anything, and pointers read
// from a struct would be reloaded once per row.
int64_t count_block(const uint8_t* column, const uint8_t* goes_left, const int32_t* rows, int64_t i0, int64_t i1,
                    uint8_t* side) {
  int64_t nl = 0;
  for (int64_t i = i0; i < i1; ++i) {
    if (i + kPrefetchAhead < i1) __builtin_prefetch(column + rows[i + kPrefetchAhead]);
    const uint8_t left = goes_left[column[rows[i]]];
    side[i - i0] = left;
    nl += left;
  }
  return nl;
}

// Block step 2: writes positions [i0, i1) to the scratch arrays, left rows from li on and right
// rows from ri on, in position order, and sums the left rows' pairs into *g_left, *h_left.
template <bool kHasHessian>
void scatter_block(const uint8_t* side, const int32_t* rows, const int64_t* g, const int64_t* h, int64_t i0,
                   int64_t i1, int64_t li, int64_t ri, int32_t* out_rows, int64_t* out_g, int64_t* out_h,
                   uint64_t* g_left, uint64_t* h_left) {
  uint64_t gs = 0, hs = 0;
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t left = side[i - i0];
    const uint64_t mask = uint64_t{0} - static_cast<uint64_t>(left);
    const int64_t pos = left ? li : ri;
    out_rows[pos] = rows[i];
    out_g[pos] = g[i];
    gs += static_cast<uint64_t>(g[i]) & mask;
    if (kHasHessian) {
      out_h[pos] = h[i];
      hs += static_cast<uint64_t>(h[i]) & mask;
    }
    li += left;
    ri += 1 - left;
  }
  *g_left = gs;
  *h_left = hs;
}

// Blocks of `block` positions from begin: (1) each block records its rows' sides and counts its
// left rows, (2) block b's left rows go to begin + (left rows of blocks < b) and its
// right rows to begin + (all left rows) + (right rows of blocks < b), in block order: together the
// serial partition's order (the left sums are formed here), (3) with copy_back, the scratch range
// is copied back.
template <bool kHasHessian>
int64_t blocked_impl(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a, int64_t begin,
                     int64_t end, int64_t block, bool copy_back, uint64_t* g_left, uint64_t* h_left,
                     ThreadPool& pool) {
  const int64_t count = end - begin;
  const int64_t n_blocks = (count + block - 1) / block;
  std::unique_ptr<uint8_t[]> side(new uint8_t[static_cast<size_t>(count)]);
  std::vector<int64_t> left_count(static_cast<size_t>(n_blocks));
  std::vector<uint64_t> g_sum(static_cast<size_t>(n_blocks)), h_sum(static_cast<size_t>(n_blocks));
  pool.parallel_for(n_blocks, [&](int64_t b) {
    const int64_t i0 = begin + b * block, i1 = std::min(end, i0 + block);
    left_count[b] = count_block(column, goes_left, a.rows, i0, i1, side.get() + (i0 - begin));
  });
  std::vector<int64_t> left_before(static_cast<size_t>(n_blocks));
  int64_t nl_total = 0;
  for (int64_t b = 0; b < n_blocks; ++b) {
    left_before[b] = nl_total;
    nl_total += left_count[b];
  }
  pool.parallel_for(n_blocks, [&](int64_t b) {
    const int64_t i0 = begin + b * block, i1 = std::min(end, i0 + block);
    const int64_t li = begin + left_before[b];
    const int64_t ri = begin + nl_total + (i0 - begin - left_before[b]);
    scatter_block<kHasHessian>(side.get() + (i0 - begin), a.rows, a.g, a.h, i0, i1, li, ri, a.scratch_rows,
                               a.scratch_g, a.scratch_h, &g_sum[b], &h_sum[b]);
  });
  if (copy_back) pool.parallel_for(n_blocks, [&](int64_t b) {
    const int64_t i0 = begin + b * block, i1 = std::min(end, i0 + block);
    std::copy(a.scratch_rows + i0, a.scratch_rows + i1, a.rows + i0);
    std::copy(a.scratch_g + i0, a.scratch_g + i1, a.g + i0);
    if (kHasHessian) std::copy(a.scratch_h + i0, a.scratch_h + i1, a.h + i0);
  });
  uint64_t gs = 0, hs = 0;
  for (int64_t b = 0; b < n_blocks; ++b) {
    gs += g_sum[b];
    hs += h_sum[b];
  }
  *g_left += gs;
  *h_left += hs;
  return nl_total;
}

// These pick the hessian instantiation once for both destinations.
template <bool kInto>
int64_t serial_dispatch(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                        int64_t begin, int64_t end, uint64_t* g_left, uint64_t* h_left) {
  return a.h ? serial_impl<true, kInto>(column, goes_left, a, begin, end, g_left, h_left)
             : serial_impl<false, kInto>(column, goes_left, a, begin, end, g_left, h_left);
}

int64_t blocked_dispatch(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                         int64_t begin, int64_t end, int64_t block, bool copy_back, uint64_t* g_left,
                         uint64_t* h_left, ThreadPool& pool) {
  if (end <= begin) return 0;
  return a.h ? blocked_impl<true>(column, goes_left, a, begin, end, block, copy_back, g_left, h_left, pool)
             : blocked_impl<false>(column, goes_left, a, begin, end, block, copy_back, g_left, h_left, pool);
}

}  // namespace

int64_t partition_rows_serial(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                              int64_t begin, int64_t end, uint64_t* g_left, uint64_t* h_left, PartitionTo to) {
  return to == PartitionTo::scratch ? serial_dispatch<true>(column, goes_left, a, begin, end, g_left, h_left)
                                    : serial_dispatch<false>(column, goes_left, a, begin, end, g_left, h_left);
}

int64_t partition_rows_blocked(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                               int64_t begin, int64_t end, int64_t block, uint64_t* g_left, uint64_t* h_left,
                               ThreadPool& pool, PartitionTo to) {
  BL_CHECK(block >= 1, "partition_rows_blocked: block must be >= 1 rows, got ", block);
  return blocked_dispatch(column, goes_left, a, begin, end, block, to == PartitionTo::source, g_left, h_left, pool);
}

int64_t partition_rows(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                       int64_t begin, int64_t end, uint64_t* g_left, uint64_t* h_left, ThreadPool& pool,
                       PartitionTo to) {
  if (end - begin >= 2 * kPartitionBlock) {
    return partition_rows_blocked(column, goes_left, a, begin, end, kPartitionBlock, g_left, h_left, pool, to);
  }
  return partition_rows_serial(column, goes_left, a, begin, end, g_left, h_left, to);
}

}  // namespace bl::ml
