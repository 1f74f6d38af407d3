// exact_gemm.cpp: the CPU exact-integer GEMM (profile bitlearn.exact_gemm.v1, kernels/exact_gemm.h).
//
// Each batch entry: the rows of op(A) and the columns of op(B) become 28-bit integers once (their
// exponents and a non-finite flag alongside), then every output is the exact integer dot product of
// its row and column: products of two 28-bit integers summed in int64 over chunks of 64 (below
// 2^62), the chunks added into a 128-bit sum, and one rounding. Integer sums are exact, so the
// blocking, the chunking and the thread count cannot change a bit. Outputs whose row or column
// holds a non-finite entry take the reference element (the special-value rule).
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/exact_gemm.h"

namespace bl {
namespace {

constexpr int64_t kChunk = 64;   // products per int64 partial sum: 64 * 2^56 = 2^62
constexpr int64_t kRowBlock = 4;  // outputs per micro-tile: kRowBlock x kColBlock
constexpr int64_t kColBlock = 4;

// One operand's lines (rows of op(A) or columns of op(B)) as integers, k contiguous.
struct IntegerLines {
  std::vector<int32_t> values;  // lines x k
  std::vector<int> exponent;
  std::vector<uint8_t> special;  // the line holds a non-finite entry
};

// Line i of the operand is element (i, k) of `load`.
template <class Load>
void make_lines(int64_t lines, int64_t k, Load load, IntegerLines& out, ThreadPool& pool) {
  out.values.assign(size_t(lines * k), 0);
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

// sum_k x[k] * y[k] over one chunk (n <= kChunk), exact in int64.
inline int64_t chunk_dot(const int32_t* x, const int32_t* y, int64_t n) {
  int64_t s = 0;
  for (int64_t k = 0; k < n; ++k) s += int64_t(x[k]) * int64_t(y[k]);
  return s;
}

}  // namespace

void exact_matmul_cpu(const MatmulArgs& args, const float* a, const float* b, float* c, ThreadPool* pool) {
  matmul_check_args("exact_matmul", args, a, b, c);
  BL_CHECK(args.k <= kExactGemmMaxK, "exact_matmul: K = ", args.k, " exceeds the profile's limit of ",
           kExactGemmMaxK);
  ThreadPool& workers = pool ? *pool : default_pool();
  const int64_t M = args.m, N = args.n, K = args.k;
  IntegerLines rows, cols;
  for (int64_t bi = 0; bi < args.batch; ++bi) {
    const float* ab = a + bi * args.stride_a;
    const float* bb = b + bi * args.stride_b;
    float* cb = c + bi * args.stride_c;
    make_lines(M, K, [&](int64_t m, int64_t k) { return matmul_load_a(ab, args.lda, args.trans_a, m, k); },
               rows, workers);
    make_lines(N, K, [&](int64_t n, int64_t k) { return matmul_load_b(bb, args.ldb, args.trans_b, k, n); },
               cols, workers);
    const int64_t row_blocks = (M + kRowBlock - 1) / kRowBlock;
    workers.parallel_for(row_blocks, [&](int64_t rb) {
      const int64_t m0 = rb * kRowBlock, m1 = std::min(M, m0 + kRowBlock);
      for (int64_t n0 = 0; n0 < N; n0 += kColBlock) {
        const int64_t n1 = std::min(N, n0 + kColBlock);
        ExactSum sum[kRowBlock][kColBlock];
        for (int64_t k0 = 0; k0 < K; k0 += kChunk) {
          const int64_t len = std::min(kChunk, K - k0);
          for (int64_t m = m0; m < m1; ++m)
            for (int64_t n = n0; n < n1; ++n)
              exact_sum_add(sum[m - m0][n - n0],
                            chunk_dot(rows.values.data() + m * K + k0, cols.values.data() + n * K + k0, len));
        }
        for (int64_t m = m0; m < m1; ++m)
          for (int64_t n = n0; n < n1; ++n) {
            float& out = cb[m * args.ldc + n];
            if (rows.special[size_t(m)] || cols.special[size_t(n)])
              out = exact_matmul_reference_element(ab, args.lda, args.trans_a, bb, args.ldb, args.trans_b, K, m, n);
            else
              out = exact_sum_round(sum[m - m0][n - n0],
                                    rows.exponent[size_t(m)] + cols.exponent[size_t(n)] - 2 * kExactGemmBits);
          }
      }
    });
  }
}

}  // namespace bl
