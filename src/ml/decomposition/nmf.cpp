// nmf.cpp: nmf (scikit-learn's NMF), X ~ W H with W [n, k], H [k, d] non-negative, Frobenius loss.
//
// W and H live on the host in binary64. Every product with X is the contract GEMM on X's device (the
// same bits everywhere) of W or H rounded once to binary32: X H^T [n, k] and X^T W [d, k]; the small
// products H H^T, W^T W [k, k], W (H H^T) and (W^T W) H are binary64 sums in ascending order on the
// host, so the fit is a pure function of X and the parameters at every thread count.
// init (none: nndsvda when n_components <= min(n, d), else random):
//   random: avg = sqrt(mean(X) / k); H[t, j] = avg |normal_element(random_state, stream 1, t d + j)|,
//           W[i, t] = avg |normal_element(random_state, stream 2, i k + t)| (Philox, contract/rng.h).
//   nndsvd: the k leading singular triplets by dec::randomized_svd (dense64.h; k + 10 sketch columns,
//           7 power iterations when k < min(n, d) / 10, else 4, seed random_state), U = X V^T / s
//           (GEMM); Boutsidis and Gallopoulos' non-negative double SVD as scikit-learn's (the larger
//           of the positive and negative parts' norm products per pair); entries below 1e-6 set to 0.
//   nndsvda: nndsvd with its zeros set to mean(X).
// solver=cd: scikit-learn's coordinate descent sweeps, W's columns then H's columns in index order,
//   each coordinate w <- max(w - grad / hess, 0) in binary64; stop when the sum of projected gradient
//   magnitudes falls to tol times the first sweep's.
// solver=mu: multiplicative updates W <- W (X H^T) / (W H H^T), H <- H (W^T X) / (W^T W H) (a zero
//   denominator becomes 2^-23, scikit-learn's float32 epsilon); every 10 iterations when tol > 0 the
//   error ||X - W H||_F decides: stop when it fell by less than tol times the error at init.
// transform(X) runs the same solver for W with H fixed (W starting at 0 for cd, sqrt(mean(X) / k) for
// mu). reconstruction_err_ = ||X - W H||_F of the fit: W H by the GEMM, the squared differences
// summed in binary64 in row order. components_ = H rounded once to binary32.
#include <algorithm>
#include <cmath>

#include "bitlearn/ops.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/optional_count.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr uint64_t kStreamH = 1;
constexpr uint64_t kStreamW = 2;
constexpr double kEpsilon = 0x1p-23;

using dec::mul64;
using dec::transposed;

// G = A^T A [k, k] for A [r, k]: sums over rows in ascending order.
std::vector<double> gram64(const std::vector<double>& a, int64_t r, int64_t k) { return dec::mul64_tn(a, a, r, k, k); }

// One coordinate descent sweep over the columns of M [r, k] for min ||X - M F||^2 given
// G = F F^T [k, k] and P = X F^T [r, k]; returns the sum of |projected gradient|.
double cd_sweep(std::vector<double>& m, const std::vector<double>& g, const std::vector<double>& p, int64_t r, int64_t k) {
  double violation = 0.0;
  for (int64_t t = 0; t < k; ++t) {
    const double hess = g[t * k + t];
    for (int64_t i = 0; i < r; ++i) {
      double grad = -p[i * k + t];
      for (int64_t s = 0; s < k; ++s) grad += g[t * k + s] * m[i * k + s];
      const double pg = m[i * k + t] == 0.0 ? std::min(0.0, grad) : grad;
      violation += std::fabs(pg);
      if (hess != 0.0) m[i * k + t] = std::max(m[i * k + t] - grad / hess, 0.0);
    }
  }
  return violation;
}

// M *= num / den elementwise (a zero denominator taken as kEpsilon).
void mu_step(std::vector<double>& m, const std::vector<double>& num, const std::vector<double>& den) {
  for (size_t i = 0; i < m.size(); ++i) m[i] *= num[i] / (den[i] == 0.0 ? kEpsilon : den[i]);
}

class NMF final : public lin::ParamEstimator {
 public:
  NMF()
      : lin::ParamEstimator("nmf", {{"init", K::choice, "none", 0, {"none", "nndsvd", "nndsvda", "random"}},
                                    {"max_iter", K::integer, "200", 1},
                                    {"n_components", K::number_or_word, "auto", 1.0, {"auto", "none"}},
                                    {"random_state", K::integer, "0", 0},
                                    {"solver", K::choice, "cd", 0, {"cd", "mu"}},
                                    {"tol", K::number, "0.0001", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y);  // a y (the command line's --target) is checked and ignored
    const int64_t n = X.dim(0), d = X.dim(1);
    const std::vector<double> xh = host_nonnegative(X);
    const std::string& nc = params_.text("n_components");
    const int64_t k = nc == "auto" || nc == "none" ? d : dec::optional_count(params_, name_, "n_components", d);
    std::string init = params_.text("init");
    if (init == "none") init = k <= std::min(n, d) ? "nndsvda" : "random";
    BL_CHECK(init == "random" || k <= std::min(n, d), name_, ": init=", init,
             " needs n_components <= min(n_samples, n_features); got n_components=", k, " for ", n, " x ", d);
    const double avg = mean64(xh);
    std::vector<double> w(static_cast<size_t>(n * k)), h(static_cast<size_t>(k * d));
    if (init == "random")
      random_init(avg, n, d, k, w, h);
    else
      nndsvd_init(X, avg, init == "nndsvda", k, w, h);
    d_ = d;
    k_ = k;
    n_iter_ = solve(X, w, h, n, true);
    components_ = dec::rounded32(h);
    err_ = static_cast<float>(std::sqrt(squared_error(X, xh, w, h)));
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const std::vector<double> xh = host_nonnegative(X);
    const int64_t n = X.dim(0);
    std::vector<double> h(components_.begin(), components_.end());
    const double start = params_.text("solver") == "mu" ? std::sqrt(mean64(xh) / static_cast<double>(k_)) : 0.0;
    std::vector<double> w(static_cast<size_t>(n * k_), start);
    solve(X, w, h, n, false);
    return dec::to_tensor32(w, {n, k_}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_components", k_}, {"n_iter", n_iter_}});
    lin::put_f32s(state, {{"components", components_}, {"reconstruction_err", {err_}}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    k_ = lin::get_int(state, "n_components", 1, name_);
    BL_CHECK(k_ <= (int64_t{1} << 20), name_, ": model state: n_components ", k_, " is too large");
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    components_ = lin::get_f32(state, "components", k_ * d_, name_);
    for (float v : components_)
      BL_CHECK(v >= 0.0f, name_, ": model state: components hold ", v, " (NMF components are non-negative)");
    err_ = lin::get_f32(state, "reconstruction_err", 1, name_)[0];
    fitted_ = true;
  }

 private:
  // X on the host in binary64; a negative entry is refused (scikit-learn's wording).
  std::vector<double> host_nonnegative(const Tensor& X) const {
    std::vector<double> xh = dec::to_host64(X);
    const int64_t d = X.dim(1);
    for (size_t i = 0; i < xh.size(); ++i)
      BL_CHECK(xh[i] >= 0.0, name_, ": Negative values in data passed to nmf (X[", static_cast<int64_t>(i) / d, ", ",
               static_cast<int64_t>(i) % d, "] = ", xh[i], ")");
    return xh;
  }
  static double mean64(const std::vector<double>& xh) {
    double s = 0.0;
    for (double v : xh) s += v;
    return s / static_cast<double>(xh.size());
  }

  void random_init(double mean, int64_t n, int64_t d, int64_t k, std::vector<double>& w, std::vector<double>& h) const {
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    const double avg = std::sqrt(mean / static_cast<double>(k));
    for (int64_t i = 0; i < k * d; ++i)
      h[i] = avg * std::fabs(static_cast<double>(normal_element(seed, kStreamH, static_cast<uint64_t>(i))));
    for (int64_t i = 0; i < n * k; ++i)
      w[i] = avg * std::fabs(static_cast<double>(normal_element(seed, kStreamW, static_cast<uint64_t>(i))));
  }

  void nndsvd_init(const Tensor& X, double mean, bool fill, int64_t k, std::vector<double>& w,
                   std::vector<double>& h) const {
    const int64_t n = X.dim(0), d = X.dim(1), r = std::min(n, d);
    std::vector<double> s, v;
    dec::randomized_svd(X, k, std::min(k + 10, r), 10 * k < r ? 7 : 4,
                        static_cast<uint64_t>(params_.integer("random_state")), s, v);
    std::vector<double> xv = dec::to_host64(bl::matmul(X, dec::to_tensor32(v, {k, d}, X.device()), false, true));
    auto norm = [](const std::vector<double>& a) {
      double q = 0.0;
      for (double e : a) q += e * e;
      return std::sqrt(q);
    };
    std::vector<double> x(static_cast<size_t>(n)), y(static_cast<size_t>(d));
    for (int64_t t = 0; t < k; ++t) {
      for (int64_t i = 0; i < n; ++i) x[i] = s[t] > 0.0 ? xv[i * k + t] / s[t] : 0.0;
      for (int64_t j = 0; j < d; ++j) y[j] = v[t * d + j];
      if (t == 0) {
        const double root = std::sqrt(s[0]);
        for (int64_t i = 0; i < n; ++i) w[i * k] = root * std::fabs(x[i]);
        for (int64_t j = 0; j < d; ++j) h[j] = root * std::fabs(y[j]);
        continue;
      }
      std::vector<double> xp(x.size()), xn(x.size()), yp(y.size()), yn(y.size());
      for (size_t i = 0; i < x.size(); ++i) {
        xp[i] = std::max(x[i], 0.0);
        xn[i] = std::fabs(std::min(x[i], 0.0));
      }
      for (size_t j = 0; j < y.size(); ++j) {
        yp[j] = std::max(y[j], 0.0);
        yn[j] = std::fabs(std::min(y[j], 0.0));
      }
      const double xpn = norm(xp), ypn = norm(yp), xnn = norm(xn), ynn = norm(yn);
      const double mp = xpn * ypn, mn = xnn * ynn;
      const bool pos = mp > mn;
      const double sigma = pos ? mp : mn;
      if (!(sigma > 0.0)) continue;  // a zero pair: W[:, t] and H[t, :] stay 0
      const double lbd = std::sqrt(s[t] * sigma);
      for (int64_t i = 0; i < n; ++i) w[i * k + t] = lbd * (pos ? xp[i] / xpn : xn[i] / xnn);
      for (int64_t j = 0; j < d; ++j) h[t * d + j] = lbd * (pos ? yp[j] / ypn : yn[j] / ynn);
    }
    for (double* a : {w.data(), h.data()}) {
      const size_t len = a == w.data() ? w.size() : h.size();
      for (size_t i = 0; i < len; ++i) {
        if (a[i] < 1e-6) a[i] = 0.0;
        if (fill && a[i] == 0.0) a[i] = mean;
      }
    }
  }

  // X H^T [n, k] and X^T W [d, k] by the GEMM of the binary32 roundings.
  static std::vector<double> x_ht(const Tensor& X, const std::vector<double>& h, int64_t k) {
    return dec::to_host64(bl::matmul(X, dec::to_tensor32(h, {k, X.dim(1)}, X.device()), false, true));
  }
  static std::vector<double> xt_w(const Tensor& X, const std::vector<double>& w, int64_t k) {
    return dec::to_host64(bl::matmul(X, dec::to_tensor32(w, {X.dim(0), k}, X.device()), true, false));
  }

  // ||X - W H||_F^2: W H by the GEMM, the squared differences summed in binary64 in row order.
  double squared_error(const Tensor& X, const std::vector<double>& xh, const std::vector<double>& w,
                       const std::vector<double>& h) const {
    const int64_t n = X.dim(0), d = X.dim(1);
    std::vector<double> wh = dec::to_host64(
        bl::matmul(dec::to_tensor32(w, {n, k_}, X.device()), dec::to_tensor32(h, {k_, d}, X.device())));
    double e = 0.0;
    for (size_t i = 0; i < xh.size(); ++i) e += (xh[i] - wh[i]) * (xh[i] - wh[i]);
    return e;
  }

  // The solver's iterations on W (and H when update_h); returns the iteration count.
  int64_t solve(const Tensor& X, std::vector<double>& w, std::vector<double>& h, int64_t n, bool update_h) const {
    const int64_t k = k_, d = d_;
    const int64_t max_iter = params_.integer("max_iter");
    const double tol = params_.number("tol");
    std::vector<double> hht = gram64(transposed(h, k, d), d, k), xht = x_ht(X, h, k);
    if (params_.text("solver") == "cd") {
      double first = 0.0;
      for (int64_t it = 1; it <= max_iter; ++it) {
        if (update_h && it > 1) {
          hht = gram64(transposed(h, k, d), d, k);
          xht = x_ht(X, h, k);
        }
        double violation = cd_sweep(w, hht, xht, n, k);
        if (update_h) {
          std::vector<double> ht = transposed(h, k, d);
          violation += cd_sweep(ht, gram64(w, n, k), xt_w(X, w, k), d, k);
          h = transposed(ht, d, k);
        }
        if (it == 1) first = violation;
        if (first == 0.0 || violation / first <= tol) return it;
      }
      return max_iter;
    }
    const std::vector<double> xh = dec::to_host64(X);
    const double at_init = tol > 0.0 ? std::sqrt(squared_error(X, xh, w, h)) : 0.0;
    double previous = at_init;
    for (int64_t it = 1; it <= max_iter; ++it) {
      if (update_h && it > 1) {
        hht = gram64(transposed(h, k, d), d, k);
        xht = x_ht(X, h, k);
      }
      mu_step(w, xht, mul64(w, hht, n, k, k));
      if (update_h) {
        std::vector<double> num = transposed(xt_w(X, w, k), d, k);
        mu_step(h, num, mul64(gram64(w, n, k), h, k, k, d));
      }
      if (tol > 0.0 && it % 10 == 0) {
        const double error = std::sqrt(squared_error(X, xh, w, h));
        if ((previous - error) / at_init < tol) return it;
        previous = error;
      }
    }
    return max_iter;
  }

  std::vector<float> components_;
  float err_ = 0.0f;
  int64_t d_ = 0, k_ = 0, n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_nmf() { return std::make_unique<NMF>(); }

}  // namespace bl::ml
