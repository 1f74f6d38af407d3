// discriminant.cpp: linear_discriminant_analysis and quadratic_discriminant_analysis (scikit-learn's
// LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis).
//
// Fit reads X once on the host. Class means, scatter matrices sum_i (x_i - m)(x_i - m)^T and the
// total covariance accumulate in binary64 in row order. The small d x d algebra that follows (a
// cyclic Jacobi eigen-decomposition, pairs (p, q) row by row with p < q, sorted by descending
// eigenvalue, each eigenvector's entry of largest magnitude positive) is also binary64 on the host,
// only add, sub, mul, div and sqrt (correctly rounded; the library is built without contraction),
// so it is a pure function of the data. Covariances of features on very different scales (wine,
// breast cancer) are too ill-conditioned for a binary32 solve; results are rounded to binary32 once.
// Logarithms (of priors and of QDA's scalings) are the contract's bl::log on binary32.
//
// linear_discriminant_analysis: priors = class frequencies. Sigma is
//   lsqr, eigen: sum_k prior_k Cov_k, Cov_k the biased covariance of class k, or with shrinkage a:
//     (1 - a) Cov_k + a (trace Cov_k / d) I; shrinkage=auto takes a from the Ledoit-Wolf formula on
//     the class rows standardized by their own standard deviations, then scales back;
//   svd: the pooled within-class scatter / n (the same matrix without shrinkage).
// With D = sqrt(diag Sigma) (1 for a zero), C = D^-1 Sigma D^-1 = V diag(lambda) V^T. The whitening
// W = D^-1 V_r diag(lambda_r)^-1/2 keeps: svd, the eigenvalues whose sqrt(lambda) exceeds tol (the
// singular values of the standardized within-class data that scikit-learn's svd solver keeps: a
// rank-deficient Sigma uses this pseudo-inverse); lsqr and eigen, all of them, and a Sigma whose
// smallest lambda is <= 1e-10 x the largest is refused as singular (use shrinkage; scikit-learn's
// lsqr would return a least-squares solution there).
//   coef_k = W W^T (m_k - r), intercept_k = -0.5 |W^T (m_k - r)|^2 - r . coef_k + log prior_k
// with r = 0 (lsqr, eigen) or r = the overall mean (svd; this differs from the lsqr form by a per-row
// constant only). Two classes keep coef_1 - coef_0 and intercept_1 - intercept_0. decision_function is
// X coef^T + intercept (contract GEMM on X's device), predict its argmax (two classes: > 0),
// predict_proba its softmax (two classes: [sigmoid(-z), sigmoid(z)]).
// transform: the directions W U, U the eigenvectors of W^T B W (descending), B = the between-class
// scatter sum_k n prior_k / (n_classes - 1) (m_k - mean)(m_k - mean)^T (svd; directions whose
// singular value sqrt(mu) is <= tol x the largest are dropped; X is centered on the overall mean) or
// B = total covariance (shrunk alike) - Sigma (eigen; X is not centered), as scikit-learn's scalings_, up to the
// sign of each column (its entry of largest magnitude is positive here). lsqr has no transform.
//
// quadratic_discriminant_analysis: per class k, S_k = scatter / n_k = R diag(lambda) R^T (the biased
// covariance, as scikit-learn 1.9; earlier versions divided by n_k - 1); the min(n_k, d) leading
// directions are kept (as the thin SVD of the centered class rows) with scalings
// (1 - reg_param) lambda + reg_param; a scaling <= tol is an error (collinear variables; scikit-learn
// 1.9 also refuses n_k <= d, which is accepted here when reg_param keeps the scalings > tol). Prediction:
// jll_k = -0.5 (|(x - m_k) R_k diag(s_k)^-1/2|^2 + sum log s_k) + log prior_k, the GEMM and row sums
// as ops on X's device; predict_proba is the contract softmax, predict the first largest jll.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/math.h"
#include "core/error.h"
#include "ml/decomposition/dense64.h"
#include "ml/linear/common.h"
#include "ml/linear/linear_classifier.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

// Largest feature count: the fit holds n_classes d x d binary64 matrices and runs O(d^3) sweeps.
constexpr int64_t kMaxFeatures = 2048;

using Mat = std::vector<double>;  // row-major

// Eigen-decomposition of the symmetric d x d matrix a by cyclic Jacobi in binary64. values
// descending (ties: lower original index first); vectors row k = eigenvector of values[k], its
// entry of largest magnitude (lowest index among ties) positive.
struct Eigen64 {
  std::vector<double> values;
  Mat vectors;
};

Eigen64 jacobi64(Mat a, int64_t d) {
  Mat v(static_cast<size_t>(d * d), 0.0);
  for (int64_t i = 0; i < d; ++i) v[i * d + i] = 1.0;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0, total = 0.0;
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = 0; q < d; ++q) {
        const double s = a[p * d + q] * a[p * d + q];
        total += s;
        if (p != q) off += s;
      }
    if (off == 0.0 || off <= 1e-30 * total) break;
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = p + 1; q < d; ++q) {
        const double apq = a[p * d + q];
        if (apq == 0.0) continue;
        // t = tan(phi) with (1 - t^2) a_pq + t (a_pp - a_qq) = 0, the smaller root.
        const double theta = (a[q * d + q] - a[p * d + p]) / (2.0 * apq);
        const double at = std::fabs(theta);
        double t = at > 1e150 ? 0.5 / at : 1.0 / (at + std::sqrt(at * at + 1.0));
        if (theta < 0.0) t = -t;
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (int64_t k = 0; k < d; ++k) {  // columns p, q
          const double akp = a[k * d + p], akq = a[k * d + q];
          a[k * d + p] = c * akp - s * akq;
          a[k * d + q] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < d; ++k) {  // rows p, q
          const double apk = a[p * d + k], aqk = a[q * d + k];
          a[p * d + k] = c * apk - s * aqk;
          a[q * d + k] = s * apk + c * aqk;
        }
        a[p * d + q] = 0.0;
        a[q * d + p] = 0.0;
        for (int64_t k = 0; k < d; ++k) {
          const double vkp = v[k * d + p], vkq = v[k * d + q];
          v[k * d + p] = c * vkp - s * vkq;
          v[k * d + q] = s * vkp + c * vkq;
        }
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return a[i * d + i] > a[j * d + j]; });
  Eigen64 out;
  out.values.resize(static_cast<size_t>(d));
  out.vectors.resize(static_cast<size_t>(d * d));
  for (int64_t k = 0; k < d; ++k) {
    const int64_t col = order[k];
    out.values[k] = a[col * d + col];
    int64_t big = 0;
    for (int64_t i = 1; i < d; ++i)
      if (std::fabs(v[i * d + col]) > std::fabs(v[big * d + col])) big = i;
    const double sign = v[big * d + col] < 0.0 ? -1.0 : 1.0;
    for (int64_t i = 0; i < d; ++i) out.vectors[k * d + i] = sign * v[i * d + col];
  }
  return out;
}

// log(count / n) as bl::log(count) - bl::log(n) in binary32.
float log_prior(double count, double n) {
  return bl::sub(bl::log(static_cast<float>(count)), bl::log(static_cast<float>(n)));
}

// Per-class row counts, means and scatter matrices (binary64, row order).
struct ClassStats {
  std::vector<double> count;   // [c]
  Mat mean;                    // [c, d]
  std::vector<Mat> scatter;    // c x [d, d]
};

ClassStats class_stats(const std::vector<float>& x, const std::vector<int64_t>& cls, int64_t n, int64_t d,
                       int64_t c) {
  ClassStats s;
  s.count.assign(static_cast<size_t>(c), 0.0);
  s.mean.assign(static_cast<size_t>(c * d), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    s.count[cls[i]] += 1.0;
    for (int64_t j = 0; j < d; ++j) s.mean[cls[i] * d + j] += x[i * d + j];
  }
  for (int64_t k = 0; k < c; ++k)
    for (int64_t j = 0; j < d; ++j) s.mean[k * d + j] /= s.count[k];
  s.scatter.assign(static_cast<size_t>(c), Mat(static_cast<size_t>(d * d), 0.0));
  std::vector<double> diff(static_cast<size_t>(d));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = cls[i];
    for (int64_t j = 0; j < d; ++j) diff[j] = x[i * d + j] - s.mean[k * d + j];
    Mat& S = s.scatter[k];
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = p; q < d; ++q) S[p * d + q] += diff[p] * diff[q];
  }
  for (Mat& S : s.scatter)
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = 0; q < p; ++q) S[p * d + q] = S[q * d + p];
  return s;
}

void check_size(const std::string& est, int64_t d) {
  BL_CHECK(d <= kMaxFeatures, est, ": ", d, " features is too many (the limit is ", kMaxFeatures, ")");
}

// ---------------------------------------------------------------------------------------------
// linear_discriminant_analysis

class LinearDiscriminant final : public lin::ParamEstimator {
 public:
  LinearDiscriminant()
      : lin::ParamEstimator("linear_discriminant_analysis",
                            {{"n_components", K::integer, "0", 0},
                             {"solver", K::choice, "svd", 0, {"svd", "lsqr", "eigen"}},
                             {"tol", K::number, "0.0001", 0.0}}) {}

  // shrinkage is none, auto or a number in [0, 1]: checked here, kept beside the table.
  // n_components=none is 0 (the default, min(n_classes - 1, n_features)).
  void set_params(const Params& p) override {
    Params rest = p;
    auto nc = rest.find("n_components");
    if (nc != rest.end() && nc->second == "none") nc->second = "0";
    auto it = rest.find("shrinkage");
    std::string text = shrinkage_;
    if (it != rest.end()) {
      text = it->second;
      if (text != "none" && text != "auto") {
        double v = 0.0;
        try {
          v = param_double(name_, "shrinkage", text);
        } catch (const Error&) {
          throw Error(name_ + ": parameter shrinkage=" + text + ": expected none, auto or a number in [0, 1]");
        }
        BL_CHECK(std::isfinite(v) && v >= 0.0 && v <= 1.0, name_, ": parameter shrinkage=", text,
                 ": expected none, auto or a number in [0, 1]");
        text = param_text(v);
      }
      rest.erase(it);
    }
    params_.set(rest);
    shrinkage_ = text;
  }

  Params get_params() const override {
    Params p = params_.all();
    p["shrinkage"] = shrinkage_;
    return p;
  }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    lin::EncodedLabels e = lin::encode_labels(name_, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1), c = static_cast<int64_t>(e.classes.size());
    check_size(name_, d);
    const std::string solver = params_.text("solver");
    const double tol = params_.number("tol");
    BL_CHECK(solver != "svd" || shrinkage_ == "none", name_, ": shrinkage=", shrinkage_,
             " is not supported with solver=svd; use solver=lsqr or solver=eigen");
    const int64_t max_components = std::min(c - 1, d);
    int64_t n_components = params_.integer("n_components");
    BL_CHECK(n_components <= max_components, name_, ": n_components=", n_components,
             " cannot be larger than min(n_features, n_classes - 1) = ", max_components);
    if (n_components == 0) n_components = max_components;

    std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>();
    ClassStats st = class_stats(x, e.index, n, d, c);
    const double nd = static_cast<double>(n);
    std::vector<double> xbar(static_cast<size_t>(d), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) xbar[j] += x[i * d + j];
    for (int64_t j = 0; j < d; ++j) xbar[j] /= nd;

    // Sigma.
    Mat sigma(static_cast<size_t>(d * d), 0.0);
    if (solver == "svd") {
      for (int64_t k = 0; k < c; ++k)
        for (size_t i = 0; i < sigma.size(); ++i) sigma[i] += st.scatter[k][i];
      for (double& v : sigma) v /= nd;
    } else {
      for (int64_t k = 0; k < c; ++k) {
        Mat cov = shrunk_covariance(x, e.index, k, &st.mean[k * d], st.scatter[k], st.count[k], n, d);
        const double prior = st.count[k] / nd;
        for (size_t i = 0; i < sigma.size(); ++i) sigma[i] += prior * cov[i];
      }
    }

    // Whitening W [d, r] of Sigma through its correlation form.
    std::vector<double> D(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) D[j] = sigma[j * d + j] > 0.0 ? std::sqrt(sigma[j * d + j]) : 1.0;
    Mat corr(static_cast<size_t>(d * d));
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = 0; q < d; ++q) corr[p * d + q] = sigma[p * d + q] / D[p] / D[q];
    Eigen64 eg = jacobi64(corr, d);
    int64_t r = 0;
    if (solver == "svd") {
      while (r < d && eg.values[r] > 0.0 && std::sqrt(eg.values[r]) > tol) ++r;
      BL_CHECK(r > 0, name_, ": every feature is constant within its class (the within-class covariance is 0)");
    } else {
      BL_CHECK(eg.values[0] > 0.0 && eg.values[d - 1] > 1e-10 * eg.values[0], name_,
               ": the within-class covariance is singular (collinear or constant features); use shrinkage=auto or a "
               "number in (0, 1], or solver=svd");
      r = d;
    }
    Mat W(static_cast<size_t>(d * r));
    for (int64_t j = 0; j < d; ++j)
      for (int64_t t = 0; t < r; ++t) W[j * r + t] = eg.vectors[t * d + j] / D[j] / std::sqrt(eg.values[t]);

    // Discriminant coefficients (binary64), rounded once.
    const bool centered = solver == "svd";
    Mat coef(static_cast<size_t>(c * d), 0.0);
    std::vector<double> icpt(static_cast<size_t>(c), 0.0);
    std::vector<double> g(static_cast<size_t>(r));
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t t = 0; t < r; ++t) {
        double s = 0.0;
        for (int64_t j = 0; j < d; ++j) s += W[j * r + t] * (st.mean[k * d + j] - (centered ? xbar[j] : 0.0));
        g[t] = s;
      }
      double q = 0.0, off = 0.0;
      for (int64_t t = 0; t < r; ++t) q += g[t] * g[t];
      for (int64_t j = 0; j < d; ++j) {
        double s = 0.0;
        for (int64_t t = 0; t < r; ++t) s += W[j * r + t] * g[t];
        coef[k * d + j] = s;
        if (centered) off += xbar[j] * s;
      }
      icpt[k] = -0.5 * q - off;
    }
    std::vector<float> lp(static_cast<size_t>(c));
    for (int64_t k = 0; k < c; ++k) lp[k] = log_prior(st.count[k], nd);
    lin::LinearClassifierFit f;
    f.classes = e.classes;
    f.label_dtype = y.dtype();
    f.n_features = d;
    if (c == 2) {
      f.outputs = 1;
      f.coef.resize(static_cast<size_t>(d));
      for (int64_t j = 0; j < d; ++j) f.coef[j] = static_cast<float>(coef[d + j] - coef[j]);
      f.intercept = {bl::add(static_cast<float>(icpt[1] - icpt[0]), bl::sub(lp[1], lp[0]))};
    } else {
      f.outputs = c;
      f.coef.assign(coef.begin(), coef.end());
      f.intercept.resize(static_cast<size_t>(c));
      for (int64_t k = 0; k < c; ++k) f.intercept[k] = bl::add(static_cast<float>(icpt[k]), lp[k]);
    }
    f.fitted = true;

    // Transform directions.
    scalings_.clear();
    n_out_ = 0;
    center_ = centered;
    xbar_.assign(xbar.begin(), xbar.end());
    if (solver != "lsqr") {
      Mat B(static_cast<size_t>(d * d), 0.0);
      if (centered) {
        std::vector<double> dm(static_cast<size_t>(d));
        for (int64_t k = 0; k < c; ++k) {
          const double w = st.count[k] / static_cast<double>(c - 1);
          for (int64_t j = 0; j < d; ++j) dm[j] = st.mean[k * d + j] - xbar[j];
          for (int64_t p = 0; p < d; ++p)
            for (int64_t q = 0; q < d; ++q) B[p * d + q] += w * dm[p] * dm[q];
        }
      } else {  // total covariance (shrunk as Sigma's terms are) - Sigma
        std::vector<double> dm(static_cast<size_t>(d));
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < d; ++j) dm[j] = x[i * d + j] - xbar[j];
          for (int64_t p = 0; p < d; ++p)
            for (int64_t q = p; q < d; ++q) B[p * d + q] += dm[p] * dm[q];
        }
        for (int64_t p = 0; p < d; ++p)
          for (int64_t q = 0; q < p; ++q) B[p * d + q] = B[q * d + p];
        B = shrunk_covariance(x, e.index, -1, xbar.data(), B, nd, n, d);
        for (size_t i = 0; i < B.size(); ++i) B[i] -= sigma[i];
      }
      // M = W^T B W [r, r].
      Mat M = dec::mul64_tn(W, dec::mul64(B, W, d, d, r), d, r, r);
      for (int64_t a = 0; a < r; ++a)  // exact symmetry for the decomposition
        for (int64_t b = a + 1; b < r; ++b) M[b * r + a] = M[a * r + b];
      Eigen64 be = jacobi64(M, r);
      int64_t keep = std::min(n_components, r);
      if (centered) {
        int64_t rb = 0;
        const double top = be.values[0] > 0.0 ? std::sqrt(be.values[0]) : 0.0;
        while (rb < r && be.values[rb] > 0.0 && std::sqrt(be.values[rb]) > tol * top) ++rb;
        keep = std::min(keep, rb);
      }
      n_out_ = keep;
      scalings_.assign(static_cast<size_t>(d * keep), 0.0f);
      for (int64_t t = 0; t < keep; ++t) {
        std::vector<double> col(static_cast<size_t>(d));
        int64_t big = 0;
        for (int64_t j = 0; j < d; ++j) {
          double s = 0.0;
          for (int64_t a = 0; a < r; ++a) s += W[j * r + a] * be.vectors[t * r + a];
          col[j] = s;
          if (std::fabs(col[j]) > std::fabs(col[big])) big = j;
        }
        const double sign = col[big] < 0.0 ? -1.0 : 1.0;
        for (int64_t j = 0; j < d; ++j) scalings_[j * keep + t] = static_cast<float>(sign * col[j]);
      }
    }
    fit_ = std::move(f);
    fitted_ = true;
    return *this;
  }

  Tensor decision_function(const Tensor& X) const override { return fit_.decision_scores(name_, X); }
  Tensor predict(const Tensor& X) const override { return fit_.predict(name_, X); }

  Tensor predict_proba(const Tensor& X) const override {
    Tensor Z = fit_.decision_function(name_, X);
    if (fit_.outputs > 1) return bl::softmax(Z, 1);
    return bl::concat({bl::sigmoid(bl::neg(Z)), bl::sigmoid(Z)}, 1);
  }

  Tensor transform(const Tensor& X) const override {
    BL_CHECK(fitted_, name_, ": transform before fit");
    BL_CHECK(n_out_ > 0, name_, ": transform is not supported with solver=lsqr (use solver=svd or solver=eigen)");
    lin::check_predict_X(name_, X, fit_.n_features);
    const int64_t d = fit_.n_features;
    Tensor A = X.contiguous();
    if (center_) A = bl::sub(A, Tensor::from_vector(xbar_, {1, d}, X.device()));
    return bl::matmul(A, Tensor::from_vector(scalings_, {d, n_out_}, X.device()));
  }

  double score(const Tensor& X, const Tensor& y) const override { return lin::accuracy_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    fit_.save(state);
    state["n_components"] = n_out_;
    state["center"] = center_;
    lin::put_f32s(state, {{"xbar", xbar_}, {"scalings", scalings_}});
  }

  void load_state(const nlohmann::json& state) override {
    lin::LinearClassifierFit f;
    f.load(state, name_);
    const int64_t d = f.n_features;
    BL_CHECK(d <= kMaxFeatures, name_, ": model state: n_features=", d, " is too large");
    const int64_t k = lin::get_int(state, "n_components", 0, name_);
    BL_CHECK(k <= d, name_, ": model state: n_components=", k, " exceeds n_features=", d);
    BL_CHECK(state.contains("center") && state["center"].is_boolean(), name_,
             ": model state: center must be a boolean");
    center_ = state["center"].get<bool>();
    xbar_ = lin::get_f32(state, "xbar", d, name_);
    scalings_ = lin::get_f32(state, "scalings", d * k, name_);
    n_out_ = k;
    fit_ = std::move(f);
    fitted_ = true;
  }

 private:
  // The biased covariance of the rows of class k (every row for k = -1), with their mean and
  // scatter matrix, shrunk by the shrinkage parameter.
  Mat shrunk_covariance(const std::vector<float>& x, const std::vector<int64_t>& cls, int64_t k, const double* mean,
                        const Mat& scatter, double nk, int64_t n, int64_t d) const {
    Mat cov(static_cast<size_t>(d * d));
    for (size_t i = 0; i < cov.size(); ++i) cov[i] = scatter[i] / nk;
    if (shrinkage_ == "none") return cov;
    if (shrinkage_ != "auto") {
      const double a = param_double(name_, "shrinkage", shrinkage_);
      double tr = 0.0;
      for (int64_t j = 0; j < d; ++j) tr += cov[j * d + j];
      const double mu = tr / static_cast<double>(d);
      for (size_t i = 0; i < cov.size(); ++i) cov[i] *= 1.0 - a;
      for (int64_t j = 0; j < d; ++j) cov[j * d + j] += a * mu;
      return cov;
    }
    // Ledoit-Wolf on the standardized class rows z = (x - m) / s (s: their standard deviations).
    std::vector<double> s(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) s[j] = cov[j * d + j] > 0.0 ? std::sqrt(cov[j * d + j]) : 1.0;
    Mat emp(cov.size());
    double tr = 0.0, delta_sum = 0.0;
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = 0; q < d; ++q) {
        emp[p * d + q] = cov[p * d + q] / s[p] / s[q];
        delta_sum += emp[p * d + q] * emp[p * d + q];
      }
    for (int64_t j = 0; j < d; ++j) tr += emp[j * d + j];
    const double dd = static_cast<double>(d), mu = tr / dd;
    double beta_sum = 0.0;  // sum over rows of |z|^4
    for (int64_t i = 0; i < n; ++i) {
      if (k >= 0 && cls[i] != k) continue;
      double z2 = 0.0;
      for (int64_t j = 0; j < d; ++j) {
        const double z = (x[i * d + j] - mean[j]) / s[j];
        z2 += z * z;
      }
      beta_sum += z2 * z2;
    }
    double shrink = 0.0;
    if (d > 1) {
      double beta = (beta_sum / nk - delta_sum) / (dd * nk);
      const double delta = (delta_sum - 2.0 * mu * tr + dd * mu * mu) / dd;
      beta = std::min(beta, delta);
      shrink = beta == 0.0 ? 0.0 : beta / delta;
    }
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = 0; q < d; ++q) {
        double v = (1.0 - shrink) * emp[p * d + q];
        if (p == q) v += shrink * mu;
        cov[p * d + q] = s[p] * v * s[q];
      }
    return cov;
  }

  std::string shrinkage_ = "none";
  lin::LinearClassifierFit fit_;
  std::vector<float> xbar_, scalings_;  // transform: [d], [d, n_out_]
  int64_t n_out_ = 0;
  bool center_ = false;
};

// ---------------------------------------------------------------------------------------------
// quadratic_discriminant_analysis

class QuadraticDiscriminant final : public lin::ParamEstimator {
 public:
  QuadraticDiscriminant()
      : lin::ParamEstimator("quadratic_discriminant_analysis",
                            {{"reg_param", K::number, "0", 0.0}, {"tol", K::number, "0.0001", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    lin::EncodedLabels e = lin::encode_labels(name_, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1), c = static_cast<int64_t>(e.classes.size());
    check_size(name_, d);
    const double reg = params_.number("reg_param"), tol = params_.number("tol");
    BL_CHECK(reg <= 1.0, name_, ": parameter reg_param=", params_.text("reg_param"), ": expected a number in [0, 1]");
    std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>();
    ClassStats st = class_stats(x, e.index, n, d, c);
    for (int64_t k = 0; k < c; ++k)
      BL_CHECK(st.count[k] >= 2.0, name_, ": y has only 1 sample in class ", e.classes[k],
               ", its covariance is ill defined");
    classes_ = e.classes;
    label_dtype_ = y.dtype();
    d_ = d;
    means_.assign(st.mean.begin(), st.mean.end());
    log_prior_.resize(static_cast<size_t>(c));
    rank_.assign(static_cast<size_t>(c), 0);
    rotations_.clear();
    scalings_.clear();
    for (int64_t k = 0; k < c; ++k) {
      log_prior_[k] = log_prior(st.count[k], static_cast<double>(n));
      Mat S = st.scatter[k];
      for (double& v : S) v /= st.count[k];
      Eigen64 eg = jacobi64(S, d);
      const int64_t r = std::min(static_cast<int64_t>(st.count[k]), d);
      rank_[k] = r;
      for (int64_t t = 0; t < r; ++t) {
        const double s = (1.0 - reg) * eg.values[t] + reg;
        BL_CHECK(s > tol, name_, ": variables are collinear in class ", e.classes[k], " (a covariance scaling ",
                 s, " is <= tol=", params_.text("tol"), "); use reg_param > 0");
        scalings_.push_back(static_cast<float>(s));
      }
      for (int64_t j = 0; j < d; ++j)
        for (int64_t t = 0; t < r; ++t) rotations_.push_back(static_cast<float>(eg.vectors[t * d + j]));
    }
    derive();
    fitted_ = true;
    return *this;
  }

  Tensor decision_function(const Tensor& X) const override {
    Tensor J = joint_log_likelihood(X);
    if (classes_.size() != 2) return J;
    const int64_t m = X.dim(0);
    return bl::sub(bl::slice(J, 1, 1, 2), bl::slice(J, 1, 0, 1)).reshape({m});
  }

  Tensor predict_proba(const Tensor& X) const override { return bl::softmax(joint_log_likelihood(X), 1); }

  Tensor predict(const Tensor& X) const override {
    return lin::labels_from_index(classes_, bl::argmax(joint_log_likelihood(X), 1), label_dtype_, X.device());
  }

  double score(const Tensor& X, const Tensor& y) const override { return lin::accuracy_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_classes", static_cast<int64_t>(classes_.size())}});
    lin::put_labels(state, classes_, label_dtype_);
    lin::put_f32s(state, {{"class_log_prior", log_prior_}, {"means", means_}});
    state["rank"] = rank_;
    lin::put_f32s(state, {{"rotations", rotations_}, {"scalings", scalings_}});
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    const int64_t c = lin::get_int(state, "n_classes", 2, name_);
    BL_CHECK(c <= (int64_t{1} << 16) && d_ <= kMaxFeatures, name_, ": model state: n_classes=", c,
             " or n_features=", d_, " is too large");
    classes_ = lin::get_f32(state, "classes", c, name_);
    label_dtype_ = lin::get_label_dtype(state);
    log_prior_ = lin::get_f32(state, "class_log_prior", c, name_);
    means_ = lin::get_f32(state, "means", c * d_, name_);
    BL_CHECK(state.contains("rank") && state["rank"].is_array() && static_cast<int64_t>(state["rank"].size()) == c,
             name_, ": model state: rank must be an array of ", c, " integers");
    rank_.clear();
    int64_t total = 0;
    for (const auto& v : state["rank"]) {
      BL_CHECK(v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= d_, name_,
               ": model state: rank entries must be integers in [1, n_features]");
      rank_.push_back(v.get<int64_t>());
      total += v.get<int64_t>();
    }
    scalings_ = lin::get_f32(state, "scalings", total, name_);
    for (float s : scalings_) BL_CHECK(s > 0.0f, name_, ": model state: scalings must be positive, got ", s);
    rotations_ = lin::get_f32(state, "rotations", total * d_, name_);
    derive();
    fitted_ = true;
  }

 private:
  // From the stored binary32 state: W_k = R_k diag(s_k)^-1/2 (binary64 sqrt and division, rounded
  // once) and the constant log prior_k - 0.5 sum log s_k (binary32, in direction order).
  void derive() {
    const int64_t c = static_cast<int64_t>(rank_.size()), d = d_;
    whiten_.assign(rotations_.size(), 0.0f);
    constant_.assign(static_cast<size_t>(c), 0.0f);
    int64_t so = 0;
    for (int64_t k = 0; k < c; ++k) {
      const int64_t r = rank_[k];
      float u = 0.0f;
      for (int64_t t = 0; t < r; ++t) u = bl::add(u, bl::log(scalings_[so + t]));
      constant_[k] = bl::fma(-0.5f, u, log_prior_[k]);
      for (int64_t j = 0; j < d; ++j)
        for (int64_t t = 0; t < r; ++t) {
          const int64_t i = so * d + j * r + t;
          whiten_[i] = static_cast<float>(static_cast<double>(rotations_[i]) /
                                          std::sqrt(static_cast<double>(scalings_[so + t])));
        }
      so += r;
    }
  }

  Tensor joint_log_likelihood(const Tensor& X) const {
    check_predict_input(X, d_);
    const int64_t d = d_, c = static_cast<int64_t>(classes_.size());
    Tensor A = X.contiguous();
    Tensor half = Tensor::scalar(-0.5, DType::f32, X.device());
    std::vector<Tensor> cols;
    int64_t so = 0;
    for (int64_t k = 0; k < c; ++k) {
      const int64_t r = rank_[k];
      std::vector<float> mk(means_.begin() + k * d, means_.begin() + (k + 1) * d);
      std::vector<float> wk(whiten_.begin() + so * d, whiten_.begin() + (so + r) * d);
      Tensor Z = bl::matmul(bl::sub(A, Tensor::from_vector(mk, {1, d}, X.device())),
                            Tensor::from_vector(wk, {d, r}, X.device()));
      Tensor n2 = bl::sum(bl::mul(Z, Z), {1}, true);
      cols.push_back(bl::add(bl::mul(n2, half), Tensor::scalar(constant_[k], DType::f32, X.device())));
      so += r;
    }
    return bl::concat(cols, 1);
  }

  std::vector<float> classes_, log_prior_, means_, rotations_, scalings_;
  std::vector<int64_t> rank_;
  std::vector<float> whiten_, constant_;  // derived
  DType label_dtype_ = DType::f32;
  int64_t d_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_linear_discriminant_analysis() { return std::make_unique<LinearDiscriminant>(); }
std::unique_ptr<Estimator> make_quadratic_discriminant_analysis() {
  return std::make_unique<QuadraticDiscriminant>();
}

}  // namespace bl::ml
