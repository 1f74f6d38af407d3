// arg_reduce_leaves.h: the two steps of the leaf-parallel argmax / argmin of the CPU and CUDA
// backends, in the subset both compilers accept. A sequence is cut into leaves of kReduceLeaf;
// each leaf keeps its greatest arg_key with the lowest index, and the leaves are combined in
// ascending order. Greatest key with lowest index is associative, so the result equals the single
// left-to-right scan of the reference (reduce.h).
#pragma once

#include <cstdint>

#include "kernels/reduce.h"

namespace bl {

// Best (greatest key, lowest index) over row[start * inner .. stop * inner) in steps of inner;
// start < stop. The index is the position along the sequence.
BL_HD void arg_leaf_best(ArgReduceOp op, const float* row, int64_t inner, int64_t start, int64_t stop,
                         uint32_t* best_key, int64_t* best_index) {
  uint32_t bk = arg_key(op, row[start * inner]);
  int64_t bi = start;
  for (int64_t i = start + 1; i < stop; ++i) {
    const uint32_t k = arg_key(op, row[i * inner]);
    if (k > bk) {
      bk = k;
      bi = i;
    }
  }
  *best_key = bk;
  *best_index = bi;
}

// Index of the best of leaves consecutive leaf results (keys, indices), combined in ascending
// leaf order; on equal keys the earlier leaf (the lower index) wins.
BL_HD int64_t arg_combine_leaves(const uint32_t* keys, const int64_t* indices, int64_t leaves) {
  uint32_t bk = keys[0];
  int64_t bi = indices[0];
  for (int64_t l = 1; l < leaves; ++l) {
    if (keys[l] > bk) {
      bk = keys[l];
      bi = indices[l];
    }
  }
  return bi;
}

}  // namespace bl
