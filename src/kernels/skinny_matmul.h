// skinny_matmul.h: the contract GEMM C[M, N] = A[M, K] B[K, N] for few rows (M <= kSkinnyMaxRows),
// with A and B row-major and dense (lda = K, ldb = ldc = N). The transformer's projections during
// decode and short prefills are such products against a fixed weight B.
//
// Every output is matmul_reference_element (src/kernels/matmul.h): leaves of kGemmKLeaf, an fma
// chain from +0 in ascending k inside a leaf, leaves folded left to right, canonical NaN. The
// kernels stream B row by row with lanes over columns and never pack it, which is what makes them
// fast for small M; the bits are those of bl::matmul.
#pragma once

#include <cstdint>

#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace bl {

class ThreadPool;

constexpr int64_t kSkinnyMaxRows = 16;

// CPU: tasks over fixed blocks of columns; AVX-512, AVX2+FMA or NEON lanes where the CPU has
// them, else scalar.
void skinny_matmul_cpu(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                       ThreadPool& pool);

namespace skinny_detail {
// Columns [n0, n1) of every row with 8-lane AVX2 vectors (n1 - n0 a multiple of 8); defined in
// the AVX2 translation unit.
void columns_avx2(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                  int64_t n1);
// The same with 16-lane AVX-512 vectors (n1 - n0 a multiple of 16); defined in the AVX-512
// translation unit, called only when bl::active_isa() is Isa::avx512.
void columns_avx512(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                    int64_t n1);
// The same with 4-lane NEON vectors (n1 - n0 a multiple of 4); defined in the NEON translation
// unit, called only when bl::active_isa() is Isa::neon.
void columns_neon(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t n0,
                  int64_t n1);
}  // namespace skinny_detail

// CUDA: the k leaves of every output in parallel (one thread per leaf and column), then folded
// left to right; device pointers, default stream, asynchronous.
void skinny_matmul_cuda(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                        const LaunchConfig& config);

}  // namespace bl
