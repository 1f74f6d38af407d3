// matmul.h: the contract matrix product (GEMM) and batched GEMM, raw-pointer API and its scalar
// reference.
//
//   C[b][m][n] = sum_k op(A)[b][m][k] * op(B)[b][k][n]   for b < batch, m < M, n < N
//
// All matrices are row-major with leading dimensions (lda, ldb, ldc, in elements) and batch strides
// (stride_a, stride_b, stride_c, in elements; 0 broadcasts one matrix over the batch).
// op(A) is A (stored M x K) or, with trans_a, A^T (A stored K x M); likewise op(B) is B (stored
// K x N) or, with trans_b, B^T (B stored N x K). C must not overlap A or B (the fast kernels keep
// running leaf sums in C).
//
// The summation order is the GEMM schedule of src/contract/schedule.h: the k range is cut into
// leaves of kGemmKLeaf = 256 (the last may be short); inside a leaf acc starts at +0.0 and runs
// acc = fma(a, b, acc) in ascending k; the leaves are folded left to right (c = leaf0; c = c +
// leaf_j). With K == 0 every output is +0.0. Every stored NaN is the canonical NaN. The result of
// one output depends only on its row of op(A), its column of op(B) and K: never on M, N, batch,
// tiling, thread count or launch shape (batch invariance).
//
// The reference below IS the specification; the CPU (src/kernels/cpu/matmul*.cpp) and CUDA
// (src/kernels/cuda/matmul.cu) versions reproduce it bit for bit (tests/conformance/test_matmul.cpp,
// tests/cuda/test_matmul_cuda.cu).
#pragma once

#include <stdint.h>

#include "contract/schedule.h"

namespace bl {

class ThreadPool;
struct LaunchConfig;

// Sizes, transposes and memory layout of one (batched) matrix product.
struct MatmulArgs {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool trans_a = false;  // A stored K x M, op(A) = A^T
  bool trans_b = false;  // B stored N x K, op(B) = B^T
  int64_t lda = 0;       // row pitch of A as stored: >= K (plain) or >= M (trans_a)
  int64_t ldb = 0;       // row pitch of B as stored: >= N (plain) or >= K (trans_b)
  int64_t ldc = 0;       // row pitch of C: >= N
  int64_t stride_a = 0;  // elements between consecutive batch entries of A (0 = shared)
  int64_t stride_b = 0;
  int64_t stride_c = 0;  // >= (M-1)*ldc + N when batch > 1: outputs may not overlap
};

// Args for densely packed matrices: lda/ldb/ldc are the minimal pitches and the batch strides the
// matrix sizes.
MatmulArgs matmul_dense_args(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_a = false,
                             bool trans_b = false);

// Throws bl::Error (naming `op`, the operand and what was expected) when args are not a valid
// problem: negative sizes, too small lda/ldb/ldc, negative strides, overlapping outputs, or a null
// pointer for an operand that has elements.
void matmul_check_args(const char* op, const MatmulArgs& args, const float* a, const float* b,
                       const float* c);

// Fast CPU matrix product on pool (the process pool when null): AVX2+FMA micro-kernel where the CPU
// has it, else a portable blocked kernel. Bitwise equal to matmul_reference for any thread count.
void matmul_cpu(const MatmulArgs& args, const float* a, const float* b, float* c,
                ThreadPool* pool = nullptr);

// The portable blocked CPU kernel alone (what matmul_cpu runs without AVX2); for tests.
void matmul_cpu_portable(const MatmulArgs& args, const float* a, const float* b, float* c,
                         ThreadPool* pool = nullptr);

// CUDA matrix product; a, b, c are device pointers on the current device; stream is a
// cudaStream_t (null = default stream). config.variant names one of the shipped tiles of launch.h
// (kMatmulTile*; any other value: by shape); the result is the same bits for every config. Asynchronous on the stream; errors are thrown as bl::Error.
void matmul_cuda(const MatmulArgs& args, const float* a, const float* b, float* c,
                 const LaunchConfig& config, void* stream = nullptr);

// matmul_cuda, then bias (N floats on the device) added to every row of every batch entry:
// c[m][n] = canonicalize(add(C[m][n], bias[n])), the bits of the product followed by the Tensor add
// op. The small tiles (kMatmulTileSmall, kMatmulTileSmallSplit, the by-shape choice for
// few rows) add it as they store.
void matmul_bias_cuda(const MatmulArgs& args, const float* a, const float* b, const float* bias, float* c,
                      const LaunchConfig& config, void* stream = nullptr);

// Element (m, k) of op(A) and (k, n) of op(B) for one batch entry: the addressing rule shared by
// every backend.
BL_HD float matmul_load_a(const float* a, int64_t lda, bool trans_a, int64_t m, int64_t k) {
  return trans_a ? a[k * lda + m] : a[m * lda + k];
}
BL_HD float matmul_load_b(const float* b, int64_t ldb, bool trans_b, int64_t k, int64_t n) {
  return trans_b ? b[n * ldb + k] : b[k * ldb + n];
}

// One output of the contract GEMM: the leaf schedule spelled out (row m of op(A), column n of
// op(B), one batch entry). This is the specification every backend reproduces.
BL_HD float matmul_reference_element(const float* a, int64_t lda, bool trans_a, const float* b,
                                     int64_t ldb, bool trans_b, int64_t k_total, int64_t m,
                                     int64_t n) {
  float c = 0.0f;
  for (int64_t k0 = 0; k0 < k_total; k0 += kGemmKLeaf) {
    int64_t k_end = k0 + kGemmKLeaf < k_total ? k0 + kGemmKLeaf : k_total;
    float acc = 0.0f;
    for (int64_t k = k0; k < k_end; ++k)
      acc = fma(matmul_load_a(a, lda, trans_a, m, k), matmul_load_b(b, ldb, trans_b, k, n), acc);
    c = (k0 == 0) ? acc : add(c, acc);
  }
  return canonicalize(c);
}

// Every output of the (batched) product from an element function of the form of
// matmul_reference_element (the loop every profile's scalar reference shares).
template <class Element>
void gemm_reference_each(const MatmulArgs& args, const float* a, const float* b, float* c, Element element) {
  for (int64_t bi = 0; bi < args.batch; ++bi) {
    const float* ab = a + bi * args.stride_a;
    const float* bb = b + bi * args.stride_b;
    float* cb = c + bi * args.stride_c;
    for (int64_t m = 0; m < args.m; ++m)
      for (int64_t n = 0; n < args.n; ++n)
        cb[m * args.ldc + n] = element(ab, args.lda, args.trans_a, bb, args.ldb, args.trans_b, args.k, m, n);
  }
}

// The scalar reference for the whole (batched) product. Slow and obviously right.
inline void matmul_reference(const MatmulArgs& args, const float* a, const float* b, float* c) {
  gemm_reference_each(args, a, b, c, matmul_reference_element);
}

}  // namespace bl
