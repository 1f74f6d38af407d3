// kd_leaf.h: the squared distances of one kd-tree leaf (internal to kd_tree.cpp and its per-ISA
// file).
//
// For the count rows of a leaf, stored by feature (element (a, i) at cols[a * pitch + i]), and one
// query q with its row_sq_norms value qq: out[i] = relu((-2 * dot + qq) + tt[i]), dot the contract
// GEMM element (leaves of k_leaf features, an fma chain from +0 in ascending feature, leaves folded
// left to right by add), one fma, one add, relu(x) = x > 0 ? x : +0: the brute force's bits.
#pragma once

#include <cstdint>

namespace bl::ml::neighbors_detail {

using KdLeafDistances = void (*)(const float* cols, int64_t pitch, int64_t d, int64_t k_leaf, int64_t count,
                                 const float* q, float qq, const float* tt, float* out);

// Scalar (any CPU).
void kd_leaf_distances_portable(const float* cols, int64_t pitch, int64_t d, int64_t k_leaf, int64_t count,
                                const float* q, float qq, const float* tt, float* out);

// 8 rows per vector, each lane the scalar chain (vfmadd, vaddps, vmaxps against +0). Call only when
// bl::cpu_has_avx2_fma() is true.
void kd_leaf_distances_avx2(const float* cols, int64_t pitch, int64_t d, int64_t k_leaf, int64_t count,
                            const float* q, float qq, const float* tt, float* out);

}  // namespace bl::ml::neighbors_detail
