// centered_gram.h: the covariance numerator Xc^T Xc of PCA (Xc = X - mean) on the host in one pass
// over X, bitwise equal to bl::matmul(bl::sub(X, mean), same, true, false): every output runs the
// contract GEMM's order (k-leaves of kGemmKLeaf rows, an fma chain from +0.0 in ascending k inside
// a leaf, leaves folded left to right, canonical NaN at the end), so the bits match every device.
#pragma once

#include <cstdint>

namespace bl {
class ThreadPool;
}

namespace bl::ml {

// out[d * d] = (X - mean)^T (X - mean) for row-major x[n * d] and mean[d], without forming X - mean.
// Only the upper triangle is computed; the lower one is its mirror (the same bits, the product being
// commutative). Leaves run as parallel tasks on pool (the process pool when null); bits are the same
// for any thread count. use_simd = false forces the portable kernel (for tests).
void centered_gram_cpu(const float* x, int64_t n, int64_t d, const float* mean, float* out,
                       ThreadPool* pool = nullptr, bool use_simd = true);

// Width that rows are padded to in a leaf's centered scratch and partial (d rounded up to 8).
inline int64_t centered_gram_pitch(int64_t d) { return (d + 7) / 8 * 8; }

// One leaf: centers rows x[0 .. kc) into scratch[kc * pitch] (zero padding) and writes the fma-chain
// partial of every (i, j >= i) output into partial[i * pitch + j]. AVX2+FMA version; call only when
// bl::cpu_has_avx2_fma() is true.
void centered_gram_leaf_avx2(const float* x, int64_t kc, int64_t d, const float* mean,
                             float* scratch, float* partial);

}  // namespace bl::ml
