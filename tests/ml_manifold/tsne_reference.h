// tsne_reference.h: float64 references of the t-SNE tests (test_tsne.cpp, test_tsne_barnes_hut.cpp)
// built from the definitions with std::exp / std::log: squared distances of the rows, and one row's
// conditional probabilities over a list of other rows with the precision found by a long bisection
// on ln beta to the exact entropy ln(perplexity).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "ml_common/family_checks.h"

namespace bl::tsne_reference {

inline std::vector<double> sq_dists(const ml_common::HostData& x) {
  std::vector<double> out(static_cast<size_t>(x.n * x.n), 0.0);
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t j = 0; j < x.n; ++j)
      for (int64_t f = 0; f < x.d; ++f) {
        const double v = static_cast<double>(x.x[i * x.d + f]) - x.x[j * x.d + f];
        out[i * x.n + j] += v * v;
      }
  return out;
}

// c[i * n + j] for j in `others`: exp(-beta d_ij) / sum over others, the distances d = sq rounded to
// binary32 (as the library's search), beta with entropy ln(perplexity).
inline void conditional_row(const std::vector<double>& sq, int64_t n, int64_t i, const std::vector<int64_t>& others,
                            double perplexity, std::vector<double>& c) {
  auto row = [&](double beta, bool store) {
    double sum = 0.0, mean = 0.0;
    for (int64_t j : others) sum += std::exp(-beta * static_cast<float>(sq[i * n + j]));
    for (int64_t j : others) {
      const double p = std::exp(-beta * static_cast<float>(sq[i * n + j])) / sum;
      mean += p * static_cast<float>(sq[i * n + j]);
      if (store) c[i * n + j] = p;
    }
    return std::log(sum) + beta * mean;  // the entropy, decreasing in beta
  };
  double lo = -30.0, hi = 30.0;
  for (int it = 0; it < 200; ++it) {
    const double mid = (lo + hi) / 2.0;
    (row(std::exp(mid), false) > std::log(perplexity) ? lo : hi) = mid;
  }
  row(std::exp((lo + hi) / 2.0), true);
}

// P = (C + C^T) / sum of the [n, n] conditional probabilities c.
inline std::vector<double> symmetrized(const std::vector<double>& c, int64_t n) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) total += c[i * n + j] + c[j * n + i];
  std::vector<double> P(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (j != i) P[i * n + j] = (c[i * n + j] + c[j * n + i]) / total;
  return P;
}

}  // namespace bl::tsne_reference
