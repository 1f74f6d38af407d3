// CPU sort and top-k: each row sorts unique 64-bit (key, index) words, so std::sort (not stable
// itself) gives exactly the stable order of the reference.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/sort.h"

namespace bl {
namespace {

void check_sort_args(const char* name, const float* x, int64_t rows, int64_t n) {
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  BL_CHECK(n < (int64_t{1} << 32), name, ": rows of 2^32 or more elements are not supported, got n = ", n);
  BL_CHECK(rows * n == 0 || x != nullptr, name, ": input pointer is null");
}

// Fills words with (key << 32 | i), the key inverted for descending order.
void make_words(const float* xr, int64_t n, bool descending, std::vector<uint64_t>& words) {
  words.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint32_t key = sort_key(xr[i]);
    if (descending) key = ~key;
    words[i] = (static_cast<uint64_t>(key) << 32) | static_cast<uint64_t>(i);
  }
}

template <class Body>
void for_each_row(int64_t rows, int64_t n, ThreadPool& pool, const Body& body) {
  const int64_t per_task = std::max<int64_t>(1, cpu::kTaskElements / std::max<int64_t>(n, 1));
  const int64_t tasks = (rows + per_task - 1) / per_task;
  pool.parallel_for(tasks, [&](int64_t t) {
    std::vector<uint64_t> words;
    const int64_t end = std::min(rows, (t + 1) * per_task);
    for (int64_t r = t * per_task; r < end; ++r) body(r, words);
  });
}

}  // namespace

void sort_cpu(const float* x, int64_t rows, int64_t n, bool descending, float* values, int64_t* indices,
              ThreadPool& pool) {
  check_sort_args("sort", x, rows, n);
  for_each_row(rows, n, pool, [&](int64_t r, std::vector<uint64_t>& words) {
    const float* xr = x + r * n;
    make_words(xr, n, descending, words);
    std::sort(words.begin(), words.end());
    for (int64_t i = 0; i < n; ++i) {
      const int64_t src = static_cast<int64_t>(words[i] & 0xFFFFFFFFu);
      if (values) values[r * n + i] = canonicalize(xr[src]);
      if (indices) indices[r * n + i] = src;
    }
  });
}

void topk_cpu(const float* x, int64_t rows, int64_t n, int64_t k, float* values, int64_t* indices,
              ThreadPool& pool) {
  check_sort_args("topk", x, rows, n);
  BL_CHECK(k >= 0 && k <= n, "topk: k must be in [0, n] = [0, ", n, "], got ", k);
  BL_CHECK(rows * k == 0 || (values != nullptr && indices != nullptr), "topk: output pointer is null");
  if (k == 0) return;
  for_each_row(rows, n, pool, [&](int64_t r, std::vector<uint64_t>& words) {
    const float* xr = x + r * n;
    make_words(xr, n, true, words);
    std::nth_element(words.begin(), words.begin() + (k - 1), words.end());
    std::sort(words.begin(), words.begin() + k);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t src = static_cast<int64_t>(words[i] & 0xFFFFFFFFu);
      values[r * k + i] = canonicalize(xr[src]);
      indices[r * k + i] = src;
    }
  });
}

}  // namespace bl
