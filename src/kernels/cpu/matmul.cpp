// CPU contract GEMM: argument checks, packing, the task partition and the portable tile kernel.
//
// Blocking: the k range is walked one contract leaf (kGemmKLeaf = 256) at a time, so the packed
// k-block IS the leaf and the tile kernels fold each leaf partial into C right after computing it.
// Tasks are (batch entry, block of up to kTaskRows rows, block of up to kTaskCols columns): a
// partition that depends on the problem size only. Every output is computed whole by one task in the contract
// order, so the bits do not depend on the partition or on which thread runs which task.
// The ISA variant picks the tile (TileConfig): its A panel height, how many packed B panels of
// kMatmulTileCols it spans and the column cap of a task; the packed B layout is the same for all.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/matmul_blocks.h"
#include "kernels/cpu/matmul_tile.h"
#include "kernels/matmul.h"

namespace bl {

using matmul_detail::kMatmulTileCols;
using matmul_detail::kMatmulTileRows;
using matmul_detail::kMatmulTileRowsAvx512;
using cpu::balanced_block;
using cpu::ceil_div;
using cpu::PackBuffer;

namespace {

// Largest task block sizes (multiples of the tile shape). 144 x 256 floats of packed A stay in L2
// while a 256 x 16 panel of packed B stays in L1. balanced_block() evens the blocks out.
constexpr int64_t kTaskRows = 144;
constexpr int64_t kTaskCols = 1024;
// The AVX2 and AVX-512 variants cut columns into blocks of at most 256 (for AVX-512 a 256 x 32 B
// tile is 32 KiB, in L1 with the A panel). Narrow blocks give 16 threads work at N = 1024: 32
// tasks at 1024^3 instead of the 8 that 1024-column blocks make, of which 16 threads ran half.
// The portable and NEON variants keep 1024 (not measured on many-core machines).
constexpr int64_t kTaskColsSimd = 256;
static_assert(cpu::whole_tiles(kTaskRows, kTaskCols) && cpu::whole_tiles(kTaskRows, kTaskColsSimd),
              "task blocks are whole tiles");

// The tile of one ISA variant (matmul_blocks.h) and the column cap of a task. None of it changes a
// bit (every output is one task's fma chain).
struct TileConfig : cpu::TileShape {
  int64_t task_cols;
};

// Rows [m0, m0 + mc) and k [k0, k0 + kc) of op(A) into panels of kPanelRows rows; rows past
// M are zero (their outputs are never stored). Written in k order, one panel step at a time, so
// the stores stream and the reads run along kPanelRows rows at once. A template so the inner
// loop has a constant trip count (6 for the scalar/AVX2/NEON tiles, 12 for AVX-512).
template <int kPanelRows>
void pack_a_panels(const MatmulArgs& args, const float* a, int64_t m0, int64_t mc, int64_t k0,
                   int64_t kc, float* dst) {
  for (int64_t p = 0; p < ceil_div(mc, kPanelRows); ++p) {
    float* panel = dst + p * kc * kPanelRows;
    int64_t row0 = m0 + p * kPanelRows;
    int rows = static_cast<int>(std::min<int64_t>(kPanelRows, m0 + mc - row0));
    if (args.trans_a) {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = a + (k0 + k) * args.lda + row0;
        float* out = panel + k * kPanelRows;
        int r = 0;
        for (; r < rows; ++r) out[r] = src[r];
        for (; r < kPanelRows; ++r) out[r] = 0.0f;
      }
      continue;
    }
    cpu::pack_a_row_panel<kPanelRows>(a, args.lda, row0, rows, k0, kc, panel);
  }
}

void pack_a(const MatmulArgs& args, const float* a, int64_t m0, int64_t mc, int64_t k0, int64_t kc,
            int panel_rows, float* dst) {
  if (panel_rows == kMatmulTileRowsAvx512)
    pack_a_panels<kMatmulTileRowsAvx512>(args, a, m0, mc, k0, kc, dst);
  else
    pack_a_panels<kMatmulTileRows>(args, a, m0, mc, k0, kc, dst);
}

// Columns [n0, n0 + nc) and k [k0, k0 + kc) of op(B) into panels of kMatmulTileCols columns;
// columns past N are zero.
void pack_b(const MatmulArgs& args, const float* b, int64_t n0, int64_t nc, int64_t k0, int64_t kc,
            float* dst) {
  const int64_t panels = ceil_div(nc, kMatmulTileCols);
  if (!args.trans_b) {
    // Row by row of B, so reads stream through memory; whole panels are fixed-size copies.
    const int64_t full = nc / kMatmulTileCols;
    const int tail = static_cast<int>(nc - full * kMatmulTileCols);
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = b + (k0 + k) * args.ldb + n0;
      float* out = dst + k * kMatmulTileCols;
      for (int64_t p = 0; p < full; ++p) {
        std::memcpy(out + p * kc * kMatmulTileCols, src + p * kMatmulTileCols,
                    sizeof(float) * kMatmulTileCols);
      }
      if (tail > 0) {
        float* last = out + full * kc * kMatmulTileCols;
        int j = 0;
        for (; j < tail; ++j) last[j] = src[full * kMatmulTileCols + j];
        for (; j < kMatmulTileCols; ++j) last[j] = 0.0f;
      }
    }
    return;
  }
  for (int64_t p = 0; p < panels; ++p) {
    float* panel = dst + p * kc * kMatmulTileCols;
    const int cols = static_cast<int>(std::min<int64_t>(kMatmulTileCols, nc - p * kMatmulTileCols));
    for (int j = 0; j < kMatmulTileCols; ++j) {
      if (j >= cols) {
        for (int64_t k = 0; k < kc; ++k) panel[k * kMatmulTileCols + j] = 0.0f;
        continue;
      }
      const float* src = b + (n0 + p * kMatmulTileCols + j) * args.ldb + k0;
      for (int64_t k = 0; k < kc; ++k) panel[k * kMatmulTileCols + j] = src[k];
    }
  }
}

// Packed op(B) of one batch entry: leaf l, column panel p starts at
// l * kGemmKLeaf * padded_n + p * kc(l) * kMatmulTileCols, where padded_n is N rounded up to whole
// panels. It is packed once per call and shared by every task, so each element of B is copied once.

// One task: all leaves of one (batch entry, row block, column block).
// A tile spans tile.col_panels adjacent panels (columns col0 .. col0 + cols); its panels lie one
// after another in packed B, so the kernel finds panel q at pb + q * kc * kMatmulTileCols.
void run_task(const MatmulArgs& args, const float* a, const float* packed_b, int64_t padded_n,
              float* c, int64_t m0, int64_t mc, int64_t n0, int64_t nc, const TileConfig& tile) {
  thread_local PackBuffer buf_a;
  const int64_t panels_m = ceil_div(mc, tile.rows);
  const int64_t panel0 = n0 / kMatmulTileCols;
  float* packed_a = buf_a.get(static_cast<size_t>(panels_m * tile.rows * kGemmKLeaf));
  for (int64_t k0 = 0; k0 < args.k; k0 += kGemmKLeaf) {
    const int64_t kc = std::min<int64_t>(kGemmKLeaf, args.k - k0);
    const bool first_leaf = (k0 == 0);
    const bool last_leaf = (k0 + kc == args.k);
    const float* leaf_b = packed_b + k0 * padded_n;
    pack_a(args, a, m0, mc, k0, kc, tile.rows, packed_a);
    cpu::leaf_tiles(tile, packed_a, leaf_b + panel0 * kc * kMatmulTileCols, kc, c, args.ldc, m0, mc, n0, nc,
                    first_leaf, last_leaf);
  }
}

void matmul_cpu_with(const char* op, const MatmulArgs& args, const float* a, const float* b,
                     float* c, ThreadPool* pool, const TileConfig& tile) {
  matmul_check_args(op, args, a, b, c);
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  if (args.k == 0) {  // the empty sum is +0.0
    for (int64_t bi = 0; bi < args.batch; ++bi)
      for (int64_t m = 0; m < args.m; ++m)
        std::fill(c + bi * args.stride_c + m * args.ldc,
                  c + bi * args.stride_c + m * args.ldc + args.n, 0.0f);
    return;
  }
  ThreadPool& workers = pool ? *pool : default_pool();

  // Phase 1: pack op(B) (no arithmetic, any partition gives the same bytes).
  const int64_t panels_total = ceil_div(args.n, kMatmulTileCols);
  const int64_t padded_n = panels_total * kMatmulTileCols;
  const int64_t b_entries = args.stride_b == 0 ? 1 : args.batch;
  const int64_t entry_floats = args.k * padded_n;
  thread_local PackBuffer buf_b;  // the calling thread's; reused across calls
  float* packed_b = buf_b.get(static_cast<size_t>(b_entries * entry_floats));
  const int64_t leaves = gemm_k_leaf_count(args.k);
  constexpr int64_t kPackPanels = 16;  // panels per packing task
  const int64_t pack_chunks = ceil_div(panels_total, kPackPanels);
  workers.parallel_for(b_entries * leaves * pack_chunks, [&](int64_t t) {
    const int64_t chunk = t % pack_chunks;
    const int64_t leaf = (t / pack_chunks) % leaves;
    const int64_t bi = t / (pack_chunks * leaves);
    const int64_t k0 = leaf * kGemmKLeaf;
    const int64_t kc = std::min<int64_t>(kGemmKLeaf, args.k - k0);
    const int64_t n0 = chunk * kPackPanels * kMatmulTileCols;
    const int64_t nc = std::min<int64_t>(kPackPanels * kMatmulTileCols, args.n - n0);
    pack_b(args, b + bi * args.stride_b, n0, nc, k0, kc,
           packed_b + bi * entry_floats + k0 * padded_n + chunk * kPackPanels * kc * kMatmulTileCols);
  });

  // Phase 2: tasks over (batch entry, row block, column block).
  const int64_t rows_per_task = balanced_block(args.m, kTaskRows, tile.rows);
  const int64_t cols_per_task =
      balanced_block(args.n, tile.task_cols, int64_t{kMatmulTileCols} * tile.col_panels);
  const int64_t blocks_m = ceil_div(args.m, rows_per_task);
  const int64_t blocks_n = ceil_div(args.n, cols_per_task);
  const int64_t n_tasks = args.batch * blocks_m * blocks_n;
  const int64_t b_entry_stride = args.stride_b == 0 ? 0 : entry_floats;
  workers.parallel_for(n_tasks, [&](int64_t t) {
    const int64_t bn = t % blocks_n;
    const int64_t bm = (t / blocks_n) % blocks_m;
    const int64_t bi = t / (blocks_n * blocks_m);
    const int64_t m0 = bm * rows_per_task;
    const int64_t n0 = bn * cols_per_task;
    run_task(args, a + bi * args.stride_a, packed_b + bi * b_entry_stride, padded_n,
             c + bi * args.stride_c, m0, std::min(rows_per_task, args.m - m0), n0,
             std::min(cols_per_task, args.n - n0), tile);
  });
}

}  // namespace

namespace matmul_detail {

void matmul_fold_partial(const float* partial, float* c, int64_t ldc, int rows, int cols,
                         bool first_leaf, bool last_leaf) {
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < cols; ++j) {
      float p = partial[r * kMatmulTileCols + j];
      float v = first_leaf ? p : add(c[r * ldc + j], p);
      c[r * ldc + j] = last_leaf ? canonicalize(v) : v;
    }
  }
}

void matmul_tile_portable(const float* packed_a, const float* packed_b, int64_t kc, float* c,
                          int64_t ldc, int rows, int cols, bool first_leaf, bool last_leaf) {
  float acc[kMatmulTileRows * kMatmulTileCols];
  for (int i = 0; i < kMatmulTileRows * kMatmulTileCols; ++i) acc[i] = 0.0f;
  for (int64_t k = 0; k < kc; ++k) {
    const float* pa = packed_a + k * kMatmulTileRows;
    const float* pb = packed_b + k * kMatmulTileCols;
    for (int r = 0; r < kMatmulTileRows; ++r)
      for (int j = 0; j < kMatmulTileCols; ++j)
        acc[r * kMatmulTileCols + j] = fma(pa[r], pb[j], acc[r * kMatmulTileCols + j]);
  }
  matmul_fold_partial(acc, c, ldc, rows, cols, first_leaf, last_leaf);
}

}  // namespace matmul_detail

MatmulArgs matmul_dense_args(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_a,
                             bool trans_b) {
  MatmulArgs args;
  args.batch = batch;
  args.m = m;
  args.n = n;
  args.k = k;
  args.trans_a = trans_a;
  args.trans_b = trans_b;
  args.lda = trans_a ? m : k;
  args.ldb = trans_b ? k : n;
  args.ldc = n;
  args.stride_a = m * k;
  args.stride_b = k * n;
  args.stride_c = m * n;
  return args;
}

void matmul_check_args(const char* op, const MatmulArgs& args, const float* a, const float* b,
                       const float* c) {
  BL_CHECK(args.batch >= 0 && args.m >= 0 && args.n >= 0 && args.k >= 0, op,
           ": sizes must be >= 0, got batch=", args.batch, " M=", args.m, " N=", args.n,
           " K=", args.k);
  const int64_t need_lda = args.trans_a ? args.m : args.k;
  const int64_t need_ldb = args.trans_b ? args.k : args.n;
  BL_CHECK(args.lda >= need_lda, op, ": lda of A (", args.trans_a ? "transposed, K x M" : "M x K",
           ") must be >= ", need_lda, ", got ", args.lda);
  BL_CHECK(args.ldb >= need_ldb, op, ": ldb of B (", args.trans_b ? "transposed, N x K" : "K x N",
           ") must be >= ", need_ldb, ", got ", args.ldb);
  BL_CHECK(args.ldc >= args.n, op, ": ldc of C (M x N) must be >= N = ", args.n, ", got ",
           args.ldc);
  BL_CHECK(args.stride_a >= 0 && args.stride_b >= 0 && args.stride_c >= 0, op,
           ": batch strides must be >= 0, got stride_a=", args.stride_a, " stride_b=",
           args.stride_b, " stride_c=", args.stride_c);
  const bool c_has_elements = args.batch > 0 && args.m > 0 && args.n > 0;
  if (c_has_elements && args.batch > 1) {
    const int64_t c_span = (args.m - 1) * args.ldc + args.n;
    BL_CHECK(args.stride_c >= c_span, op, ": stride_c of C must be >= ", c_span,
             " so batch entries do not overlap, got ", args.stride_c);
  }
  const bool reads_inputs = c_has_elements && args.k > 0;
  BL_CHECK(!reads_inputs || a != nullptr, op, ": A is null");
  BL_CHECK(!reads_inputs || b != nullptr, op, ": B is null");
  BL_CHECK(!c_has_elements || c != nullptr, op, ": C is null");
}

void matmul_cpu(const MatmulArgs& args, const float* a, const float* b, float* c,
                ThreadPool* pool) {
  const int64_t task_cols = select_isa<int64_t>(kTaskCols, kTaskColsSimd, kTaskColsSimd, kTaskCols);
  const TileConfig tile{cpu::active_tile(), task_cols};
  matmul_cpu_with("matmul_cpu", args, a, b, c, pool, tile);
}

void matmul_cpu_portable(const MatmulArgs& args, const float* a, const float* b, float* c,
                         ThreadPool* pool) {
  const TileConfig tile{cpu::kPortableTile, kTaskCols};
  matmul_cpu_with("matmul_cpu_portable", args, a, b, c, pool, tile);
}

}  // namespace bl
