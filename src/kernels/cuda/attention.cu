// CUDA attention: attention_cuda picks the kernel. The tiled kernel (attention_tiled.cu) runs the
// prefill shapes it covers, the warp-rows kernel (attention_warp_rows.cu) every other shape it
// covers, the block-rows kernel below the rest. LaunchConfig::variant kAttentionVariantWarpRows and
// kAttentionVariantBlockRows select those two wherever they apply, so tests and benchmarks can
// compare the three.
//
// Block rows: blocks stride over (batch, query, head) rows. Inside a block, threads compute the
// scores (one key each, the GEMM-schedule dot product), the maximum (bl::max is order-free), the
// 32 lanes of each softmax leaf (lane j of leaf l adds its keys in ascending order, exactly
// leaf_reduce's lanes), then one thread folds the lanes and the leaf tree; the probabilities
// follow, and threads over head_dim sum p_j * v_j[d] in ascending j. Every value is computed as
// attention_row computes it, so the bits equal the reference for any launch shape.
#include "core/allocator.h"
#include "core/cuda_check.h"
#include "core/error.h"

#include "kernels/attention.h"
#include "kernels/cuda/attention_kernels.h"
#include "kernels/cuda/reduce_cuda.cuh"

namespace bl {
namespace {

// Scratch floats per row on the device: scores, then 32 lanes per leaf, then the leaf values.
__host__ __device__ int64_t cuda_row_scratch(int64_t capacity) {
  return capacity + (kReduceLanes + 1) * reduce_leaf_count(capacity) + 1;
}

__global__ void attention_block_rows_kernel(AttentionArgs a, const float* q, const float* k, const float* v,
                                 const int64_t* q_pos, const int64_t* kv_len, float* out,
                                 float* scratch_all, int64_t slots) {
  __shared__ float shared_max[1024];
  __shared__ float row_stats[2];
  const int64_t rows = a.batch * a.q_len * a.n_heads;
  const int64_t per_row = cuda_row_scratch(a.kv_capacity);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float* scratch = scratch_all + (blockIdx.x % slots) * per_row;
    const int64_t h = r % a.n_heads;
    const int64_t t = (r / a.n_heads) % a.q_len;
    const int64_t b = r / (a.n_heads * a.q_len);
    const AttentionRowPlace row = attention_row_place(a, q, k, v, q_pos, kv_len, out, b, t, h);
    float* o = row.o;
    const int64_t n = row.n;
    if (n == 0) {
      for (int64_t d = threadIdx.x; d < a.head_dim; d += blockDim.x) o[d] = 0.0f;
      __syncthreads();
      continue;
    }
    float* s = scratch;
    float local_max = StepMax::init();
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      s[j] = attention_score(row.q, row.k + j * a.k_st, a.head_dim, a.scale);
      local_max = max(local_max, s[j]);
    }
    shared_max[threadIdx.x] = local_max;
    __syncthreads();
    if (threadIdx.x == 0) {
      float m = StepMax::init();
      for (unsigned i = 0; i < blockDim.x; ++i) m = max(m, shared_max[i]);
      row_stats[0] = m;
    }
    __syncthreads();
    const float m = row_stats[0];
    const int64_t leaves = reduce_leaf_count(n);
    float* lanes = scratch + a.kv_capacity;
    float* leaf_values = lanes + kReduceLanes * reduce_leaf_count(a.kv_capacity);
    for (int64_t job = threadIdx.x; job < leaves * kReduceLanes; job += blockDim.x) {
      const int64_t l = job / kReduceLanes, lane = job % kReduceLanes;
      const int64_t start = l * kReduceLeaf;
      const int64_t end = n - start < kReduceLeaf ? n : start + kReduceLeaf;
      float acc = StepExpShift::init();
      for (int64_t i = start + lane; i < end; i += kReduceLanes) acc = StepExpShift::apply(acc, s[i], m);
      lanes[job] = acc;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int64_t l = 0; l < leaves; ++l) {
        float* lf = lanes + l * kReduceLanes;
        for (int w = kReduceLanes / 2; w >= 1; w /= 2)
          for (int j = 0; j < w; ++j) lf[j] = StepExpShift::combine(lf[j], lf[j + w]);
        leaf_values[l] = lf[0];
      }
      row_stats[1] = leaf_tree<StepExpShift>(leaf_values, leaves);
    }
    __syncthreads();
    const float sum = row_stats[1];
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s[j] = softmax_element(s[j], m, sum);
    __syncthreads();
    for (int64_t d = threadIdx.x; d < a.head_dim; d += blockDim.x)
      o[d] = attention_weighted_value(s, row.v, a.v_st, n, d);
    __syncthreads();
  }
}

}  // namespace

namespace cuda {

void attention_block_rows(const AttentionArgs& a, const float* q, const float* k, const float* v,
                          const int64_t* q_pos, const int64_t* kv_len, float* out, const LaunchConfig& config) {
  const int64_t rows = a.batch * a.q_len * a.n_heads;
  if (rows == 0 || a.head_dim == 0) return;
  int block = fitted_block(attention_block_rows_kernel, config);
  if (block > 1024) block = 1024;
  const int grid = grid_size(rows, config);
  DeviceScratch<float> scratch(static_cast<int64_t>(grid) * cuda_row_scratch(a.kv_capacity));
  attention_block_rows_kernel<<<grid, block>>>(a, q, k, v, q_pos, kv_len, out, scratch.ptr, grid);
  BL_CUDA_CHECK(cudaGetLastError());
  cuda_sync_check("causal_attention");
}

}  // namespace cuda

void attention_cuda(const AttentionArgs& a, const float* q, const float* k, const float* v,
                    const int64_t* q_pos, const int64_t* kv_len, float* out, const LaunchConfig& config) {
  attention_check_args(a);
  const int64_t rows = a.batch * a.q_len * a.n_heads;
  if (rows == 0 || a.head_dim == 0) return;
  const bool block_rows = config.variant == kAttentionVariantBlockRows;
  if (!block_rows && config.variant != kAttentionVariantWarpRows && cuda::attention_tiled_applies(a, q, k, v)) {
    cuda::attention_tiled(a, q, k, v, q_pos, kv_len, out, config, false);
    return;
  }
  if (!block_rows && cuda::attention_warp_rows(a, q, k, v, q_pos, kv_len, out, config, false)) return;
  cuda::attention_block_rows(a, q, k, v, q_pos, kv_len, out, config);
}

void attention_cuda_sabotaged_fold(const AttentionArgs& a, const float* q, const float* k, const float* v,
                                   const int64_t* q_pos, const int64_t* kv_len, float* out) {
  attention_check_args(a);
  const int64_t rows = a.batch * a.q_len * a.n_heads;
  if (rows == 0 || a.head_dim == 0) return;
  if (cuda::attention_tiled_applies(a, q, k, v)) {
    cuda::attention_tiled(a, q, k, v, q_pos, kv_len, out, LaunchConfig(), true);
    return;
  }
  BL_CHECK(cuda::attention_warp_rows(a, q, k, v, q_pos, kv_len, out, LaunchConfig(), true),
           "attention_cuda_sabotaged_fold: the shape is outside the warp-rows kernel");
}

}  // namespace bl
