// ops_matmul.h: Tensor-level matrix products (the contract GEMM of src/kernels/matmul.h).
//
// Every output is the contract GEMM schedule: k cut into leaves of 256, fma chain from +0.0 in
// ascending k inside a leaf, leaves folded left to right; stored NaNs are canonical. The bits are
// the same on every device and thread count, and a row or batch entry computed alone equals the
// same row inside a larger product. Operands are f32 on one device; views with unit stride on
// either axis (transposes, row slices) are used in place, other layouts are copied first.
#pragma once

#include <string>

#include "bitlearn/tensor.h"

namespace bl {

// The GEMM profile every matrix product of the process uses (docs/contract.md, section 4):
//   contract  bitlearn.identical.v1: the fixed-order fp32 schedule above (the default);
//   exact     bitlearn.exact_gemm.v1: each output computed exactly in integers (28 bits per row of
//             op(A) and column of op(B), scaled by powers of two) and rounded once; no order to fix.
// Both give the same bits on every device and thread count; they differ from each other. The
// starting value is read once from the environment variable BITLEARN_GEMM_PROFILE ("contract" or
// "exact"; another value is an error at the first product). The setting is process-wide: change it
// between, not during, computations whose results must agree.
enum class GemmProfile { contract, exact };
void set_gemm_profile(GemmProfile profile);
GemmProfile gemm_profile();
// "bitlearn.identical.v1" or "bitlearn.exact_gemm.v1"; and the short names "contract" / "exact".
const char* gemm_profile_name(GemmProfile profile);
const char* gemm_profile_short_name(GemmProfile profile);
// Parses "contract" or "exact"; throws bl::Error naming `what` otherwise.
GemmProfile parse_gemm_profile(const std::string& name, const char* what);

// Sets the profile for the lifetime of the object, then restores the previous one.
class ScopedGemmProfile {
 public:
  explicit ScopedGemmProfile(GemmProfile profile) : saved_(gemm_profile()) { set_gemm_profile(profile); }
  ~ScopedGemmProfile() { set_gemm_profile(saved_); }
  ScopedGemmProfile(const ScopedGemmProfile&) = delete;
  ScopedGemmProfile& operator=(const ScopedGemmProfile&) = delete;

 private:
  GemmProfile saved_;
};

// C[M, N] = op(a) op(b) for 2-d a and b, where op(a) is a ([M, K]) or, with trans_a, a^T (a is
// [K, M]); likewise op(b) is b ([K, N]) or b^T (b is [N, K]). Throws bl::Error naming the operand
// on a wrong dtype, rank, inner-size mismatch or device mismatch.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);

// Batched product of 3-d a and b: C[i] = op(a[i]) op(b[i]) -> [B, M, N]. A batch extent of 1 on
// one side is broadcast over the other's batch. Errors as for matmul.
Tensor bmm(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);

}  // namespace bl
