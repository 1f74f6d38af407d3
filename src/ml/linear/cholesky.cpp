// cholesky.cpp: see cholesky.h.
#include "ml/linear/cholesky.h"

#include <algorithm>

#include "bitlearn/ops.h"
#include "contract/arith.h"

namespace bl::ml {

bool cholesky_solve(const std::vector<float>& A, int64_t d, const std::vector<float>& b, int64_t m,
                    std::vector<float>& x) {
  std::vector<float> L;
  if (!cholesky_factor(A, d, L)) return false;
  std::vector<float> y(static_cast<size_t>(d * m));
  for (int64_t c = 0; c < m; ++c) {
    for (int64_t i = 0; i < d; ++i) {  // L y = b
      float s = 0.0f;
      for (int64_t k = 0; k < i; ++k) s = bl::fma(L[i * d + k], y[k * m + c], s);
      y[i * m + c] = bl::div(bl::sub(b[i * m + c], s), L[i * d + i]);
    }
    for (int64_t i = d - 1; i >= 0; --i) {  // L^T x = y
      float s = 0.0f;
      for (int64_t k = i + 1; k < d; ++k) s = bl::fma(L[k * d + i], y[k * m + c], s);
      y[i * m + c] = bl::div(bl::sub(y[i * m + c], s), L[i * d + i]);
    }
  }
  x = y;
  return true;
}

bool cholesky_factor(const std::vector<float>& A, int64_t d, std::vector<float>& L) {
  L.assign(static_cast<size_t>(d * d), 0.0f);
  for (int64_t i = 0; i < d; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < j; ++k) s = bl::fma(L[i * d + k], L[j * d + k], s);
      float r = bl::sub(A[i * d + j], s);
      if (i == j) {
        if (!(r > 0.0f)) return false;
        L[i * d + i] = bl::sqrt(r);
      } else {
        L[i * d + j] = bl::div(r, L[j * d + j]);
      }
    }
  }
  return true;
}

std::vector<float> cholesky_solve_factored(const std::vector<float>& L, int64_t d, const std::vector<float>& b) {
  std::vector<float> y(static_cast<size_t>(d));
  for (int64_t i = 0; i < d; ++i) {
    float s = 0.0f;
    for (int64_t k = 0; k < i; ++k) s = bl::fma(L[i * d + k], y[k], s);
    y[i] = bl::div(bl::sub(b[i], s), L[i * d + i]);
  }
  for (int64_t i = d - 1; i >= 0; --i) {
    float s = 0.0f;
    for (int64_t k = i + 1; k < d; ++k) s = bl::fma(L[k * d + i], y[k], s);
    y[i] = bl::div(bl::sub(y[i], s), L[i * d + i]);
  }
  return y;
}

namespace {

// Rows of the trailing update's product computed at a time.
constexpr int64_t kTrailingStrip = 512;

// T = L^-1 for a lower-triangular b x b L with a positive diagonal: column j solves L t = e_j by
// forward substitution, fma chains ascending in k.
std::vector<float> lower_inverse(const std::vector<float>& L, int64_t b) {
  std::vector<float> T(static_cast<size_t>(b * b), 0.0f);
  for (int64_t j = 0; j < b; ++j)
    for (int64_t i = j; i < b; ++i) {
      float s = 0.0f;
      for (int64_t k = j; k < i; ++k) s = bl::fma(L[i * b + k], T[k * b + j], s);
      T[i * b + j] = bl::div(bl::sub(i == j ? 1.0f : 0.0f, s), L[i * b + i]);
    }
  return T;
}

}  // namespace

int64_t cholesky_factor_blocked(const Tensor& A, std::vector<float>& L, int64_t block) {
  const int64_t n = A.dim(0);
  const Device dev = A.device();
  // The working matrix on the host; its lower triangle becomes L column panel by column panel.
  L = A.to(Device::cpu()).contiguous().to_vector<float>();
  for (int64_t k = 0; k < n; k += block) {
    const int64_t b = std::min(block, n - k), m = n - k - b;
    std::vector<float> a11(static_cast<size_t>(b * b)), l11;
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < b; ++j) a11[i * b + j] = L[(k + i) * n + k + j];
    if (!cholesky_factor(a11, b, l11)) {
      // The failing pivot: the first leading block that is not positive definite.
      for (int64_t i = 1; i <= b; ++i) {
        std::vector<float> lead(static_cast<size_t>(i * i)), scratch;
        for (int64_t r = 0; r < i; ++r)
          for (int64_t c = 0; c < i; ++c) lead[r * i + c] = a11[r * b + c];
        if (!cholesky_factor(lead, i, scratch)) return k + i - 1;
      }
      return k;
    }
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < b; ++j) L[(k + i) * n + k + j] = j <= i ? l11[i * b + j] : 0.0f;
    if (m == 0) break;
    std::vector<float> a21(static_cast<size_t>(m * b));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < b; ++j) a21[i * b + j] = L[(k + b + i) * n + k + j];
    Tensor T = Tensor::from_vector(lower_inverse(l11, b), {b, b}, dev);
    Tensor l21 = bl::matmul(Tensor::from_vector(a21, {m, b}, dev), T, false, true);  // [m, b]
    Tensor h21 = l21.to(Device::cpu()).contiguous();
    const float* h = h21.data<float>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < b; ++j) L[(k + b + i) * n + k + j] = h[i * b + j];
    // Only the lower triangle of the trailing matrix is read again: L21 L21^T by strips of rows,
    // rows [r0, r1) against rows [0, r1) (each element is the same GEMM dot product of length b
    // whatever the strip).
    for (int64_t r0 = 0; r0 < m; r0 += kTrailingStrip) {
      const int64_t r1 = std::min(m, r0 + kTrailingStrip);
      Tensor P = bl::matmul(bl::slice(l21, 0, r0, r1), bl::slice(l21, 0, 0, r1), false, true)
                     .to(Device::cpu())
                     .contiguous();  // [r1 - r0, r1]
      const float* p = P.data<float>();
      for (int64_t i = r0; i < r1; ++i) {
        float* row = L.data() + (k + b + i) * n + k + b;
        const float* prow = p + (i - r0) * r1;
        for (int64_t j = 0; j <= i; ++j) row[j] = bl::sub(row[j], prow[j]);
      }
    }
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) L[i * n + j] = 0.0f;
  return -1;
}

}  // namespace bl::ml
