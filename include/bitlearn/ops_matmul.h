// ops_matmul.h: Tensor-level matrix products (the contract GEMM of src/kernels/matmul.h).
//
// Every output is the contract GEMM schedule: k cut into leaves of 256, fma chain from +0.0 in
// ascending k inside a leaf, leaves folded left to right; stored NaNs are canonical. The bits are
// the same on every device and thread count, and a row or batch entry computed alone equals the
// same row inside a larger product. Operands are f32 on one device; views with unit stride on
// either axis (transposes, row slices) are used in place, other layouts are copied first.
#pragma once

#include "bitlearn/tensor.h"

namespace bl {

// C[M, N] = op(a) op(b) for 2-d a and b, where op(a) is a ([M, K]) or, with trans_a, a^T (a is
// [K, M]); likewise op(b) is b ([K, N]) or b^T (b is [N, K]). Throws bl::Error naming the operand
// on a wrong dtype, rank, inner-size mismatch or device mismatch.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);

// Batched product of 3-d a and b: C[i] = op(a[i]) op(b[i]) -> [B, M, N]. A batch extent of 1 on
// one side is broadcast over the other's batch. Errors as for matmul.
Tensor bmm(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);

}  // namespace bl
