// kernels.cpp: pairwise kernel matrices (A [a, d] against B [b, d]), each a chain of Tensor ops on
// A's device, so every device and thread count gives the same bits:
//   linear     K = A B^T (contract GEMM)
//   poly       T = gamma * (A B^T) + coef0, K = T * T * ... * T (degree factors, multiplied left to
//              right; degree 0 gives ones)
//   sigmoid    K = tanh(gamma * (A B^T) + coef0)
//   rbf        K = exp(-gamma * D), D the squared distances of ml/cluster/distances.h
//   laplacian  K = exp(-gamma * L1), L1[i, j] = sum_f |a_if - b_jf| (sum over features in the
//              reduction schedule; computed in row blocks of at most 2^24 elements)
#include "ml/kernel/kernels.h"

#include <algorithm>
#include <vector>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/cluster/distances.h"

namespace bl::ml {

namespace {

constexpr int64_t kBlockElems = int64_t{1} << 24;

Tensor scalar_on(float v, Device dev) { return Tensor::scalar(static_cast<double>(v), DType::f32, dev); }

// L1 distances [a, b] in row blocks of A.
Tensor manhattan(const Tensor& A, const Tensor& B) {
  const int64_t a = A.dim(0), b = B.dim(0), d = A.dim(1);
  const int64_t rows = std::max<int64_t>(1, kBlockElems / std::max<int64_t>(1, b * d));
  Tensor Bv = B.reshape({1, b, d});
  std::vector<Tensor> parts;
  for (int64_t s = 0; s < a; s += rows) {
    const int64_t e = std::min(a, s + rows);
    Tensor Ab = A.slice(0, s, e).contiguous().reshape({e - s, 1, d});
    parts.push_back(bl::sum(bl::abs(bl::sub(Ab, Bv)), {2}));
  }
  return parts.size() == 1 ? parts[0] : bl::concat(parts, 0);
}

}  // namespace

Tensor kernel_matrix(const Tensor& A, const Tensor& B, const KernelSpec& k) {
  const Device dev = A.device();
  if (k.kernel == "rbf" || k.kernel == "laplacian") {
    Tensor D = k.kernel == "rbf" ? sq_distances(A, row_sq_norms(A), B, row_sq_norms(B)) : manhattan(A, B);
    return bl::exp(bl::mul(D, scalar_on(bl::neg(k.gamma), dev)));
  }
  Tensor G = bl::matmul(A, B, false, true);
  if (k.kernel == "linear") return G;
  Tensor T = bl::add(bl::mul(G, scalar_on(k.gamma, dev)), scalar_on(k.coef0, dev));
  if (k.kernel == "sigmoid") return bl::tanh(T);
  // poly
  if (k.degree == 0) return bl::add(bl::mul(T, scalar_on(0.0f, dev)), scalar_on(1.0f, dev));
  Tensor P = T;
  for (int64_t i = 1; i < k.degree; ++i) P = bl::mul(P, T);
  return P;
}

void put_kernel_state(nlohmann::json& state, const KernelSpec& spec) {
  state["kernel"] = spec.kernel;
  state["degree"] = spec.degree;
  lin::put_f32s(state, {{"gamma_value", {spec.gamma}}, {"coef0_value", {spec.coef0}}});
}

KernelSpec get_kernel_state(const nlohmann::json& state, const std::string& est, lin::ParamSet& params) {
  KernelSpec spec;
  BL_CHECK(state.contains("kernel") && state["kernel"].is_string(), est, ": state field kernel is missing");
  spec.kernel = state["kernel"].get<std::string>();
  params.set({{"kernel", spec.kernel}});
  spec.degree = lin::get_int(state, "degree", 0, est);
  BL_CHECK(spec.degree <= 64, est, ": model state: degree=", spec.degree, " is too large (at most 64)");
  spec.gamma = lin::get_f32(state, "gamma_value", 1, est)[0];
  spec.coef0 = lin::get_f32(state, "coef0_value", 1, est)[0];
  return spec;
}

}  // namespace bl::ml
