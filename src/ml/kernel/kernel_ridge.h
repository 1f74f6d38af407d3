// kernel_ridge.h: the kernel family (kernel_ridge.cpp) and the kernel matrices it is built on.
#pragma once

#include <memory>
#include <string>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_kernel_ridge();

// Settings of a pairwise kernel: kernel is linear, rbf, poly, sigmoid or laplacian; gamma already
// resolved (scikit-learn's None is 1 / n_features).
struct KernelSpec {
  std::string kernel = "linear";
  float gamma = 1.0f;
  float coef0 = 1.0f;
  int64_t degree = 3;
};

// K [a, b] of the rows of A [a, d] against the rows of B [b, d], both on one device, every step a
// Tensor op there (see kernel_ridge.cpp for the formulas).
Tensor kernel_matrix(const Tensor& A, const Tensor& B, const KernelSpec& spec);

}  // namespace bl::ml
