// nearest_rows_tile.h: the distance + selection epilogue of the fused CPU neighbors
// (internal to nearest_rows.cpp and its per-ISA files).
//
// The driver computes a tile of dot products dot[r][c] (rows queries x cols training rows, row
// pitch ld) with a contract GEMM tile kernel; an epilogue turns each into the distance
// relu((-2 * dot + qq[r]) + tt[c]) (one fma, one add, relu(x) = x > 0 ? x : +0, so a NaN gives +0)
// and offers it to query r's list, columns in ascending order.
#pragma once

#include <cstdint>

namespace bl::ml::neighbors_detail {

// One query's list while it is built: the first `filled` of dist/idx hold the nearest rows offered
// so far, ascending by distance, equal distances in ascending index.
struct NeighborList {
  float* dist;
  int64_t* idx;
  int64_t filled;
};

// Offers training row j at distance dd to a list of capacity k: kept when the list has room or
// dd is strictly below its last distance; it goes after every entry with an equal distance.
// static: the per-ISA objects keep their own copy (scripts/check_isa_objects.sh).
static inline void offer_neighbor(NeighborList& list, int64_t k, float dd, int64_t j) {
  if (list.filled == k && !(dd < list.dist[k - 1])) return;
  int64_t pos = list.filled < k ? list.filled++ : k - 1;
  while (pos > 0 && dd < list.dist[pos - 1]) {
    list.dist[pos] = list.dist[pos - 1];
    list.idx[pos] = list.idx[pos - 1];
    --pos;
  }
  list.dist[pos] = dd;
  list.idx[pos] = j;
}

// Distances of a tile of dots and their offers. qq: the rows' |q|^2; tt: |t|^2 of columns col0,
// col0 + 1, ... (readable up to a multiple of 8 past cols); lists: the rows' lists, capacity k.
using TileEpilogue = void (*)(const float* dots, int64_t ld, int rows, int cols, const float* qq,
                              const float* tt, int64_t col0, int64_t k, NeighborList* lists);

// Scalar epilogue (any CPU): bl::fma and bl::add in the order above.
void nearest_epilogue_portable(const float* dots, int64_t ld, int rows, int cols, const float* qq,
                               const float* tt, int64_t col0, int64_t k, NeighborList* lists);

// AVX2+FMA epilogue: 8 columns per vector, a compare against the list's last distance, and the
// scalar offer only for the lanes below it (in ascending column order). Call only when
// bl::cpu_has_avx2_fma() is true.
void nearest_epilogue_avx2(const float* dots, int64_t ld, int rows, int cols, const float* qq,
                           const float* tt, int64_t col0, int64_t k, NeighborList* lists);

}  // namespace bl::ml::neighbors_detail
