// matmul_packed.h: the weight-stationary CPU GEMM. A right-hand matrix op(B) [K, N] that is used
// for many products (a model's weight) is packed ONCE into the layout the CPU tile kernels read;
// each product C[M, N] = A[M, K] op(B) then skips the packing of B that bl::matmul_cpu does on
// every call.
//
// The result is the contract GEMM of kernels/matmul.h bit for bit (leaves of kGemmKLeaf, an fma
// chain from +0 in ascending k inside a leaf, leaves folded left to right, canonical NaN; +0 for
// K == 0): the tile kernels and their k order are those of matmul_cpu, only the packing moved.
// tests/conformance/test_matmul_packed.cpp compares it with matmul_reference by memcmp.
#pragma once

#include <cstdint>
#include <vector>

namespace bl {

class ThreadPool;

// op(B) packed for the CPU tile kernels: for leaf l (k0 = l * kGemmKLeaf, kc = its length) and
// column panel p (16 columns; columns past N are zero), the kc x 16 panel starts at
// k0 * padded_n + p * kc * 16, column j of step k at [k * 16 + j].
class PackedMatrix {
 public:
  PackedMatrix() = default;
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  // Floats between leaves' starts per k step: N rounded up to whole panels.
  int64_t padded_n() const { return padded_n_; }
  // The packed floats (64-byte aligned); null when K or N is 0.
  const float* data() const { return storage_.empty() ? nullptr : storage_.data() + offset_; }
  // Bytes held (the packed copy costs about as much memory as B itself).
  int64_t bytes() const { return static_cast<int64_t>(storage_.size() * sizeof(float)); }

 private:
  friend PackedMatrix matmul_pack_b_cpu(const float* b, int64_t k, int64_t n, int64_t ldb, bool trans_b,
                                        ThreadPool* pool);
  int64_t k_ = 0, n_ = 0, padded_n_ = 0;
  std::vector<float> storage_;
  int64_t offset_ = 0;  // index of the first aligned float in storage_
};

// Packs op(B) [K, N] (B stored K x N with row pitch ldb, or with trans_b stored N x K) on pool
// (the process pool when null). Throws bl::Error for negative sizes, a too small ldb or a null b
// with elements.
PackedMatrix matmul_pack_b_cpu(const float* b, int64_t k, int64_t n, int64_t ldb, bool trans_b,
                               ThreadPool* pool = nullptr);

// C[M, N] (row pitch ldc) = A[M, K] (row-major, row pitch lda) times the packed op(B), on pool
// (the process pool when null). Bitwise equal to matmul_reference at any thread count. Tasks are
// blocks of rows and columns sized by M and N only, small enough to keep 16 threads busy at
// M = 128. Throws bl::Error for bad sizes or pitches, or null pointers with elements.
void matmul_cpu_packed_b(const float* a, int64_t m, int64_t lda, const PackedMatrix& b, float* c,
                         int64_t ldc, ThreadPool* pool = nullptr);

}  // namespace bl
