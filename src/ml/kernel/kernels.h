// kernels.h: the pairwise kernel matrices shared by kernel_ridge (kernel_ridge.cpp) and the support
// vector machines (ml/svm/svm.cpp), and the kernel fields of the model states of kernel_pca and
// nystroem; formulas and operation order in kernels.cpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "bitlearn/tensor.h"
#include "ml/linear/common.h"

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

// A KernelSpec in a model state: kernel (text), degree (integer, 0 to 64), gamma_value and
// coef0_value (hex f32). get_kernel_state checks each field, naming est, and sets params' kernel
// to the stored one (which validates it) before it reads degree, gamma and coef0.
void put_kernel_state(nlohmann::json& state, const KernelSpec& spec);
KernelSpec get_kernel_state(const nlohmann::json& state, const std::string& est, lin::ParamSet& params);

}  // namespace bl::ml
