// attention_cpu.h: the vector steps behind bl::attention_cpu (internal to src/kernels/cpu/).
//
// On a CPU with AVX2+FMA, attention_cpu runs one task per (sequence b, query head h, block of
// kQueryBlock queries): the keys the block attends are transposed once into scratch (key index
// contiguous), then each query row runs the three steps below, each following attention_row
// (kernels/attention.h) operation for operation with 8-lane vectors: scores with lanes over keys
// (each lane the fma chain over head_dim), exp(s - m) through the AVX2 contract exp and the
// softmax sum with the 32 lanes of the sum schedule as four vectors, the weighted values with
// lanes over head_dim (each lane the fma chain over keys). So the bits are the reference's.
// The functions are defined in attention_avx2.cpp; call them only when cpu_has_avx2_fma() is true.
#pragma once

#include <cstdint>

namespace bl {
namespace attention_detail {

// Queries per task of the vector path: a constant (the partition is fixed by the shape), small
// enough that a 128-token prefill gives 16 threads work.
constexpr int64_t kQueryBlock = 16;

// s[j] = attention_score(q, key j, head_dim, scale) for j < n, where element d of key j is
// kt[d * pitch + j]. kt must have n rounded up to a multiple of 8 readable columns, s room for as many floats
// (lanes past n hold junk).
void scores_avx2(const float* q, const float* kt, int64_t pitch, int64_t head_dim, float scale, int64_t n,
                 float* s);

// Scores s[0..n) (n >= 1) with maximum m become the softmax_element probabilities, the denominator
// on the sum schedule (attention_softmax_sum). e holds n floats of scratch, leaves
// reduce_leaf_count(n).
void softmax_avx2(float* s, int64_t n, float m, float* e, float* leaves);

// o[d] = attention_weighted_value(p, v, v_st, n, d) for d < head_dim (value j at v + j * v_st).
void weighted_values_avx2(const float* p, const float* v, int64_t v_st, int64_t n, int64_t head_dim, float* o);

}  // namespace attention_detail
}  // namespace bl
