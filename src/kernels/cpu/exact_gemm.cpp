// exact_gemm.cpp: the CPU exact-integer GEMM (profile bitlearn.exact_gemm.v1, kernels/exact_gemm.h).
//
// Each batch entry: the rows of op(A) and the columns of op(B) become 28-bit integers once (their
// exponents and a non-finite flag alongside), the columns packed in blocks of 8, then every output
// is the exact integer dot product of its row and column: products of two 28-bit integers summed in
// int64 over chunks of 64 (below 2^62), the chunks added into a 128-bit sum, and one rounding.
// Integer sums are exact, so the blocking, the chunking, the ISA variant and the thread count
// cannot change a bit. Outputs whose row or column
// holds a non-finite entry take the reference element (the special-value rule). The micro-tile
// (4 rows x 8 columns over all of k, cpu/exact_gemm_tile.h) has a scalar and an AVX2 variant.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/exact_gemm_tile.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/exact_gemm.h"

namespace bl {
namespace {

using exact_gemm_detail::kChunk;
using exact_gemm_detail::kTileCols;
using exact_gemm_detail::kTileRows;

constexpr int64_t kPanelRows = 32;  // rows per task (8 micro-tiles share each packed column block)

// One operand's lines (rows of op(A) or columns of op(B)) as integers, k contiguous; `padded`
// lines (>= lines, zeros after the last) so that micro-tiles never read past the end.
struct IntegerLines {
  std::vector<int32_t> values;  // padded x k
  std::vector<int> exponent;
  std::vector<uint8_t> special;  // the line holds a non-finite entry
};

// Line i of the operand is element (i, k) of `load`.
template <class Load>
void make_lines(int64_t lines, int64_t padded, int64_t k, Load load, IntegerLines& out, ThreadPool& pool) {
  out.values.assign(size_t(padded * k), 0);
  out.exponent.assign(size_t(lines), 0);
  out.special.assign(size_t(lines), 0);
  pool.parallel_for(lines, [&](int64_t i) {
    int e = 0;
    bool e_set = false, special = false;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float x = load(i, kk);
      if (!is_finite(x)) {
        special = true;
      } else if (x != 0.0f) {
        const int ex = exact_gemm_exponent(x);
        if (!e_set || ex > e) e = ex;
        e_set = true;
      }
    }
    int32_t* row = out.values.data() + i * k;
    for (int64_t kk = 0; kk < k; ++kk) row[kk] = exact_gemm_integer(load(i, kk), e);
    out.exponent[size_t(i)] = e;
    out.special[size_t(i)] = special ? 1 : 0;
  });
}

// The scalar micro-tile (cpu/exact_gemm_tile.h).
void tile_scalar(const int32_t* x, int64_t ldx, const int64_t* y, int64_t len, uint64_t lo[4][8], int64_t hi[4][8]) {
  ExactSum sum[kTileRows][kTileCols];
  for (int64_t k0 = 0; k0 < len; k0 += kChunk) {
    const int64_t k1 = std::min(len, k0 + kChunk);
    for (int64_t r = 0; r < kTileRows; ++r)
      for (int64_t c = 0; c < kTileCols; ++c) {
        int64_t p = 0;
        for (int64_t k = k0; k < k1; ++k) p += int64_t(x[r * ldx + k]) * y[k * kTileCols + c];
        exact_sum_add(sum[r][c], p);
      }
  }
  for (int64_t r = 0; r < kTileRows; ++r)
    for (int64_t c = 0; c < kTileCols; ++c) {
      lo[r][c] = sum[r][c].lo;
      hi[r][c] = sum[r][c].hi;
    }
}

// The columns in blocks of kTileCols, each block k-major with int64 lanes: packed[block][k][c].
void pack_columns(const IntegerLines& cols, int64_t blocks, int64_t k, std::vector<int64_t>& packed,
                  ThreadPool& pool) {
  packed.assign(size_t(blocks * k * kTileCols), 0);
  pool.parallel_for(blocks, [&](int64_t blk) {
    int64_t* dst = packed.data() + blk * k * kTileCols;
    for (int64_t c = 0; c < kTileCols; ++c) {
      const int32_t* src = cols.values.data() + (blk * kTileCols + c) * k;
      for (int64_t kk = 0; kk < k; ++kk) dst[kk * kTileCols + c] = src[kk];
    }
  });
}

}  // namespace

void exact_matmul_cpu(const MatmulArgs& args, const float* a, const float* b, float* c, ThreadPool* pool) {
  matmul_check_args("exact_matmul", args, a, b, c);
  BL_CHECK(args.k <= kExactGemmMaxK, "exact_matmul: K = ", args.k, " exceeds the profile's limit of ",
           kExactGemmMaxK);
  ThreadPool& workers = pool ? *pool : default_pool();
  const exact_gemm_detail::TileFn tile = select_isa<exact_gemm_detail::TileFn>(
      cpu::kernel_isa(), &tile_scalar, &exact_gemm_detail::tile_avx2, nullptr, nullptr);
  const int64_t M = args.m, N = args.n, K = args.k;
  if (M == 0 || N == 0) return;
  const int64_t m_pad = (M + kTileRows - 1) / kTileRows * kTileRows;
  const int64_t col_blocks = (N + kTileCols - 1) / kTileCols;
  IntegerLines rows, cols;
  std::vector<int64_t> packed;
  for (int64_t bi = 0; bi < args.batch; ++bi) {
    const float* ab = a + bi * args.stride_a;
    const float* bb = b + bi * args.stride_b;
    float* cb = c + bi * args.stride_c;
    make_lines(M, m_pad, K, [&](int64_t m, int64_t k) { return matmul_load_a(ab, args.lda, args.trans_a, m, k); },
               rows, workers);
    make_lines(N, col_blocks * kTileCols, K,
               [&](int64_t n, int64_t k) { return matmul_load_b(bb, args.ldb, args.trans_b, k, n); }, cols,
               workers);
    pack_columns(cols, col_blocks, K, packed, workers);
    const int64_t panels = (M + kPanelRows - 1) / kPanelRows;
    workers.parallel_for(panels, [&](int64_t panel) {
      const int64_t p0 = panel * kPanelRows, p1 = std::min(m_pad, p0 + kPanelRows);
      for (int64_t blk = 0; blk < col_blocks; ++blk) {
        const int64_t n0 = blk * kTileCols;
        for (int64_t m0 = p0; m0 < p1; m0 += kTileRows) {
          uint64_t lo[kTileRows][kTileCols];
          int64_t hi[kTileRows][kTileCols];
          tile(rows.values.data() + m0 * K, K, packed.data() + blk * K * kTileCols, K, lo, hi);
          for (int64_t r = 0; r < kTileRows && m0 + r < M; ++r) {
            const int64_t m = m0 + r;
            for (int64_t q = 0; q < kTileCols && n0 + q < N; ++q) {
              const int64_t n = n0 + q;
              float& out = cb[m * args.ldc + n];
              if (rows.special[size_t(m)] || cols.special[size_t(n)])
                out = exact_matmul_reference_element(ab, args.lda, args.trans_a, bb, args.ldb, args.trans_b, K, m,
                                                     n);
              else
                out = exact_sum_round(ExactSum{lo[r][q], hi[r][q]}, rows.exponent[size_t(m)] + cols.exponent[size_t(n)] -
                                                     2 * kExactGemmBits);
            }
          }
        }
      }
    });
  }
}

}  // namespace bl
