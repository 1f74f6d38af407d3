// CUDA sort and top-k: a bitonic sorting network over unique 64-bit (key, index) words per row,
// padded to a power of two. The words are unique, so the network's output is exactly the stable
// order of the reference, whatever the launch shape.
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/sort.h"

namespace bl {
namespace {

__global__ void make_words_kernel(const float* x, int64_t rows, int64_t n, int64_t padded, bool descending,
                                  uint64_t* words) {
  const int64_t total = rows * padded;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = g / padded, i = g % padded;
    if (i < n) {
      uint32_t key = sort_key(x[r * n + i]);
      if (descending) key = ~key;
      words[g] = (static_cast<uint64_t>(key) << 32) | static_cast<uint64_t>(i);
    } else {
      words[g] = ~uint64_t{0};  // padding sorts after every real word
    }
  }
}

// One step (k, j) of the bitonic network on every row.
__global__ void bitonic_step_kernel(uint64_t* words, int64_t rows, int64_t padded, int64_t k, int64_t j) {
  const int64_t total = rows * padded;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = g % padded;
    const int64_t partner = i ^ j;
    if (partner <= i) continue;
    uint64_t* row = words + (g - i);
    const uint64_t a = row[i], b = row[partner];
    const bool ascending = (i & k) == 0;
    if (ascending ? (a > b) : (a < b)) {
      row[i] = b;
      row[partner] = a;
    }
  }
}

// The first `count` words of every row -> values (canonical NaN) and source indices.
__global__ void decode_kernel(const float* x, const uint64_t* words, int64_t rows, int64_t n, int64_t padded,
                              int64_t count, float* values, int64_t* indices) {
  const int64_t total = rows * count;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = g / count, i = g % count;
    const int64_t src = static_cast<int64_t>(words[r * padded + i] & 0xFFFFFFFFu);
    if (values) values[g] = canonicalize(x[r * n + src]);
    if (indices) indices[g] = src;
  }
}

void check_sort_args(const char* name, const float* x, int64_t rows, int64_t n) {
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  BL_CHECK(n < (int64_t{1} << 31), name, ": rows of 2^31 or more elements are not supported on CUDA, got n = ", n);
  BL_CHECK(rows * n == 0 || x != nullptr, name, ": input pointer is null");
}

// Sorts the words of every row; then decodes the first `count` of each.
void sort_rows(const float* x, int64_t rows, int64_t n, bool descending, int64_t count, float* values,
               int64_t* indices, const LaunchConfig& config) {
  int64_t padded = 1;
  while (padded < n) padded *= 2;
  cuda::DeviceScratch<uint64_t> words(rows * padded);
  int block = cuda::fitted_block(make_words_kernel, config);
  make_words_kernel<<<cuda::grid_size((rows * padded + block - 1) / block, config), block>>>(x, rows, n, padded,
                                                                                            descending, words.ptr);
  BL_CUDA_CHECK(cudaGetLastError());
  block = cuda::fitted_block(bitonic_step_kernel, config);
  const int grid = cuda::grid_size((rows * padded + block - 1) / block, config);
  for (int64_t k = 2; k <= padded; k *= 2) {
    for (int64_t j = k / 2; j >= 1; j /= 2) {
      bitonic_step_kernel<<<grid, block>>>(words.ptr, rows, padded, k, j);
      BL_CUDA_CHECK(cudaGetLastError());
    }
  }
  block = cuda::fitted_block(decode_kernel, config);
  decode_kernel<<<cuda::grid_size((rows * count + block - 1) / block, config), block>>>(x, words.ptr, rows, n, padded,
                                                                                        count, values, indices);
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace

void sort_cuda(const float* x, int64_t rows, int64_t n, bool descending, float* values, int64_t* indices,
               const LaunchConfig& config) {
  check_sort_args("sort", x, rows, n);
  if (rows * n == 0) return;
  sort_rows(x, rows, n, descending, n, values, indices, config);
}

void topk_cuda(const float* x, int64_t rows, int64_t n, int64_t k, float* values, int64_t* indices,
               const LaunchConfig& config) {
  check_sort_args("topk", x, rows, n);
  BL_CHECK(k >= 0 && k <= n, "topk: k must be in [0, n] = [0, ", n, "], got ", k);
  BL_CHECK(rows * k == 0 || (values != nullptr && indices != nullptr), "topk: output pointer is null");
  if (rows * k == 0) return;
  sort_rows(x, rows, n, true, k, values, indices, config);
}

}  // namespace bl
