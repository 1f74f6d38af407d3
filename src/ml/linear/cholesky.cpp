// cholesky.cpp: see cholesky.h.
#include "ml/linear/cholesky.h"

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

}  // namespace bl::ml
