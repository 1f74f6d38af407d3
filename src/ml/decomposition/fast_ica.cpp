// fast_ica.cpp: fast_ica (scikit-learn's FastICA), independent component analysis by the FastICA
// fixed-point iteration.
//
// All in binary64 on the host, every sum in ascending index order; the worker pool's tasks own whole
// outputs (blocks of rows of W X, or rows of the k x k products), so the bits do not depend on the
// thread count. Whitening (whiten=unit-variance or arbitrary-variance): mean = column means, the
// eigen-decomposition of Xc^T Xc (symmetric_eigen64; eigenvalues below 2^-52 raised to it, each
// vector's first entry made non-negative as scikit-learn's u *= sign(u[0])), K = u_t / sqrt(lambda_t)
// for the n_components largest, X1 = sqrt(n) K Xc^T. whiten=false: X1 = X^T, n_components = n_features.
// w_init [k, k]: Philox normals normal_element(random_state, stream 1, i * k + j) (binary32 values).
// parallel: W = (W W^T)^-1/2 W, then W <- decorrelate(g(W X1) X1^T / n - mean(g'(W X1)) W) until
// max |abs(diag(W_new W^T)) - 1| < tol; deflation: one unit row at a time, Gram-Schmidt against the
// rows found, until |abs(w_new . w) - 1| < tol. g: logcosh (tanh by host_math's exp64), exp
// (x e^{-x^2/2}), cube (x^3). max_iter without convergence warns (parallel, as scikit-learn).
// unit-variance: each row of W divided by the population standard deviation of its source.
// components = W K [k, d]; mixing = pinv(components) = components^T (components components^T)^-1 (the
// k x k inverse through symmetric_eigen64). Stored values rounded once to binary32.
// transform = (X - mean) components^T by the contract GEMM on X's device.
#include <algorithm>
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/optional_count.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/host_math.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/size_limits.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

constexpr uint64_t kInitStream = 1;
constexpr int64_t kColumnBlock = 512;
constexpr double kTiny = 2.2250738585072014e-308;  // the smallest normal binary64
constexpr double kEps = 2.220446049250313e-16;     // 2^-52

double tanh64(double y) {
  const double a = y < 0.0 ? -y : y;
  const double t = a > 20.0 ? 1.0 : 1.0 - 2.0 / (exp64(2.0 * a) + 1.0);
  return y < 0.0 ? -t : t;
}

// The nonlinearity g and its derivative g' at x (fun: 0 logcosh, 1 exp, 2 cube).
inline void contrast(int fun, double x, double& g, double& dg) {
  if (fun == 0) {
    g = tanh64(x);
    dg = 1.0 - g * g;
  } else if (fun == 1) {
    const double e = exp64(-(x * x) / 2.0);
    g = x * e;
    dg = (1.0 - x * x) * e;
  } else {
    g = x * x * x;
    dg = 3.0 * x * x;
  }
}

// (W W^T)^-1/2 W for W [k, k] (eigenvalues below the smallest normal raised to it).
std::vector<double> sym_decorrelation(const std::vector<double>& w, int64_t k) {
  SymmetricEigen64 e = symmetric_eigen64(dec::row_gram_lower(w, k, k), k, -1, "fast_ica");
  std::vector<double> m(static_cast<size_t>(k * k), 0.0);
  for (int64_t a = 0; a < k; ++a)
    for (int64_t b = 0; b < k; ++b) {
      double s = 0.0;
      for (int64_t t = 0; t < k; ++t)
        s += e.vectors[t * k + a] * (1.0 / std::sqrt(std::max(e.values[t], kTiny))) * e.vectors[t * k + b];
      m[a * k + b] = s;
    }
  return dec::mul64(m, w, k, k, k);
}

class FastICA final : public lin::ParamEstimator {
 public:
  FastICA()
      : lin::ParamEstimator("fast_ica", {{"algorithm", K::choice, "parallel", 0, {"parallel", "deflation"}},
                                         {"fun", K::choice, "logcosh", 0, {"logcosh", "exp", "cube"}},
                                         {"max_iter", K::integer, "200", 1},
                                         {"n_components", K::number_or_word, "none", 1.0, {"none"}},
                                         {"random_state", K::integer, "0", 0},
                                         {"tol", K::number, "0.0001", 0.0},
                                         {"whiten", K::choice, "unit-variance", 0,
                                          {"unit-variance", "arbitrary-variance", "false"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1);
    check_square_matrix(n, d, "fast_ica covariance matrix");
    const std::string& wh = params_.text("whiten");
    whiten_ = wh != "false";
    int64_t k = d;
    if (whiten_) {
      k = dec::optional_count(params_, name_, "n_components", std::min(n, d));
      BL_CHECK(k <= std::min(n, d), name_, ": n_components=", k, " must be at most min(n_samples, n_features) = ",
               std::min(n, d));
    }
    const std::vector<double> xh = dec::to_host64(X);
    std::vector<double> mean(static_cast<size_t>(d), 0.0), kw;
    std::vector<double> x1(static_cast<size_t>(k * n));  // [k, n]
    if (whiten_) {
      mean = dec::column_means(xh, n, d);
      std::vector<double> xc(xh.size());
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < d; ++j) xc[i * d + j] = xh[i * d + j] - mean[j];
      SymmetricEigen64 e = symmetric_eigen64(dec::column_gram_lower(xc, n, d), d, k, "fast_ica");
      kw.assign(static_cast<size_t>(k * d), 0.0);
      for (int64_t t = 0; t < k; ++t) {
        const double sv = std::sqrt(std::max(e.values[t], kEps));
        const double sign = e.vectors[t * d] < 0.0 ? -1.0 : 1.0;
        for (int64_t j = 0; j < d; ++j) kw[t * d + j] = sign * e.vectors[t * d + j] / sv;
      }
      const double rn = std::sqrt(static_cast<double>(n));
      default_pool().parallel_for((n + kColumnBlock - 1) / kColumnBlock, [&](int64_t blk) {
        for (int64_t i = blk * kColumnBlock; i < std::min(n, (blk + 1) * kColumnBlock); ++i)
          for (int64_t t = 0; t < k; ++t) {
            double s = 0.0;
            for (int64_t j = 0; j < d; ++j) s += kw[t * d + j] * xc[i * d + j];
            x1[t * n + i] = s * rn;
          }
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < d; ++j) x1[j * n + i] = xh[i * d + j];
    }
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    w_init_.resize(static_cast<size_t>(k * k));
    std::vector<double> w0(static_cast<size_t>(k * k));
    for (int64_t i = 0; i < k * k; ++i) {
      w_init_[i] = normal_element(seed, kInitStream, static_cast<uint64_t>(i));
      w0[i] = w_init_[i];
    }
    const std::string& f = params_.text("fun");
    fun_ = f == "logcosh" ? 0 : f == "exp" ? 1 : 2;
    std::vector<double> w = params_.text("algorithm") == "parallel" ? ica_parallel(x1, w0, k, n) : ica_deflation(x1, w0, k, n);
    // unit-variance: sources S = W X1 / sqrt(n) ... divided by their population standard deviation.
    if (wh == "unit-variance") {
      std::vector<double> wx = product(w, x1, k, n);
      for (int64_t t = 0; t < k; ++t) {
        // S_t = (W K Xc^T)_t = (W X1)_t / sqrt(n)
        const double rn = std::sqrt(static_cast<double>(n));
        double m = 0.0, q = 0.0;
        for (int64_t i = 0; i < n; ++i) m += wx[t * n + i] / rn;
        m /= static_cast<double>(n);
        for (int64_t i = 0; i < n; ++i) {
          const double v = wx[t * n + i] / rn - m;
          q += v * v;
        }
        const double sd = std::sqrt(q / static_cast<double>(n));
        for (int64_t j = 0; j < k; ++j) w[t * k + j] /= sd;
      }
    }
    const std::vector<double> comp = whiten_ ? dec::mul64(w, kw, k, k, d) : w;
    d_ = d;
    k_ = k;
    mean_.assign(mean.begin(), mean.end());
    components_.assign(comp.begin(), comp.end());
    whitening_.assign(kw.begin(), kw.end());
    mixing_ = pinv_rows(comp, k, d);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const Device dev = X.device();
    Tensor W = Tensor::from_vector(components_, {k_, d_}, dev);
    if (!whiten_) return bl::matmul(X, W, false, true);
    return bl::matmul(bl::sub(X, Tensor::from_vector(mean_, {d_}, dev)), W, false, true);
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_components", k_}, {"n_iter", n_iter_}});
    state["whiten"] = whiten_;
    lin::put_f32s(state, {{"components", components_}, {"mixing", mixing_}, {"w_init", w_init_}});
    if (whiten_) lin::put_f32s(state, {{"mean", mean_}, {"whitening", whitening_}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    k_ = lin::get_int(state, "n_components", 1, name_);
    BL_CHECK(k_ <= d_, name_, ": model state: n_components ", k_, " > n_features ", d_);
    n_iter_ = lin::get_int(state, "n_iter", 1, name_);
    BL_CHECK(state.contains("whiten") && state["whiten"].is_boolean(), name_, ": state field whiten is missing");
    whiten_ = state["whiten"].get<bool>();
    BL_CHECK(whiten_ || k_ == d_, name_, ": model state: without whitening n_components must equal n_features");
    components_ = lin::get_f32(state, "components", k_ * d_, name_);
    mixing_ = lin::get_f32(state, "mixing", d_ * k_, name_);
    w_init_ = lin::get_f32(state, "w_init", k_ * k_, name_);
    mean_.clear();
    whitening_.clear();
    if (whiten_) {
      mean_ = lin::get_f32(state, "mean", d_, name_);
      whitening_ = lin::get_f32(state, "whitening", k_ * d_, name_);
    }
    fitted_ = true;
  }

 private:
  // W X1 [k, n] for W [k, k], X1 [k, n]: tasks of column blocks.
  static std::vector<double> product(const std::vector<double>& w, const std::vector<double>& x1, int64_t k, int64_t n) {
    std::vector<double> out(static_cast<size_t>(k * n));
    default_pool().parallel_for((n + kColumnBlock - 1) / kColumnBlock, [&](int64_t blk) {
      const int64_t i1 = std::min(n, (blk + 1) * kColumnBlock);
      for (int64_t t = 0; t < k; ++t)
        for (int64_t i = blk * kColumnBlock; i < i1; ++i) {
          double s = 0.0;
          for (int64_t u = 0; u < k; ++u) s += w[t * k + u] * x1[u * n + i];
          out[t * n + i] = s;
        }
    });
    return out;
  }

  std::vector<double> ica_parallel(const std::vector<double>& x1, const std::vector<double>& w0, int64_t k, int64_t n) {
    std::vector<double> w = sym_decorrelation(w0, k);
    const int64_t max_iter = params_.integer("max_iter");
    const double tol = params_.number("tol"), nd = static_cast<double>(n);
    bool converged = false;
    int64_t it = 0;
    while (it < max_iter && !converged) {
      ++it;
      std::vector<double> wx = product(w, x1, k, n), dmean(static_cast<size_t>(k), 0.0);
      // g in place over column blocks; then each row t's sums in ascending column order.
      std::vector<double> dgx(wx.size());
      default_pool().parallel_for((n + kColumnBlock - 1) / kColumnBlock, [&](int64_t blk) {
        const int64_t i1 = std::min(n, (blk + 1) * kColumnBlock);
        for (int64_t t = 0; t < k; ++t)
          for (int64_t i = blk * kColumnBlock; i < i1; ++i) contrast(fun_, wx[t * n + i], wx[t * n + i], dgx[t * n + i]);
      });
      std::vector<double> upd(static_cast<size_t>(k * k));
      default_pool().parallel_for(k, [&](int64_t t) {
        double dm = 0.0;
        for (int64_t i = 0; i < n; ++i) dm += dgx[t * n + i];
        dm /= nd;
        for (int64_t u = 0; u < k; ++u) {
          double s = 0.0;
          for (int64_t i = 0; i < n; ++i) s += wx[t * n + i] * x1[u * n + i];
          upd[t * k + u] = s / nd - dm * w[t * k + u];
        }
      });
      std::vector<double> w1 = sym_decorrelation(upd, k);
      double lim = 0.0;
      for (int64_t t = 0; t < k; ++t) {
        double s = 0.0;
        for (int64_t u = 0; u < k; ++u) s += w1[t * k + u] * w[t * k + u];
        lim = std::max(lim, std::fabs(std::fabs(s) - 1.0));
      }
      w = w1;
      converged = lim < tol;
    }
    n_iter_ = it;
    if (!converged) warn_not_converged(name_, max_iter);
    return w;
  }

  std::vector<double> ica_deflation(const std::vector<double>& x1, const std::vector<double>& w0, int64_t k, int64_t n) {
    std::vector<double> W(static_cast<size_t>(k * k), 0.0);
    const int64_t max_iter = params_.integer("max_iter");
    const double tol = params_.number("tol"), nd = static_cast<double>(n);
    const int64_t blocks = (n + kColumnBlock - 1) / kColumnBlock;
    n_iter_ = 0;
    for (int64_t j = 0; j < k; ++j) {
      std::vector<double> w(w0.begin() + j * k, w0.begin() + (j + 1) * k);
      normalize(w);
      int64_t it = 0;
      while (it < max_iter) {
        ++it;
        // Per column block: g and g' of w . x_i, and the block's partial sums (folded in block order).
        std::vector<double> part(static_cast<size_t>(blocks * (k + 1)), 0.0);
        default_pool().parallel_for(blocks, [&](int64_t blk) {
          double* p = &part[static_cast<size_t>(blk * (k + 1))];
          for (int64_t i = blk * kColumnBlock; i < std::min(n, (blk + 1) * kColumnBlock); ++i) {
            double s = 0.0;
            for (int64_t u = 0; u < k; ++u) s += w[u] * x1[u * n + i];
            double g, dg;
            contrast(fun_, s, g, dg);
            for (int64_t u = 0; u < k; ++u) p[u] += x1[u * n + i] * g;
            p[k] += dg;
          }
        });
        std::vector<double> tot(static_cast<size_t>(k + 1), 0.0);
        for (int64_t blk = 0; blk < blocks; ++blk)
          for (int64_t u = 0; u <= k; ++u) tot[u] += part[blk * (k + 1) + u];
        std::vector<double> w1(static_cast<size_t>(k));
        for (int64_t u = 0; u < k; ++u) w1[u] = tot[u] / nd - tot[k] / nd * w[u];
        // Gram-Schmidt against the rows found: w1 -= (w1 W[:j]^T) W[:j].
        std::vector<double> proj(static_cast<size_t>(j), 0.0);
        for (int64_t r = 0; r < j; ++r)
          for (int64_t u = 0; u < k; ++u) proj[r] += w1[u] * W[r * k + u];
        for (int64_t u = 0; u < k; ++u) {
          double s = 0.0;
          for (int64_t r = 0; r < j; ++r) s += proj[r] * W[r * k + u];
          w1[u] -= s;
        }
        normalize(w1);
        double dot = 0.0;
        for (int64_t u = 0; u < k; ++u) dot += w1[u] * w[u];
        w = w1;
        if (std::fabs(std::fabs(dot) - 1.0) < tol) break;
      }
      n_iter_ = std::max(n_iter_, it);
      for (int64_t u = 0; u < k; ++u) W[j * k + u] = w[u];
    }
    return W;
  }

  static void normalize(std::vector<double>& w) {
    double s = 0.0;
    for (double v : w) s += v * v;
    s = std::sqrt(s);
    for (double& v : w) v /= s;
  }

  // pinv(C) [d, k] of C [k, d] of full row rank: C^T (C C^T)^-1, the inverse by symmetric_eigen64
  // (eigenvalues at most 1e-15 of the largest dropped, as a pseudo-inverse's cutoff).
  std::vector<float> pinv_rows(const std::vector<double>& c, int64_t k, int64_t d) const {
    SymmetricEigen64 e = symmetric_eigen64(dec::row_gram_lower(c, k, d), k, -1, "fast_ica");
    const double cut = 1e-15 * std::max(e.values[0], 0.0);
    std::vector<double> inv(static_cast<size_t>(k * k), 0.0);
    for (int64_t a = 0; a < k; ++a)
      for (int64_t b = 0; b < k; ++b) {
        double s = 0.0;
        for (int64_t t = 0; t < k; ++t)
          if (e.values[t] > cut) s += e.vectors[t * k + a] * e.vectors[t * k + b] / e.values[t];
        inv[a * k + b] = s;
      }
    return dec::rounded32(dec::mul64_tn(c, inv, k, d, k));
  }

  std::vector<float> mean_, components_, whitening_, mixing_, w_init_;
  int64_t d_ = 0, k_ = 0, n_iter_ = 0;
  int fun_ = 0;
  bool whiten_ = true;
};

}  // namespace

std::unique_ptr<Estimator> make_fast_ica() { return std::make_unique<FastICA>(); }

}  // namespace bl::ml
