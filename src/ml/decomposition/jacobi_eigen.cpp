// jacobi_eigen.cpp: cyclic Jacobi (see jacobi_eigen.h).
//
// Rotation for pair (p, q), from a = A[p][p], b = A[q][q], c = A[p][q] != 0:
//   theta = (b - a) / (2c);  t = sign(theta) / (|theta| + sqrt(theta^2 + 1))  (t = 1/(2 theta) when
//   |theta| > 2^20, where theta^2 + 1 rounds to theta^2);  cs = 1 / sqrt(t^2 + 1);  sn = t * cs.
// The pair is skipped when |c| <= 2^-24 * sqrt(|a| * |b|) (below the diagonal's rounding) or c == 0.
// Sweeps stop when one performs no rotation, or after max_sweeps.
#include "ml/decomposition/jacobi_eigen.h"

#include <algorithm>
#include <numeric>

#include "contract/arith.h"

namespace bl::ml {

SymmetricEigen jacobi_eigen(const std::vector<float>& a_in, int64_t d, int64_t max_sweeps) {
  std::vector<float> A(static_cast<size_t>(d * d));
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) A[i * d + j] = j >= i ? a_in[i * d + j] : a_in[j * d + i];
  std::vector<float> V(static_cast<size_t>(d * d), 0.0f);  // columns are eigenvectors
  for (int64_t i = 0; i < d; ++i) V[i * d + i] = 1.0f;
  SymmetricEigen out;
  for (int64_t sweep = 0; sweep < max_sweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < d; ++p) {
      for (int64_t q = p + 1; q < d; ++q) {
        float c = A[p * d + q];
        float app = A[p * d + p], aqq = A[q * d + q];
        float limit = bl::mul(0x1p-24f, bl::sqrt(bl::mul(bl::abs(app), bl::abs(aqq))));
        if (c == 0.0f || bl::abs(c) <= limit) continue;
        rotated = true;
        float theta = bl::div(bl::sub(aqq, app), bl::mul(2.0f, c));
        float t;
        if (bl::abs(theta) > 0x1p20f) {
          t = bl::div(0.5f, theta);
        } else {
          float r = bl::sqrt(bl::fma(theta, theta, 1.0f));
          t = bl::div(1.0f, bl::add(bl::abs(theta), r));
          if (theta < 0.0f) t = bl::neg(t);
        }
        float cs = bl::div(1.0f, bl::sqrt(bl::fma(t, t, 1.0f)));
        float sn = bl::mul(t, cs);
        for (int64_t k = 0; k < d; ++k) {
          if (k == p || k == q) continue;
          float akp = A[k * d + p], akq = A[k * d + q];
          float nkp = bl::sub(bl::mul(cs, akp), bl::mul(sn, akq));
          float nkq = bl::add(bl::mul(sn, akp), bl::mul(cs, akq));
          A[k * d + p] = nkp;
          A[p * d + k] = nkp;
          A[k * d + q] = nkq;
          A[q * d + k] = nkq;
        }
        A[p * d + p] = bl::sub(app, bl::mul(t, c));
        A[q * d + q] = bl::add(aqq, bl::mul(t, c));
        A[p * d + q] = 0.0f;
        A[q * d + p] = 0.0f;
        for (int64_t k = 0; k < d; ++k) {
          float vkp = V[k * d + p], vkq = V[k * d + q];
          V[k * d + p] = bl::sub(bl::mul(cs, vkp), bl::mul(sn, vkq));
          V[k * d + q] = bl::add(bl::mul(sn, vkp), bl::mul(cs, vkq));
        }
      }
    }
    out.sweeps = sweep + 1;
    if (!rotated) break;
  }
  std::vector<int64_t> order(static_cast<size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return A[x * d + x] > A[y * d + y]; });
  out.values.resize(static_cast<size_t>(d));
  out.vectors.resize(static_cast<size_t>(d * d));
  for (int64_t r = 0; r < d; ++r) {
    int64_t col = order[r];
    out.values[r] = A[col * d + col];
    int64_t arg = 0;
    for (int64_t k = 1; k < d; ++k)
      if (bl::abs(V[k * d + col]) > bl::abs(V[arg * d + col])) arg = k;
    bool flip = V[arg * d + col] < 0.0f;
    for (int64_t k = 0; k < d; ++k) {
      float v = V[k * d + col];
      out.vectors[r * d + k] = flip ? bl::neg(v) : v;
    }
  }
  return out;
}

}  // namespace bl::ml
