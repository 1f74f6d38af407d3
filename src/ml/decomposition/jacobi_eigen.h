// jacobi_eigen.h: eigen-decomposition of a small symmetric matrix by the cyclic Jacobi method, in
// the contract's binary32 operations with a fixed order (pairs (p, q) row by row, p < q), so the
// result is a pure function of the matrix on every machine.
#pragma once

#include <cstdint>
#include <vector>

namespace bl::ml {

struct SymmetricEigen {
  std::vector<float> values;   // [d], descending (ties keep the lower original index first)
  std::vector<float> vectors;  // [d, d] row-major; row k is the eigenvector of values[k]
  int64_t sweeps = 0;          // sweeps run
};

// Decomposes the symmetric d x d row-major matrix a (only the upper triangle is read). Sign
// convention: each eigenvector's entry of largest magnitude (lowest index among ties) is positive.
SymmetricEigen jacobi_eigen(const std::vector<float>& a, int64_t d, int64_t max_sweeps = 60);

}  // namespace bl::ml
