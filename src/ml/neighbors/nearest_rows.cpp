// nearest_rows.cpp: the k nearest training rows per query (nearest_rows.h): the GEMM path (any
// device) and the fused CPU path with its portable epilogue.
#include "ml/neighbors/nearest_rows.h"

#include <algorithm>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/schedule.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/matmul_tile.h"
#include "ml/cluster/distances.h"
#include "ml/neighbors/cpu/nearest_rows_tile.h"

namespace bl::ml {

using neighbors_detail::NeighborList;
using neighbors_detail::offer_neighbor;

NeighborLists nearest_rows_gemm(const Tensor& Q, const Tensor& T, const std::vector<float>& tt, int64_t k) {
  const int64_t m = Q.dim(0), n = T.dim(0);
  BL_CHECK(k >= 1 && k <= n, "nearest_rows_gemm: k=", k, " must be in [1, ", n, "] (the training rows)");
  NeighborLists out;
  out.k = k;
  out.idx.resize(static_cast<size_t>(m * k));
  out.dist.resize(static_cast<size_t>(m * k));
  // Query blocks hold at most 2^24 / n rows (at least 1); blocks do not change results.
  const int64_t block = std::max<int64_t>(1, (int64_t{1} << 24) / n);
  for (int64_t r0 = 0; r0 < m; r0 += block) {
    const int64_t r1 = std::min(m, r0 + block);
    Tensor Qb = Q.slice(0, r0, r1);
    std::vector<float> xq = row_sq_norms(Qb).to(Device::cpu()).to_vector<float>();
    Tensor xct = bl::matmul(Qb, T, false, true).to(Device::cpu()).contiguous();
    const float* xc = xct.data<float>();
    // One task per query row, training rows in ascending j.
    default_pool().parallel_for(r1 - r0, [&](int64_t i) {
      const float* row = xc + i * n;
      NeighborList list{out.dist.data() + (r0 + i) * k, out.idx.data() + (r0 + i) * k, 0};
      for (int64_t j = 0; j < n; ++j) {
        float dd = bl::add(bl::fma(-2.0f, row[j], xq[i]), tt[j]);
        dd = dd > 0.0f ? dd : 0.0f;
        offer_neighbor(list, k, dd, j);
      }
    });
    report_progress("neighbors", r1, m);
  }
  return out;
}

namespace neighbors_detail {

void nearest_epilogue_portable(const float* dots, int64_t ld, int rows, int cols, const float* qq,
                               const float* tt, int64_t col0, int64_t k, NeighborList* lists) {
  for (int r = 0; r < rows; ++r) {
    const float* row = dots + r * ld;
    for (int c = 0; c < cols; ++c) {
      float dd = bl::add(bl::fma(-2.0f, row[c], qq[r]), tt[c]);
      dd = dd > 0.0f ? dd : 0.0f;
      offer_neighbor(lists[r], k, dd, col0 + c);
    }
  }
}

}  // namespace neighbors_detail

namespace {

using matmul_detail::kMatmulTileCols;
using matmul_detail::TileKernel;
using neighbors_detail::TileEpilogue;

// Queries per task: whole tile panels of either tile shape (6 and 12 rows).
constexpr int64_t kTaskQueries = 48;
// Largest tile: 12 rows x 32 columns (the AVX-512 GEMM tile).
constexpr int kMaxTileRows = 12;
constexpr int kMaxTileCols = 32;
// Training rows swept by all of a task's query panels before the next ones: about 128 KB of
// packed rows, so they stay in L2 while every panel of queries passes over them.
constexpr int64_t kChunkFloats = int64_t{1} << 15;

struct FusedTile {
  int rows;        // queries per tile
  int col_panels;  // packed training panels (of 16 rows) per tile
  TileKernel kernel;
  TileEpilogue epilogue;
};

FusedTile pick_fused_tile(NearestRowsVariant variant) {
  if (variant == NearestRowsVariant::portable)
    return {matmul_detail::kMatmulTileRows, 1, &matmul_detail::matmul_tile_portable,
            &neighbors_detail::nearest_epilogue_portable};
  // The epilogue has an AVX2 build only (AVX-512 CPUs run it too).
  static const FusedTile kAvx2{matmul_detail::kMatmulTileRows, 1, &matmul_detail::matmul_tile_avx2,
                               &neighbors_detail::nearest_epilogue_avx2};
  static const FusedTile kAvx512{matmul_detail::kMatmulTileRowsAvx512, matmul_detail::kMatmulTilePanelsAvx512,
                                 &matmul_detail::matmul_tile_avx512, &neighbors_detail::nearest_epilogue_avx2};
  static const FusedTile kNeon{matmul_detail::kMatmulTileRows, 1, &matmul_detail::matmul_tile_neon,
                               &neighbors_detail::nearest_epilogue_portable};
  static const FusedTile kScalar{matmul_detail::kMatmulTileRows, 1, &matmul_detail::matmul_tile_portable,
                                 &neighbors_detail::nearest_epilogue_portable};
  return *select_isa<const FusedTile*>(&kScalar, &kAvx2, &kAvx512, &kNeon);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Rows [row0, row0 + rows) of q (pitch d) packed as the GEMM tile kernels read A: leaf l (k0, kc)
// of panel p at k0 * padded_rows + p * kc * tile_rows, step k of row r at [k * tile_rows + r];
// rows past `rows` are zero (their dots are never used).
void pack_queries(const float* q, int64_t d, int64_t rows, int tile_rows, float* dst) {
  const int64_t panels = ceil_div(rows, tile_rows);
  const int64_t padded_rows = panels * tile_rows;
  for (int64_t k0 = 0; k0 < d; k0 += kGemmKLeaf) {
    const int64_t kc = std::min<int64_t>(kGemmKLeaf, d - k0);
    for (int64_t p = 0; p < panels; ++p) {
      float* out = dst + k0 * padded_rows + p * kc * tile_rows;
      for (int r = 0; r < tile_rows; ++r) {
        const int64_t row = p * tile_rows + r;
        for (int64_t k = 0; k < kc; ++k) out[k * tile_rows + r] = row < rows ? q[row * d + k0 + k] : 0.0f;
      }
    }
  }
}

}  // namespace

NeighborLists nearest_rows_cpu(const float* q, int64_t m, const float* qq, const PackedMatrix& packed,
                               const float* tt, int64_t k, NearestRowsVariant variant, ThreadPool* pool) {
  const int64_t d = packed.k(), n = packed.n();
  BL_CHECK(k >= 1 && k <= n, "nearest_rows_cpu: k=", k, " must be in [1, ", n, "] (the training rows)");
  BL_CHECK(m >= 0, "nearest_rows_cpu: m must be >= 0, got ", m);
  BL_CHECK(m == 0 || (q != nullptr && qq != nullptr), "nearest_rows_cpu: queries are null");
  BL_CHECK(tt != nullptr, "nearest_rows_cpu: training norms are null");
  NeighborLists out;
  out.k = k;
  out.idx.resize(static_cast<size_t>(m * k));
  out.dist.resize(static_cast<size_t>(m * k));
  if (m == 0) return out;

  const FusedTile tile = pick_fused_tile(variant);
  const int64_t tile_cols = int64_t{kMatmulTileCols} * tile.col_panels;
  // |t|^2 padded with zeros to whole vectors past the last tile (those lanes are never offered).
  std::vector<float> tt_padded(static_cast<size_t>(ceil_div(n, kMaxTileCols) * kMaxTileCols + 8), 0.0f);
  std::copy(tt, tt + n, tt_padded.begin());
  const int64_t chunk = std::max<int64_t>(1, kChunkFloats / std::max<int64_t>(d, 1) / kMaxTileCols) * kMaxTileCols;
  const float* packed_b = packed.data();
  const int64_t padded_n = packed.padded_n();
  const int64_t tasks = ceil_div(m, kTaskQueries);
  ThreadPool& workers = pool ? *pool : default_pool();
  workers.parallel_for(tasks, [&](int64_t t) {
    const int64_t m0 = t * kTaskQueries, mc = std::min(kTaskQueries, m - m0);
    const int64_t panels = ceil_div(mc, tile.rows), padded_rows = panels * tile.rows;
    std::vector<float> packed_q(static_cast<size_t>(std::max<int64_t>(padded_rows * d, 1)));
    pack_queries(q + m0 * d, d, mc, tile.rows, packed_q.data());
    NeighborList lists[kTaskQueries];
    for (int64_t i = 0; i < mc; ++i) lists[i] = {out.dist.data() + (m0 + i) * k, out.idx.data() + (m0 + i) * k, 0};
    alignas(64) float dots[kMaxTileRows * kMaxTileCols] = {};  // stays +0 when d == 0 (the empty sum)
    for (int64_t c0 = 0; c0 < n; c0 += chunk) {
      const int64_t c1 = std::min(n, c0 + chunk);
      for (int64_t p = 0; p < panels; ++p) {
        const int rows = static_cast<int>(std::min<int64_t>(tile.rows, mc - p * tile.rows));
        for (int64_t col0 = c0; col0 < c1; col0 += tile_cols) {
          const int cols = static_cast<int>(std::min(tile_cols, c1 - col0));
          for (int64_t k0 = 0; k0 < d; k0 += kGemmKLeaf) {
            const int64_t kc = std::min<int64_t>(kGemmKLeaf, d - k0);
            tile.kernel(packed_q.data() + k0 * padded_rows + p * kc * tile.rows,
                        packed_b + k0 * padded_n + (col0 / kMatmulTileCols) * kc * kMatmulTileCols, kc, dots,
                        tile_cols, rows, cols, k0 == 0, k0 + kc == d);
          }
          tile.epilogue(dots, tile_cols, rows, cols, qq + m0 + p * tile.rows, tt_padded.data() + col0, col0, k,
                        lists + p * tile.rows);
        }
      }
    }
  });
  return out;
}

}  // namespace bl::ml
