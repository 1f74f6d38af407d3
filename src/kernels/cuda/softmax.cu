// CUDA softmax / log-softmax.
// Rows of up to kSoftmaxRowOnChip elements: one block per row reads the row once into shared
// memory, takes the maximum, computes every e_i = exp(x_i - m) once, sums the e_i on the contract's
// sum schedule (each 32-thread group sums one leaf: thread j is lane j, adding its elements in
// ascending order, then the lanes fold by halving through width-32 shuffles; the leaf values meet
// in leaf_tree) and writes the row once: two memory passes.
// Longer rows: row maximum and denominator through reduce_totals, then one pass. Softmax computes
// each e_i = exp(x_i - m) once: the denominator pass stores e_i in y, and the last pass divides y
// in place (softmax_element's bits: canonicalize(div(e_i, s))).
#include "kernels/cuda/exp_quad.cuh"
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/softmax.h"

namespace bl {
namespace {

// The longest row kept on chip (shared memory: n floats for softmax, 2n for log-softmax).
constexpr int64_t kSoftmaxRowOnChip = 8192;
constexpr int kSoftmaxRowLeaves = static_cast<int>(kSoftmaxRowOnChip / kReduceLeaf);
static_assert(kSoftmaxRowOnChip % kReduceLeaf == 0, "whole leaves");

// Order key of a non-NaN float: a signed integer that orders as the floats do, -0 below +0 (as
// bl::max ranks them). float_of_max_key inverts it.
__device__ __forceinline__ int32_t max_key_of(float v) {
  const int32_t b = static_cast<int32_t>(bits_of(v));
  return b ^ ((b >> 31) & 0x7FFFFFFF);
}
__device__ __forceinline__ float float_of_max_key(int32_t k) {
  return float_of(static_cast<uint32_t>(k ^ ((k >> 31) & 0x7FFFFFFF)));
}
// Running maximum of a row part: *key over the non-NaN values (a NaN's key is harmless, since
// *magnitude, the largest |bits|, says NaN > 0x7F800000 and the result is then NaN).
__device__ __forceinline__ void key_max(float v, int32_t* key, uint32_t* magnitude) {
  const int32_t k = max_key_of(v);
  *key = *key > k ? *key : k;
  const uint32_t a = bits_of(v) & 0x7FFFFFFFu;
  *magnitude = *magnitude > a ? *magnitude : a;
}

// One block per row (grid-stride over rows), any block size that is a multiple of 32. `vec`: n is
// a multiple of 4 and x, y are 16-byte aligned, so rows move as float4. y may alias x: a row is
// read completely before any of it is written. LOADS float4 loads are issued per thread before
// their values are used (more memory in flight per thread, more registers).
template <int LOADS>
__global__ void softmax_row_on_chip_kernel(const float* x, int64_t rows, int64_t n, float* y,
                                           bool log_form, bool vec) {
  extern __shared__ float4 row_smem[];
  __shared__ float group_max[32];
  __shared__ float leaf_value[kSoftmaxRowLeaves];
  __shared__ float row_m, row_s;
  float* xs = reinterpret_cast<float*>(row_smem);
  float* es = log_form ? xs + n : xs;  // softmax keeps e_i in place of x_i
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int lane = tid & 31, group = tid >> 5, groups = threads >> 5;
  const int64_t n4 = vec ? n / 4 : 0;
  const int leaves = static_cast<int>(reduce_leaf_count(n));
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    // 1. Read the row; the maximum in any order (bl::max is associative and commutative).
    // The maximum on integer keys (max_key_of): one integer max per element; NaN is tracked
    // apart (the largest magnitude bits), and the result is bl::max's over the row.
    int32_t key = max_key_of(StepMax::init());
    uint32_t magnitude = 0;
    for (int64_t q0 = tid; q0 < n4; q0 += LOADS * threads) {
      float4 v[LOADS];
#pragma unroll
      for (int k = 0; k < LOADS; ++k) {
        const int64_t q = q0 + k * threads;
        if (q < n4) v[k] = reinterpret_cast<const float4*>(xr)[q];
      }
#pragma unroll
      for (int k = 0; k < LOADS; ++k) {
        const int64_t q = q0 + k * threads;
        if (q < n4) {
          reinterpret_cast<float4*>(xs)[q] = v[k];
          key_max(v[k].x, &key, &magnitude);
          key_max(v[k].y, &key, &magnitude);
          key_max(v[k].z, &key, &magnitude);
          key_max(v[k].w, &key, &magnitude);
        }
      }
    }
    for (int64_t i = 4 * n4 + tid; i < n; i += threads) {
      const float v = xr[i];
      xs[i] = v;
      key_max(v, &key, &magnitude);
    }
    float m = magnitude > 0x7F800000u ? canonical_nan() : float_of_max_key(key);
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, s, 32));
    if (lane == 0) group_max[group] = m;
    __syncthreads();
    if (tid == 0) {
      float mm = group_max[0];
      for (int g = 1; g < groups; ++g) mm = max(mm, group_max[g]);
      row_m = mm;
    }
    __syncthreads();
    m = row_m;
    // 2. e_i = exp(x_i - m), each once.
    for (int64_t q = tid; q < n4; q += threads) {
      const float4 v = reinterpret_cast<const float4*>(xs)[q];
      reinterpret_cast<float4*>(es)[q] =
          cuda::exp_quad(make_float4(sub(v.x, m), sub(v.y, m), sub(v.z, m), sub(v.w, m)));
    }
    for (int64_t i = 4 * n4 + tid; i < n; i += threads) es[i] = exp(sub(xs[i], m));
    __syncthreads();
    // 3. The sum schedule: group g sums leaves g, g + groups, ...; thread `lane` is lane `lane`.
    for (int l = group; l < leaves; l += groups) {
      const int64_t start = static_cast<int64_t>(l) * kReduceLeaf;
      const int64_t len = n - start < kReduceLeaf ? n - start : kReduceLeaf;
      float acc = StepExpShift::init();
      for (int64_t i = lane; i < len; i += kReduceLanes) acc = add(acc, es[start + i]);
#pragma unroll
      for (int s = kReduceLanes / 2; s >= 1; s >>= 1)
        acc = add(acc, __shfl_down_sync(0xFFFFFFFFu, acc, s, 32));
      if (lane == 0) leaf_value[l] = acc;
    }
    __syncthreads();
    if (tid == 0) {
      const float s = leaf_tree<StepExpShift>(leaf_value, leaves);
      row_s = log_form ? log(s) : s;
    }
    __syncthreads();
    const float s = row_s;
    // 4. Write the row. A row whose denominator is NaN (it holds NaN or +inf, or only -inf) is
    // NaN everywhere; in any other row every e_i is in [0, 1] and s (or log s) is finite, so no
    // output is NaN and the elements need no canonicalizing (same bits as softmax_element and
    // log_softmax_element).
    if (is_nan(s)) {
      for (int64_t i = tid; i < n; i += threads) yr[i] = canonical_nan();
    } else {
      for (int64_t q = tid; q < n4; q += threads) {
        float4 o;
        if (log_form) {
          const float4 v = reinterpret_cast<const float4*>(xs)[q];
          o = make_float4(sub(sub(v.x, m), s), sub(sub(v.y, m), s), sub(sub(v.z, m), s),
                          sub(sub(v.w, m), s));
        } else {
          const float4 e = reinterpret_cast<const float4*>(es)[q];
          o = make_float4(div(e.x, s), div(e.y, s), div(e.z, s), div(e.w, s));
        }
        reinterpret_cast<float4*>(yr)[q] = o;
      }
      for (int64_t i = 4 * n4 + tid; i < n; i += threads)
        yr[i] = log_form ? sub(sub(xs[i], m), s) : div(es[i], s);
    }
    __syncthreads();  // the next row reuses the shared memory
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <int LOADS>
void launch_row_on_chip(const float* x, int64_t rows, int64_t n, float* y, bool log_form,
                        const LaunchConfig& config) {
  // Threads: the configured block, fewer for short rows (about four elements per thread).
  const int wanted = static_cast<int>(std::max<int64_t>(32, ((n + 3) / 4 + 31) / 32 * 32));
  const int block = std::min(cuda::fitted_block(softmax_row_on_chip_kernel<LOADS>, config), wanted);
  const bool vec = n % 4 == 0 && aligned16(x) && aligned16(y);
  const size_t smem = static_cast<size_t>(log_form ? 2 * n : n) * sizeof(float);
  if (smem > 32 * 1024)  // beyond the default 48 KiB with the static shared memory
    BL_CUDA_CHECK(cudaFuncSetAttribute(softmax_row_on_chip_kernel<LOADS>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(2 * kSoftmaxRowOnChip * sizeof(float))));
  softmax_row_on_chip_kernel<LOADS><<<cuda::grid_size(rows, config), block, smem>>>(x, rows, n, y,
                                                                                   log_form, vec);
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

// Whether softmax_cuda sends rows of up to kSoftmaxRowOnChip elements to the on-chip kernel.
constexpr bool kSoftmaxOnChipByDefault = true;

}  // namespace

void softmax_rows_on_chip_cuda(const float* x, int64_t rows, int64_t n, float* y, bool log_form,
                               const LaunchConfig& config) {
  const char* name = log_form ? "log_softmax" : "softmax";
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  BL_CHECK(n <= kSoftmaxRowOnChip, name, ": rows on chip hold at most ", kSoftmaxRowOnChip,
           " elements, got n = ", n);
  if (rows == 0 || n == 0) return;
  BL_CHECK(x != nullptr && y != nullptr, name, ": input or output pointer is null");
  // config.variant 1: one float4 load in flight per thread; any other: four. Same bits.
  if (config.variant == 1)
    launch_row_on_chip<1>(x, rows, n, y, log_form, config);
  else
    launch_row_on_chip<4>(x, rows, n, y, log_form, config);
}

namespace {

struct FinishLog {
  BL_HD float operator()(float v) const { return log(v); }
};

// The softmax denominator's element, kept in y: e = exp(x - m).
struct MapExpShift {
  BL_HD static float map(float x, float m) { return exp(sub(x, m)); }
};

// y_i = e_i / s of its row, in place (long rows: blocks over rows, threads over the row).
__global__ void softmax_divide_rows_kernel(float* y, int64_t rows, int64_t n, const float* s) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float sr = s[r];
    float* yr = y + r * n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = canonicalize(div(yr[i], sr));
  }
}

// y_i = e_i / s of its row, in place (short rows: a flat grid-stride loop).
__global__ void softmax_divide_flat_kernel(float* y, int64_t rows, int64_t n, const float* s) {
  const int64_t total = rows * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[g] = canonicalize(div(y[g], s[g / n]));
}

// Long rows: blocks stride over rows, threads over the row (no per-element index division).
__global__ void softmax_apply_rows_kernel(const float* x, int64_t rows, int64_t n, const float* m, const float* s,
                                          bool log_form, float* y) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float mr = m[r], sr = s[r];
    const float* xr = x + r * n;
    float* yr = y + r * n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      yr[i] = log_form ? log_softmax_element(xr[i], mr, sr) : softmax_element(xr[i], mr, sr);
  }
}

// Short rows: a flat grid-stride loop over all elements.
__global__ void softmax_apply_flat_kernel(const float* x, int64_t rows, int64_t n, const float* m, const float* s,
                                          bool log_form, float* y) {
  const int64_t total = rows * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = g / n;
    y[g] = log_form ? log_softmax_element(x[g], m[r], s[r]) : softmax_element(x[g], m[r], s[r]);
  }
}

}  // namespace

void softmax_cuda(const float* x, int64_t rows, int64_t n, float* y, bool log_form, const LaunchConfig& config) {
  const char* name = log_form ? "log_softmax" : "softmax";
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  if (rows == 0 || n == 0) return;
  BL_CHECK(x != nullptr && y != nullptr, name, ": input or output pointer is null");
  if (kSoftmaxOnChipByDefault && n <= kSoftmaxRowOnChip) {  // shape-only choice; same bits
    softmax_rows_on_chip_cuda(x, rows, n, y, log_form, config);
    return;
  }
  const ReduceShape shape{rows, n, 1};
  cuda::DeviceScratch<float> m(rows), s(rows);
  cuda::reduce_totals<StepMax>(x, shape, nullptr, m.ptr, config);
  const bool rows_kernel = n >= 256 && n <= 65536;  // shape-only choice; both kernels give the same bits
  if (!log_form) {
    cuda::reduce_totals<StepAdd, MapExpShift>(x, shape, m.ptr, s.ptr, config, y);
    if (rows_kernel) {
      const int block = cuda::fitted_block(softmax_divide_rows_kernel, config);
      softmax_divide_rows_kernel<<<cuda::grid_size(rows, config), block>>>(y, rows, n, s.ptr);
    } else {
      const int block = cuda::fitted_block(softmax_divide_flat_kernel, config);
      softmax_divide_flat_kernel<<<cuda::grid_size((rows * n + block - 1) / block, config), block>>>(y, rows, n,
                                                                                                     s.ptr);
    }
    BL_CUDA_CHECK(cudaGetLastError());
    cuda::finish_sync();
    return;
  }
  cuda::reduce_totals<StepExpShift>(x, shape, m.ptr, s.ptr, config);
  cuda::map_totals(s.ptr, rows, FinishLog(), config);
  if (rows_kernel) {
    const int block = cuda::fitted_block(softmax_apply_rows_kernel, config);
    softmax_apply_rows_kernel<<<cuda::grid_size(rows, config), block>>>(x, rows, n, m.ptr, s.ptr, log_form, y);
  } else {
    const int block = cuda::fitted_block(softmax_apply_flat_kernel, config);
    softmax_apply_flat_kernel<<<cuda::grid_size((rows * n + block - 1) / block, config), block>>>(x, rows, n, m.ptr,
                                                                                                s.ptr, log_form, y);
  }
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace bl
