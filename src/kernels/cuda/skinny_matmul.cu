// CUDA skinny contract GEMM (see kernels/skinny_matmul.h). The contract folds the k leaves of an
// output left to right, and each leaf is an independent fma chain from +0, so the leaves can run
// in parallel: the first kernel gives each (leaf, column) to one thread, which holds the m <= 16
// row accumulators and streams its 256 rows of B (a warp reads 32 consecutive columns: coalesced;
// loads are issued eight k ahead of their fmas, which keeps the fma order); the second kernel
// folds each output's leaf values in ascending leaf order and stores the canonical NaN. The launch
// shape changes nothing but speed.
#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/skinny_matmul.h"

namespace bl {
namespace {

// partial[(leaf * m + i) * n + j] = the leaf's fma chain of output (i, j). MaxRows bounds m at
// compile time so the accumulators stay in registers. The launch bound keeps the register count
// low enough for every block size a launch configuration may ask for (up to 1024 threads).
template <int MaxRows>
__global__ void __launch_bounds__(1024) skinny_leaf_kernel(const float* a, const float* b, float* partial, int64_t m, int64_t n,
                                   int64_t k, int64_t leaves) {
  const int64_t total = leaves * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t leaf = g / n, j = g % n;
    const int64_t k0 = leaf * kGemmKLeaf;
    const int64_t k_end = k0 + kGemmKLeaf < k ? k0 + kGemmKLeaf : k;
    float acc[MaxRows];
#pragma unroll
    for (int i = 0; i < MaxRows; ++i) acc[i] = 0.0f;
    int64_t kk = k0;
    for (; kk + 8 <= k_end; kk += 8) {
      float bv[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) bv[u] = b[(kk + u) * n + j];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
#pragma unroll
        for (int i = 0; i < MaxRows; ++i)
          if (i < m) acc[i] = fma(a[i * k + kk + u], bv[u], acc[i]);
      }
    }
    for (; kk < k_end; ++kk) {
      const float bv = b[kk * n + j];
#pragma unroll
      for (int i = 0; i < MaxRows; ++i)
        if (i < m) acc[i] = fma(a[i * k + kk], bv, acc[i]);
    }
#pragma unroll
    for (int i = 0; i < MaxRows; ++i)
      if (i < m) partial[(leaf * m + i) * n + j] = acc[i];
  }
}

// c[i * n + j] = leaf 0, then + leaf 1, + leaf 2, ... (left to right), canonical NaN; +0 for k = 0.
__global__ void skinny_fold_kernel(const float* partial, float* c, int64_t m, int64_t n, int64_t leaves) {
  const int64_t total = m * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = 0.0f;
    for (int64_t l = 0; l < leaves; ++l) v = l == 0 ? partial[l * total + g] : add(v, partial[l * total + g]);
    c[g] = canonicalize(v);
  }
}

}  // namespace

void skinny_matmul_cuda(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                        const LaunchConfig& config) {
  BL_CHECK(m >= 0 && m <= kSkinnyMaxRows && n >= 0 && k >= 0, "skinny_matmul: sizes (", m, ", ", n, ", ", k,
           ") must be non-negative with m <= ", kSkinnyMaxRows);
  if (m == 0 || n == 0) return;
  const int64_t leaves = gemm_k_leaf_count(k);
  cuda::DeviceScratch<float> partial(leaves * m * n);
  if (leaves > 0) {
    const cuda::GridShape g = cuda::grid_for(leaves * n, config);
    if (m == 1) {
      skinny_leaf_kernel<1><<<g.blocks, g.threads>>>(a, b, partial.ptr, m, n, k, leaves);
    } else if (m <= 4) {
      skinny_leaf_kernel<4><<<g.blocks, g.threads>>>(a, b, partial.ptr, m, n, k, leaves);
    } else {
      skinny_leaf_kernel<kSkinnyMaxRows><<<g.blocks, g.threads>>>(a, b, partial.ptr, m, n, k, leaves);
    }
    BL_CUDA_CHECK(cudaGetLastError());
  }
  const cuda::GridShape f = cuda::grid_for(m * n, config);
  skinny_fold_kernel<<<f.blocks, f.threads>>>(partial.ptr, c, m, n, leaves);
  BL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace bl
