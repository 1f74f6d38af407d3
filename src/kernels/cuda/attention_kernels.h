// attention_kernels.h: the two CUDA attention kernels behind attention_cuda (attention.cu picks one).
//
// Both compute every value exactly as attention_row does, so either gives the reference's bits.
#pragma once

#include "kernels/attention.h"

namespace bl::cuda {

// Warp rows (attention_warp_rows.cu): one 32-lane group per query row, the rows of a block sharing
// one (batch, key/value head), keys and values staged once per block in shared memory. Returns
// false, launching nothing, when the shape is outside what it covers (head_dim > 256, or score
// storage for even one row per block does not fit in shared memory). `reversed_fold` folds the
// softmax lanes in a wrong order: only for the sabotage test.
bool attention_warp_rows(const AttentionArgs& a, const float* q, const float* k, const float* v,
                         const int64_t* q_pos, const int64_t* kv_len, float* out, const LaunchConfig& config,
                         bool reversed_fold);

// Block rows (attention.cu): one block per query row with global scratch; covers every shape.
void attention_block_rows(const AttentionArgs& a, const float* q, const float* k, const float* v,
                          const int64_t* q_pos, const int64_t* kv_len, float* out, const LaunchConfig& config);

}  // namespace bl::cuda
