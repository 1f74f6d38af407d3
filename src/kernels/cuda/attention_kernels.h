// attention_kernels.h: the three CUDA attention kernels behind attention_cuda (attention.cu picks one).
//
// Each computes every value exactly as attention_row does, so any of them gives the reference's bits.
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

// Tiled rows (attention_tiled.cu): 4 query rows per 32-lane group, the scores computed once and
// kept in global scratch for the three passes (maxima, sums, probabilities), or computed three
// times (kAttentionVariantTiledRecompute, or past the scratch cap). attention_tiled_applies says whether it
// covers the problem: window 0, at least 16 queries, head_dim a multiple of 4 up to 128, and
// 16-byte aligned rows. `reversed_fold` as for warp rows.
bool attention_tiled_applies(const AttentionArgs& a, const float* q, const float* k, const float* v);
void attention_tiled(const AttentionArgs& a, const float* q, const float* k, const float* v, const int64_t* q_pos,
                     const int64_t* kv_len, float* out, const LaunchConfig& config, bool reversed_fold);

// Block rows (attention.cu): one block per query row with global scratch; covers every shape.
void attention_block_rows(const AttentionArgs& a, const float* q, const float* k, const float* v,
                          const int64_t* q_pos, const int64_t* kv_len, float* out, const LaunchConfig& config);

}  // namespace bl::cuda
