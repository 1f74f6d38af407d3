// kernel_density.cpp: kernel_density (scikit-learn's KernelDensity), an exact kernel density
// estimate over the training rows (no tree approximation; scikit-learn's atol = rtol = 0).
//
// Bandwidth h (binary32): a number > 0, or scott n^(-1 / (d + 4)), or silverman
// (n (d + 2) / 4)^(-1 / (d + 4)), each as exp(log(base) * e) with the contract's binary32 log / exp,
// base rounded once to binary32 and e = -1 / (d + 4) rounded once.
//
// score_samples(X): for each query row x, in blocks of queries, the squared distances D [b, n] to the
// training rows as D[i, j] = sum_f (x_if - t_jf)^2 (Tensor sub, square and a sum over features in the
// reduction schedule, on X's device), copied to the host. The direct differences, not the GEMM form
// |x|^2 - 2 x.t + |t|^2 of ml/cluster/distances.h: its cancellation moves log densities of
// uncentered data by up to 4e-4 relative; with the differences they stay within 1e-6 of float64.
// With r = sqrt(D) and z = r / h (binary32, the contract's sqrt and div), the log kernel of each pair:
//   gaussian      D * c, c = -0.5 / (h h) (binary64, rounded once)
//   tophat        0 if z < 1, else -inf
//   epanechnikov  log(1 - z z) if z < 1, else -inf
//   exponential   -z
//   linear        log(1 - z) if z < 1, else -inf
//   cosine        log(cos(pi / 2 * z)) if z < 1, else -inf
// (binary32 contract operations, one rounding each). The log-sum-exp over the training rows in
// ascending index: m = max, s = sum of exp(v - m) in binary64 (v - m and exp in binary32), and the
// row's log density is m + log(s) + C in binary64, rounded once to binary32, with
//   C = -log(P * n * h^d)
// where P is scikit-learn's kernel normalization in d dimensions (V_d the volume of the unit ball):
//   gaussian (2 pi)^(d/2), tophat V_d, epanechnikov 2 V_d / (d + 2), exponential d! V_d,
//   linear V_d / (d + 1), cosine d V_d sum_{k = 1, 3, ..., <= d} t_k (t_1 = 2 / pi,
//   t_{k+2} = -t_k (d - k)(d - k - 1)(2 / pi)^2),
// V_d from V_0 = 1, V_1 = 2, V_k = V_{k-2} 2 pi / k. P * n * h^d is a binary64 product (add, mul,
// div, sqrt only) kept in range by splitting off powers of two (frexp, exact), so
// log(P n h^d) = log(mantissa) + exponent * ln 2 with the contract's binary32 log of the mantissa in
// [0.5, 1). No libm function (lgamma, pow) is used. A query with no training row within the
// support of a compact kernel gets -inf, as scikit-learn. score(X) is the binary64 sum of
// score_samples in row order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/math.h"
#include "core/error.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr int64_t kBlockElems = int64_t{1} << 24;
constexpr double kPi = 3.141592653589793;
constexpr double kLn2 = 0.6931471805599453;

// A binary64 product kept as mantissa * 2^exponent (mantissa in [0.5, 1) or 0).
struct ScaledProduct {
  double mant = 0.5;
  int64_t exp2 = 1;
  void times(double v) {
    int e = 0;
    mant = std::frexp(mant * v, &e);
    exp2 += e;
  }
  // log of the value (positive values only).
  double log() const { return static_cast<double>(bl::log(static_cast<float>(mant))) + static_cast<double>(exp2) * kLn2; }
};

float gaussian_factor(float h) {
  return static_cast<float>(-0.5 / (static_cast<double>(h) * static_cast<double>(h)));
}

// V_d, the volume of the unit ball in d dimensions, into p (times V_d).
void times_unit_ball_volume(ScaledProduct& p, int64_t d) {
  if (d % 2 == 1) p.times(2.0);
  for (int64_t k = d % 2 == 1 ? 3 : 2; k <= d; k += 2) p.times(2.0 * kPi / static_cast<double>(k));
}

class KernelDensity final : public lin::ParamEstimator {
 public:
  KernelDensity()
      : lin::ParamEstimator("kernel_density",
                            {{"bandwidth", K::number_or_word, "1", 0.0, {"scott", "silverman"}, true},
                             {"kernel", K::choice, "gaussian", 0,
                              {"gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"}},
                             {"metric", K::choice, "euclidean", 0, {"euclidean"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    n_ = X.dim(0);
    d_ = X.dim(1);
    if (params_.text("bandwidth") == "scott" || params_.text("bandwidth") == "silverman") {
      const double base = params_.text("bandwidth") == "scott" ? static_cast<double>(n_)
                                                     : static_cast<double>(n_) * static_cast<double>(d_ + 2) / 4.0;
      const float e = static_cast<float>(-1.0 / static_cast<double>(d_ + 4));
      h_ = bl::exp(bl::mul(bl::log(static_cast<float>(base)), e));
    } else {
      h_ = static_cast<float>(params_.number("bandwidth"));
    }
    kernel_ = params_.text("kernel");
    BL_CHECK(h_ > 0.0f && std::isfinite(h_), name_, ": the bandwidth ", h_, " is not a finite number > 0");
    x_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    gauss_c_ = gaussian_factor(h_);
    fitted_ = true;
    return *this;
  }

  Tensor score_samples(const Tensor& X) const override {
    std::vector<double> l = log_density(X);
    std::vector<float> out(l.size());
    for (size_t i = 0; i < l.size(); ++i) out[i] = static_cast<float>(l[i]);
    return Tensor::from_vector(out, {X.dim(0)}, X.device());
  }

  double score(const Tensor& X, const Tensor&) const override {
    std::vector<double> l = log_density(X);
    double s = 0.0;
    for (double v : l) s += static_cast<double>(static_cast<float>(v));
    return s;
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_samples", n_}});
    state["kernel"] = kernel_;
    lin::put_f32s(state, {{"bandwidth", {h_}}, {"X_train", x_}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    n_ = lin::get_int(state, "n_samples", 1, name_);
    BL_CHECK(state.contains("kernel") && state["kernel"].is_string(), name_, ": state field kernel is missing");
    kernel_ = state["kernel"].get<std::string>();
    params_.set({{"kernel", kernel_}});
    h_ = lin::get_f32(state, "bandwidth", 1, name_)[0];
    BL_CHECK(h_ > 0.0f && std::isfinite(h_), name_, ": state field bandwidth is not a finite number > 0");
    x_ = lin::get_f32(state, "X_train", n_ * d_, name_);
    gauss_c_ = gaussian_factor(h_);
    fitted_ = true;
  }

 private:
  // -log(P n h^d), see the header.
  double log_constant() const {
    ScaledProduct p;
    const int64_t d = d_;
    if (kernel_ == "gaussian") {
      for (int64_t i = 0; i < d; ++i) p.times(std::sqrt(2.0 * kPi));
    } else {
      times_unit_ball_volume(p, d);
      if (kernel_ == "epanechnikov") p.times(2.0 / static_cast<double>(d + 2));
      if (kernel_ == "linear") p.times(1.0 / static_cast<double>(d + 1));
      if (kernel_ == "exponential")
        for (int64_t k = 2; k <= d; ++k) p.times(static_cast<double>(k));
      if (kernel_ == "cosine") {
        double sum = 0.0, t = 2.0 / kPi;
        const double q = (2.0 / kPi) * (2.0 / kPi);
        for (int64_t k = 1; k <= d; k += 2) {
          sum += t;
          t *= -static_cast<double>(d - k) * static_cast<double>(d - k - 1) * q;
        }
        p.times(static_cast<double>(d));
        p.times(sum);
      }
    }
    p.times(static_cast<double>(n_));
    for (int64_t i = 0; i < d; ++i) p.times(static_cast<double>(h_));
    return -p.log();
  }

  float log_kernel(float D) const {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    if (kernel_ == "gaussian") return bl::mul(D, gauss_c_);
    const float z = bl::div(bl::sqrt(D), h_);
    if (kernel_ == "exponential") return -z;
    if (!(z < 1.0f)) return kNegInf;
    if (kernel_ == "tophat") return 0.0f;
    if (kernel_ == "epanechnikov") return bl::log(bl::sub(1.0f, bl::mul(z, z)));
    if (kernel_ == "linear") return bl::log(bl::sub(1.0f, z));
    return bl::log(bl::cos(bl::mul(static_cast<float>(kPi / 2.0), z)));  // cosine
  }

  std::vector<double> log_density(const Tensor& X) const {
    BL_CHECK(fitted_, name_, ": score_samples before fit");
    lin::check_predict_X(name_, X, d_);
    const int64_t m = X.dim(0), n = n_;
    const double c = log_constant();
    Tensor T = Tensor::from_vector(x_, {1, n, d_}, X.device());
    const int64_t rows = std::max<int64_t>(1, kBlockElems / (n * d_));
    std::vector<double> out(static_cast<size_t>(m));
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t s = 0; s < m; s += rows) {
      const int64_t e = std::min(m, s + rows);
      Tensor Q = X.slice(0, s, e).contiguous().reshape({e - s, 1, d_});
      std::vector<float> D = bl::sum(bl::square(bl::sub(Q, T)), {2}).to(Device::cpu()).contiguous().to_vector<float>();
      for (int64_t i = s; i < e; ++i) {
        const float* Di = D.data() + (i - s) * n;
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < n; ++j) {
          v[j] = log_kernel(Di[j]);
          mx = std::max(mx, v[j]);
        }
        if (mx == -std::numeric_limits<float>::infinity()) {
          out[i] = -std::numeric_limits<double>::infinity();
          continue;
        }
        double sum = 0.0;
        for (int64_t j = 0; j < n; ++j) sum += static_cast<double>(bl::exp(bl::sub(v[j], mx)));
        out[i] = static_cast<double>(mx) + static_cast<double>(bl::log(static_cast<float>(sum))) + c;
      }
      report_progress(name_ + " score_samples", e, m);
    }
    return out;
  }

  std::string kernel_ = "gaussian";
  std::vector<float> x_;
  float h_ = 1.0f;
  float gauss_c_ = -0.5f;  // -0.5 / (h h), binary64 rounded once
  int64_t n_ = 0, d_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_kernel_density() { return std::make_unique<KernelDensity>(); }

}  // namespace bl::ml
