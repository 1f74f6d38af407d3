// dbscan_neighbors.h: dbscan's eps-neighborhoods (dbscan.cpp), internal to the library and its
// tests.
//
// The neighbor rule: j is a neighbor of i when P_ij <= eps2, where P_ij is the exact-path squared
// distance sum_f (x_if - x_jf)^2 (Tensor ops sub, square, then sum over the d features in the
// contract's reduction schedule, which depends only on d). P_ij == P_ji bit for bit (x_jf - x_if
// is the exact negation of x_if - x_jf, and the squares are equal). A list holds its row's
// neighbors in ascending index, the row itself included when P_ii = 0 <= eps2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bitlearn/device_hints.h"
#include "bitlearn/tensor.h"

namespace bl::ml::dbscan_detail {

using Lists = std::vector<std::vector<int64_t>>;

// The prefilter's tiles: `rows` query rows against `cols` rows (a multiple of `rows`) whose first
// index is a multiple of `cols`, so only a few tile shapes recur and the allocator reuses their
// blocks. The estimator sizes them by bl::tile_bytes_hint of the data's device (tiles_for); the
// tiling reaches no result, and the tests pass other tiles to prove it.
struct Tiles {
  int64_t rows = 0;  // 0: tiles_for(X's device)
  int64_t cols = 0;
};
// rows x 8 rows, rows the largest power of two >= 256 whose f32 tile fits tile_bytes_hint(device).
Tiles tiles_for(Device device);

// The eps-neighborhoods of the rows of X [n, d] (f32, finite, on any device): GEMM prefilter, then
// P_ij for the candidate pairs only (dbscan.cpp's header has the bound). Throws a bl::Error
// starting with `context` when the lists hold more than max_pairs entries in all. margin_scale
// multiplies the prefilter's rounding margin: 1 in the estimator; the tests pass 0 (a sabotaged
// filter without margin) to show that the margin is needed.
Lists neighborhoods(const Tensor& X, float eps2, int64_t max_pairs, const std::string& context,
                    double margin_scale = 1.0, Tiles tiles = {});

// The same lists from P_ij of every pair (sub, square, sum over [a, n, d] blocks): the reference.
Lists neighborhoods_all_pairs(const Tensor& X, float eps2);

// For each row of Q [m, d]: the lowest index j of C [c, d] (c >= 1) with the smallest P_qj when
// that P is <= eps2, else -1. Prefiltered as neighborhoods(); margin_scale as there.
std::vector<int64_t> nearest_within(const Tensor& Q, const Tensor& C, float eps2, double margin_scale = 1.0,
                                    Tiles tiles = {});

// The same from P of every pair (argmin and amin over [a, c] blocks): the reference.
std::vector<int64_t> nearest_within_all_pairs(const Tensor& Q, const Tensor& C, float eps2);

}  // namespace bl::ml::dbscan_detail
