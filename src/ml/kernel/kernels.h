// kernels.h: the pairwise kernel matrices shared by kernel_ridge (kernel_ridge.cpp) and the support
// vector machines (ml/svm/svm.cpp); formulas and operation order in kernels.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "bitlearn/tensor.h"

namespace bl::ml {

// Settings of a pairwise kernel: kernel is linear, rbf, poly, sigmoid or laplacian; gamma already
// resolved by the caller (rounded to binary32 once).
struct KernelSpec {
  std::string kernel = "linear";
  float gamma = 1.0f;
  float coef0 = 1.0f;
  int64_t degree = 3;
};

// K [a, b] of the rows of A [a, d] against the rows of B [b, d], both on one device, every step a
// Tensor op there, so every device and thread count gives the same bits.
Tensor kernel_matrix(const Tensor& A, const Tensor& B, const KernelSpec& spec);

}  // namespace bl::ml
