// Weight-stationary CPU GEMM (kernels/matmul_packed.h): op(B) packed once, products that only
// pack A.
//
// A is packed once per product into row panels (the layout matmul_cpu packs per task). Each task
// owns a block of rows and a block of columns of C and walks the k leaves in order: one tile kernel
// call per (column panel, row panel), which computes the leaf partial from +0 in ascending k and
// folds it into C. Every output is computed whole by one task in the contract order, so neither
// the partition nor the thread that runs a task can change a bit. The tile kernels and their choice by ISA (6 x 16, or 12 x 32 over two B
// panels on AVX-512) are those of matmul_cpu (matmul_tile.h).
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/matmul_blocks.h"
#include "kernels/cpu/matmul_tile.h"
#include "kernels/matmul.h"
#include "kernels/matmul_packed.h"

namespace bl {

using matmul_detail::kMatmulTileCols;
using matmul_detail::kMatmulTileRows;
using cpu::balanced_block;
using cpu::ceil_div;

namespace {

// Task block caps (multiples of the tile shape). At M = 128 rows are cut in two blocks, and
// columns in blocks of 6 panels: a GPT-2 124M projection (N = 768) gives 16 tasks, the MLP
// (N = 3072) 64. A row block's packed A leaf (72 x 256 floats) stays in L2 and a B panel
// (256 x 16) in L1 while the tile kernel sweeps the row panels.
constexpr int64_t kPackedTaskRows = 72;
constexpr int64_t kPackedTaskCols = 96;
static_assert(cpu::whole_tiles(kPackedTaskRows, kPackedTaskCols), "task blocks are whole tiles");

// One leaf (k0, kc) and one column panel p of op(B) into dst (kc steps of kMatmulTileCols).
void pack_b_panel(const float* b, int64_t n, int64_t ldb, bool trans_b, int64_t k0, int64_t kc, int64_t p,
                  float* dst) {
  const int64_t col0 = p * kMatmulTileCols;
  const int cols = static_cast<int>(std::min<int64_t>(kMatmulTileCols, n - col0));
  if (!trans_b) {
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = b + (k0 + k) * ldb + col0;
      float* out = dst + k * kMatmulTileCols;
      int j = 0;
      for (; j < cols; ++j) out[j] = src[j];
      for (; j < kMatmulTileCols; ++j) out[j] = 0.0f;
    }
    return;
  }
  for (int j = 0; j < kMatmulTileCols; ++j) {
    if (j >= cols) {
      for (int64_t k = 0; k < kc; ++k) dst[k * kMatmulTileCols + j] = 0.0f;
      continue;
    }
    const float* src = b + (col0 + j) * ldb + k0;
    for (int64_t k = 0; k < kc; ++k) dst[k * kMatmulTileCols + j] = src[k];
  }
}

// Row panel p (panel_rows rows from row p * panel_rows) and k [k0, k0 + kc) of A (row-major)
// into dst, kc steps of panel_rows values; rows past M are zero (their outputs are never stored).
template <int kPanelRows>
void pack_a_panel(const float* a, int64_t m, int64_t lda, int64_t p, int64_t k0, int64_t kc, float* dst) {
  const int64_t row0 = p * kPanelRows;
  const int rows = static_cast<int>(std::min<int64_t>(kPanelRows, m - row0));
  cpu::pack_a_row_panel<kPanelRows>(a, lda, row0, rows, k0, kc, dst);
}

}  // namespace

PackedMatrix matmul_pack_b_cpu(const float* b, int64_t k, int64_t n, int64_t ldb, bool trans_b,
                               ThreadPool* pool) {
  BL_CHECK(k >= 0 && n >= 0, "matmul_pack_b_cpu: sizes must be >= 0, got K=", k, " N=", n);
  const int64_t need_ldb = trans_b ? k : n;
  BL_CHECK(ldb >= need_ldb, "matmul_pack_b_cpu: ldb of B (", trans_b ? "transposed, N x K" : "K x N",
           ") must be >= ", need_ldb, ", got ", ldb);
  BL_CHECK(k == 0 || n == 0 || b != nullptr, "matmul_pack_b_cpu: B is null");
  PackedMatrix out;
  out.k_ = k;
  out.n_ = n;
  const int64_t panels = ceil_div(n, kMatmulTileCols);
  out.padded_n_ = panels * kMatmulTileCols;
  if (k == 0 || n == 0) return out;
  out.storage_.resize(static_cast<size_t>(k * out.padded_n_ + 16));
  const uintptr_t base = reinterpret_cast<uintptr_t>(out.storage_.data());
  out.offset_ = static_cast<int64_t>((((base + 63) & ~static_cast<uintptr_t>(63)) - base) / sizeof(float));
  float* dst = out.storage_.data() + out.offset_;
  const int64_t leaves = gemm_k_leaf_count(k);
  const int64_t padded_n = out.padded_n_;
  ThreadPool& workers = pool ? *pool : default_pool();
  // One task per (leaf, panel): pure copies, so any partition gives the same bytes.
  workers.parallel_for(leaves * panels, [&](int64_t t) {
    const int64_t leaf = t / panels, p = t % panels;
    const int64_t k0 = leaf * kGemmKLeaf;
    const int64_t kc = std::min<int64_t>(kGemmKLeaf, k - k0);
    pack_b_panel(b, n, ldb, trans_b, k0, kc, p, dst + k0 * padded_n + p * kc * kMatmulTileCols);
  });
  return out;
}

void matmul_cpu_packed_b(const float* a, int64_t m, int64_t lda, const PackedMatrix& b, float* c,
                         int64_t ldc, ThreadPool* pool) {
  const int64_t k = b.k(), n = b.n();
  BL_CHECK(m >= 0, "matmul_cpu_packed_b: M must be >= 0, got ", m);
  BL_CHECK(lda >= k, "matmul_cpu_packed_b: lda of A (M x K) must be >= K = ", k, ", got ", lda);
  BL_CHECK(ldc >= n, "matmul_cpu_packed_b: ldc of C (M x N) must be >= N = ", n, ", got ", ldc);
  if (m == 0 || n == 0) return;
  BL_CHECK(c != nullptr, "matmul_cpu_packed_b: C is null");
  if (k == 0) {  // the empty sum is +0.0
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  BL_CHECK(a != nullptr, "matmul_cpu_packed_b: A is null");
  const cpu::TileShape tile = cpu::active_tile();
  ThreadPool& workers = pool ? *pool : default_pool();

  // Phase 1: pack all of A once (pure copies, any partition gives the same bytes): leaf l, row
  // panel p at k0 * padded_m + p * kc * tile.rows, as op(B) is laid out.
  const int64_t panels_m_total = ceil_div(m, tile.rows);
  const int64_t padded_m = panels_m_total * tile.rows;
  const int64_t leaves = gemm_k_leaf_count(k);
  thread_local cpu::PackBuffer buf;  // the calling thread's; reused across calls
  float* packed_a = buf.get(static_cast<size_t>(padded_m * k));
  workers.parallel_for(leaves * panels_m_total, [&](int64_t t) {
    const int64_t leaf = t / panels_m_total, p = t % panels_m_total;
    const int64_t k0 = leaf * kGemmKLeaf;
    const int64_t kc = std::min<int64_t>(kGemmKLeaf, k - k0);
    float* dst = packed_a + k0 * padded_m + p * kc * tile.rows;
    if (tile.rows == matmul_detail::kMatmulTileRowsAvx512)
      pack_a_panel<matmul_detail::kMatmulTileRowsAvx512>(a, m, lda, p, k0, kc, dst);
    else
      pack_a_panel<kMatmulTileRows>(a, m, lda, p, k0, kc, dst);
  });

  // Phase 2: tasks over (row block, column block), all leaves of each in order. A tile spans
  // tile.col_panels adjacent packed B panels, so column blocks are whole tiles.
  const float* packed_b = b.data();
  const int64_t padded_n = b.padded_n();
  const int64_t tile_cols = int64_t{kMatmulTileCols} * tile.col_panels;
  const int64_t rows_per_task = balanced_block(m, kPackedTaskRows, tile.rows);
  const int64_t cols_per_task = balanced_block(n, kPackedTaskCols, tile_cols);
  const int64_t blocks_m = ceil_div(m, rows_per_task);
  const int64_t blocks_n = ceil_div(n, cols_per_task);
  workers.parallel_for(blocks_m * blocks_n, [&](int64_t t) {
    const int64_t m0 = (t / blocks_n) * rows_per_task, n0 = (t % blocks_n) * cols_per_task;
    const int64_t mc = std::min(rows_per_task, m - m0), nc = std::min(cols_per_task, n - n0);
    const int64_t panel_m0 = m0 / tile.rows;
    const int64_t panel_n0 = n0 / kMatmulTileCols;
    for (int64_t k0 = 0; k0 < k; k0 += kGemmKLeaf) {
      const int64_t kc = std::min<int64_t>(kGemmKLeaf, k - k0);
      const bool first_leaf = k0 == 0, last_leaf = k0 + kc == k;
      const float* leaf_a = packed_a + k0 * padded_m;
      const float* leaf_b = packed_b + k0 * padded_n;
      cpu::leaf_tiles(tile, leaf_a + panel_m0 * kc * tile.rows, leaf_b + panel_n0 * kc * kMatmulTileCols, kc, c,
                      ldc, m0, mc, n0, nc, first_leaf, last_leaf);
    }
  });
}

}  // namespace bl
