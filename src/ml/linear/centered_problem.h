// centered_problem.h: the centered least-squares problem shared by bayesian_ridge, ard_regression,
// lars and lasso_lars: Xc = X - mean(X), yc = y - mean(y) (fit_intercept; else no centering),
// G = Xc^T Xc and Xc^T yc by the contract GEMM on X's device, and the pieces every one of those fits
// repeats (squared residual, intercept back in original units, the convergence test of the weights).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::ml::lin {

struct CenteredProblem {
  std::vector<float> x_mean;  // column means of X (zeros without centering), host
  float y_mean = 0.0f;        // mean of y (0 without centering)
  Tensor Xc;                  // X - x_mean [n, d], X's device
  Tensor yc;                  // y - y_mean [n, 1], X's device
  std::vector<float> gram;    // Xc^T Xc [d, d], host
  std::vector<float> xty;     // Xc^T yc [d], host
};

// Centers X and yf (f32 on X's device) when center is true and forms the Gram products.
CenteredProblem center_problem(const Tensor& X, const Tensor& yf, bool center);
// The first steps of those fits: check_Xy naming est, y as f32 on X's device (into *yf), then
// center_problem.
CenteredProblem check_and_center(const std::string& est, const Tensor& X, const Tensor& y, bool center, Tensor* yf);

// sum_i (yc_i - (Xc w)_i)^2 as Tensor ops on X's device.
float residual_sum_squares(const CenteredProblem& cp, const std::vector<float>& w);

// The intercept in original units: y_mean - sum_j x_mean_j w_j (fma chain in index order).
float centered_intercept(const CenteredProblem& cp, const std::vector<float>& w);

// sum_j |w_old_j - w_j| in index order (the stopping test of the evidence iterations).
float sum_abs_change(const std::vector<float>& w_old, const std::vector<float>& w);

}  // namespace bl::ml::lin
