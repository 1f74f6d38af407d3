// centered_problem.cpp: see centered_problem.h.
#include "ml/linear/centered_problem.h"
#include "ml/linear/linear_base.h"
#include "ml/size_limits.h"

#include "bitlearn/ops.h"
#include "contract/arith.h"

namespace bl::ml::lin {

CenteredProblem check_and_center(const std::string& est, const Tensor& X, const Tensor& y, bool center, Tensor* yf) {
  check_Xy(est, X, y);
  *yf = y_f32_on(y, X.device());
  return center_problem(X, *yf, center);
}

CenteredProblem center_problem(const Tensor& X, const Tensor& yf, bool center) {
  const int64_t n = X.dim(0), d = X.dim(1);
  check_square_matrix(n, d, "linear model Gram matrix");
  Device dev = X.device();
  CenteredProblem cp;
  cp.x_mean.assign(static_cast<size_t>(d), 0.0f);
  if (center) {
    cp.x_mean = bl::mean(X, {0}).to(Device::cpu()).to_vector<float>();
    cp.y_mean = static_cast<float>(bl::mean(yf).item());
  }
  cp.Xc = bl::sub(X, Tensor::from_vector(cp.x_mean, {d}, dev));
  cp.yc = bl::sub(yf, Tensor::scalar(cp.y_mean, DType::f32, dev)).reshape({n, 1});
  cp.gram = bl::matmul(cp.Xc, cp.Xc, true, false).to(Device::cpu()).to_vector<float>();
  cp.xty = bl::matmul(cp.Xc, cp.yc, true, false).to(Device::cpu()).to_vector<float>();
  return cp;
}

float residual_sum_squares(const CenteredProblem& cp, const std::vector<float>& w) {
  const int64_t d = static_cast<int64_t>(w.size());
  Tensor r = bl::sub(cp.yc, bl::matmul(cp.Xc, Tensor::from_vector(w, {d, 1}, cp.Xc.device())));
  return static_cast<float>(bl::sum(bl::square(r)).item());
}

float centered_intercept(const CenteredProblem& cp, const std::vector<float>& w) {
  float icpt = cp.y_mean;
  for (size_t j = 0; j < w.size(); ++j) icpt = bl::fma(bl::neg(cp.x_mean[j]), w[j], icpt);
  return icpt;
}

float sum_abs_change(const std::vector<float>& w_old, const std::vector<float>& w) {
  float change = 0.0f;
  for (size_t j = 0; j < w.size(); ++j) change = bl::add(change, bl::abs(bl::sub(w_old[j], w[j])));
  return change;
}

}  // namespace bl::ml::lin
