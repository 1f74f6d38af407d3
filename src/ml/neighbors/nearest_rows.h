// nearest_rows.h: the k nearest training rows of each query row (exact brute force), the core of
// kneighbors_classifier and kneighbors_regressor.
//
// The distance of query i to training row j is the sq_distances definition of ml/cluster/distances.h,
//   D[i, j] = relu((-2 * dot(q_i, t_j) + |q_i|^2) + |t_j|^2)      (relu(x) = x > 0 ? x : +0),
// with dot the contract GEMM element (kernels/matmul.h) and the norms from row_sq_norms. For each
// query the k smallest D[i, j] are kept in ascending order; equal distances keep the lower j first
// (rows are offered in ascending j and a new row only passes a strictly larger distance).
//
// Two implementations give the same bits:
//   nearest_rows_gemm   the GEMM of a block of queries on the tensors' device, then the selection
//                       on the host (any device; the oracle of the conformance tests);
//   nearest_rows_cpu    fused on the CPU: the GEMM tile kernels compute 6 x 16 (AVX-512: 12 x 32)
//                       dot products into a small buffer, the distances are formed and offered to
//                       the queries' lists at once, so the [m, n] product is never stored.
#pragma once

#include <cstdint>
#include <vector>

#include "bitlearn/tensor.h"
#include "kernels/matmul_packed.h"

namespace bl {
class ThreadPool;
}

namespace bl::ml {

// The k neighbor lists of m queries: idx[i * k + r] and dist[i * k + r], r = 0 nearest.
struct NeighborLists {
  int64_t k = 0;
  std::vector<int64_t> idx;
  std::vector<float> dist;
};

// Neighbors of the rows of Q [m, d] among the rows of T [n, d] (same device), with tt = |t_j|^2
// ([n], host): GEMM of query blocks on the device, selection on the host. Needs 1 <= k <= n.
NeighborLists nearest_rows_gemm(const Tensor& Q, const Tensor& T, const std::vector<float>& tt, int64_t k);

// Which epilogue (distance + selection) and tile kernel nearest_rows_cpu runs. by_isa: the GEMM
// tile of the active ISA and the AVX2 epilogue where the CPU has AVX2+FMA; portable: the scalar
// tile and the scalar epilogue (any CPU). Both give the same bits.
enum class NearestRowsVariant { by_isa, portable };

// Fused CPU neighbors: q [m, d] row-major (row pitch d), qq[i] = |q_i|^2, the training rows packed
// as op(B) = T^T by matmul_pack_b_cpu(T, d, n, d, true), tt[j] = |t_j|^2. Tasks are blocks of
// queries (each query's list is built by one task in ascending j), so neither the thread count nor
// the variant changes a bit. Throws bl::Error unless 1 <= k <= n and d == packed.k().
NeighborLists nearest_rows_cpu(const float* q, int64_t m, const float* qq, const PackedMatrix& packed,
                               const float* tt, int64_t k,
                               NearestRowsVariant variant = NearestRowsVariant::by_isa,
                               ThreadPool* pool = nullptr);

}  // namespace bl::ml
