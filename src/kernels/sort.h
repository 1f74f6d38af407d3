// sort.h: stable sort and top-k along the last axis of a contiguous (rows, n) array.
//
// Order: by the key total_order_key(canonicalize(x)) (arith.h): -inf < ... < -0 < +0 < ... < +inf
// < NaN, every NaN equal. Ascending or descending by key; among equal keys the lower index comes
// first in both directions (stable). Top-k: the first k of the descending order (the k largest,
// NaN counting as largest, ties to the lowest index). Outputs: the values (NaN canonical) and the
// int64 source indices. Any correct sort gives these exact outputs, as (key, index) pairs are unique.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "contract/arith.h"
#include "kernels/launch.h"

namespace bl {

class ThreadPool;

// The sort key: ascending key order is ascending value order; NaN (any payload) is greatest.
BL_HD uint32_t sort_key(float x) { return total_order_key(canonicalize(x)); }

// Reference sort: values and indices are rows * n each (either may be null).
inline void sort_reference(const float* x, int64_t rows, int64_t n, bool descending, float* values,
                           int64_t* indices) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return descending ? sort_key(xr[a]) > sort_key(xr[b]) : sort_key(xr[a]) < sort_key(xr[b]);
    });
    for (int64_t i = 0; i < n; ++i) {
      if (values) values[r * n + i] = canonicalize(xr[order[i]]);
      if (indices) indices[r * n + i] = order[i];
    }
  }
}

// Reference top-k: values and indices are rows * k each, 0 <= k <= n.
inline void topk_reference(const float* x, int64_t rows, int64_t n, int64_t k, float* values,
                           int64_t* indices) {
  std::vector<float> v(static_cast<size_t>(n));
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    sort_reference(x + r * n, 1, n, true, v.data(), idx.data());
    for (int64_t i = 0; i < k; ++i) {
      values[r * k + i] = v[i];
      indices[r * k + i] = idx[i];
    }
  }
}

// CPU versions (threaded over rows). Rows of 2^32 or more elements are rejected.
void sort_cpu(const float* x, int64_t rows, int64_t n, bool descending, float* values, int64_t* indices,
              ThreadPool& pool);
void topk_cpu(const float* x, int64_t rows, int64_t n, int64_t k, float* values, int64_t* indices,
              ThreadPool& pool);

// CUDA versions: device pointers; default stream, returns when done.
void sort_cuda(const float* x, int64_t rows, int64_t n, bool descending, float* values, int64_t* indices,
               const LaunchConfig& config = LaunchConfig());
void topk_cuda(const float* x, int64_t rows, int64_t n, int64_t k, float* values, int64_t* indices,
               const LaunchConfig& config = LaunchConfig());

}  // namespace bl
