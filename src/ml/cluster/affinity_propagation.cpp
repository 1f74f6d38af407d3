// affinity_propagation.cpp: affinity_propagation, clustering by passing messages between rows
// (scikit-learn's AffinityPropagation, affinity euclidean). Everything runs on the host in binary64
// in the fixed order below, so neither X's device nor the thread count reaches the result.
//
// 1. Similarities S_ij = -|x_i - x_j|^2 (the binary64 sums of density_clustering.h). preference
//    none: the median of all n^2 values of S (the mean of the two middle ones when n^2 is even).
//    When n = 1, or every off-diagonal S_ij is equal, scikit-learn's shortcut: every row its own
//    exemplar when the preference exceeds S_{0,n-1}, else one cluster with exemplar 0.
// 2. S_ii = preference; then, to break the exact ties of a symmetric S as scikit-learn does with
//    its random normal noise, a fixed deterministic one: S_ij += (2^-52 S_ij + 100 * 2^-1022) * u_ij,
//    u_ij = (w - 2^31 + 1/2) / 2^31 in (-1, 1), w the contract's Philox word
//    random_u32_element(random_state, stream 1, i * n + j). Its size is that of scikit-learn's noise
//    (one unit in the last place), so the labels agree wherever they do not hinge on the noise.
// 3. Messages, from R = A = 0, each iteration as scikit-learn writes it, every array operation
//    elementwise in binary64:
//      responsibility: with Y_i, Y2_i the largest and second largest of A_i. + S_i. (the first
//        largest index I_i), T_ij = S_ij - Y_i, T_iI = S_iI - Y2_i; R = damping R + (1 - damping) T
//        (each product rounded, then the sum);
//      availability: T_ij = max(R_ij, 0), T_jj = R_jj; c_j = sum_i T_ij (rows in order from 0);
//        T_ij -= c_j; T_ij = max(T_ij, 0) off the diagonal; A = damping A - (1 - damping) T.
//    Rows with A_ii + R_ii > 0 are exemplars; the fit stops at iteration it >= convergence_iter when
//    over the last convergence_iter iterations every row was always or never an exemplar and there
//    is at least one, or after max_iter iterations (a warning, as scikit-learn's ConvergenceWarning).
//    Pool tasks own rows (responsibility, availability) or blocks of columns (the column sums, each
//    over the rows in order): each value is computed alone, so the thread count does not reach the
//    bits.
// 4. Exemplars I (ascending); each row joins the exemplar k with the largest S_{i,I_k} (the first on
//    ties), an exemplar its own; each cluster's exemplar becomes its member with the largest column
//    sum of S over the members (rows in order, the first on ties); the rows join again; the labels
//    are the ranks of their exemplars among the distinct exemplars. No exemplar: labels -1.
// predict: the nearest exemplar (squared binary64 distances, the first on ties); -1 without any.
// Memory: three n x n binary64 arrays; n is limited to 4096 rows.
#include <algorithm>
#include <cmath>
#include <limits>

#include "bitlearn/ml/progress.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;
namespace dd = density_detail;

constexpr int64_t kMaxRows = 4096;
constexpr uint64_t kNoiseStream = 1;
constexpr int64_t kColumns = 256;  // availability tasks: blocks of columns

class AffinityPropagation final : public lin::ParamEstimator {
 public:
  AffinityPropagation()
      : lin::ParamEstimator("affinity_propagation", {{"affinity", K::choice, "euclidean", 0, {"euclidean"}},
                                                     {"convergence_iter", K::integer, "15", 1},
                                                     {"damping", K::number, "0.5", 0.5},
                                                     {"max_iter", K::integer, "200", 1},
                                                     {"preference", K::number_or_word, "none", -1e308, {"none"}},
                                                     {"random_state", K::integer, "0", 0}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const double damping = params_.number("damping");
    BL_CHECK(damping < 1.0, name_, ": parameter damping=", params_.text("damping"), ": expected a number in [0.5, 1)");
    rows_ = dd::host_rows(X);
    const int64_t n = rows_.n, max_iter = params_.integer("max_iter"), conv = params_.integer("convergence_iter");
    BL_CHECK(n <= kMaxRows, name_, ": ", n, " rows exceed the limit of ", kMaxRows,
             " (the messages take three n x n binary64 arrays); use fewer rows");
    const size_t nn = static_cast<size_t>(n * n);
    std::vector<double> S(nn);
    default_pool().parallel_for(n, [&](int64_t i) {
      for (int64_t j = 0; j < n; ++j) S[i * n + j] = -dd::sq_distance(rows_.row(i), rows_.row(j), rows_.d);
    });
    double pref = 0.0;
    if (params_.text("preference") == "none") {
      std::vector<double> v = S;
      const size_t h = nn / 2;
      std::nth_element(v.begin(), v.begin() + h, v.end());
      pref = v[h];
      if (nn % 2 == 0) pref = (*std::max_element(v.begin(), v.begin() + h) + pref) / 2.0;
    } else {
      pref = params_.number("preference");
    }
    n_iter_ = 0;
    centers_.clear();
    labels_.assign(static_cast<size_t>(n), -1);
    bool equal = true;
    for (int64_t i = 0; i < n && equal; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (i != j && S[i * n + j] != S[n > 1 ? 1 : 0]) {
          equal = false;
          break;
        }
    if (n == 1 || equal) {
      if (pref > S[n - 1]) {
        for (int64_t i = 0; i < n; ++i) centers_.push_back(i), labels_[i] = i;
      } else {
        centers_.push_back(0);
        labels_.assign(static_cast<size_t>(n), 0);
      }
    } else {
      run(S, n, pref, damping, max_iter, conv);
    }
    centers_x_.clear();
    for (int64_t c : centers_) centers_x_.insert(centers_x_.end(), rows_.row(c), rows_.row(c) + rows_.d);
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    check_predict_input(X, rows_.d);
    const int64_t m = X.dim(0), k = static_cast<int64_t>(centers_.size());
    if (k == 0) return Tensor::from_vector(std::vector<int64_t>(static_cast<size_t>(m), -1), {m}, X.device());
    dd::HostRows c;
    c.n = k;
    c.d = rows_.d;
    c.x = centers_x_;
    std::vector<int64_t> ids(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) ids[i] = i;
    return Tensor::from_vector(dd::nearest_row_labels(c, ids, X), {m}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", rows_.d}, {"n_samples", rows_.n}, {"n_iter", n_iter_}});
    state["labels"] = labels_;
    state["cluster_centers_indices"] = centers_;
    lin::put_f32(state, "cluster_centers", centers_x_);
  }

  void load_state(const nlohmann::json& state) override {
    const int64_t d = lin::get_int(state, "n_features", 1, name_), n = lin::get_int(state, "n_samples", 1, name_);
    BL_CHECK(n <= kMaxRows, name_, ": model state: n_samples ", n, " exceeds ", kMaxRows);
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    centers_ = dd::ints_from_state(state, "cluster_centers_indices", -1, 0, n, name_);
    const int64_t k = static_cast<int64_t>(centers_.size());
    labels_ = dd::ints_from_state(state, "labels", n, k == 0 ? -1 : 0, std::max<int64_t>(k, 0), name_);
    centers_x_ = lin::get_f32(state, "cluster_centers", k * d, name_);
    rows_.n = n;
    rows_.d = d;
    rows_.x.clear();
    fitted_ = true;
  }

 private:
  // Steps 2 to 4 on S [n, n] (row-major).
  void run(std::vector<double>& S, int64_t n, double pref, double damping, int64_t max_iter, int64_t conv) {
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    const double eps = std::ldexp(1.0, -52), tiny100 = 100.0 * std::ldexp(1.0, -1022), rest = 1.0 - damping;
    for (int64_t i = 0; i < n; ++i) S[i * n + i] = pref;
    default_pool().parallel_for(n, [&](int64_t i) {
      for (int64_t j = 0; j < n; ++j) {
        const uint32_t w = random_u32_element(seed, kNoiseStream, static_cast<uint64_t>(i * n + j));
        const double u = (static_cast<double>(w) - 2147483648.0 + 0.5) / 2147483648.0;
        double& s = S[i * n + j];
        s = s + (eps * s + tiny100) * u;
      }
    });
    const size_t nn = static_cast<size_t>(n * n);
    std::vector<double> A(nn, 0.0), R(nn, 0.0), col(static_cast<size_t>(n));
    std::vector<char> hist(static_cast<size_t>(n * conv), 0), E(static_cast<size_t>(n), 0);
    bool converged = false;
    int64_t it = 0;
    for (; it < max_iter; ++it) {
      default_pool().parallel_for(n, [&](int64_t i) {
        const double* a = A.data() + i * n;
        const double* s = S.data() + i * n;
        double* r = R.data() + i * n;
        int64_t arg = 0;
        double y = a[0] + s[0];
        for (int64_t j = 1; j < n; ++j)
          if (a[j] + s[j] > y) y = a[j] + s[j], arg = j;
        double y2 = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < n; ++j)
          if (j != arg) y2 = std::max(y2, a[j] + s[j]);
        for (int64_t j = 0; j < n; ++j) {
          const double t = (j == arg ? s[j] - y2 : s[j] - y) * rest;
          r[j] = r[j] * damping + t;
        }
      });
      // Column sums c_j over the rows in order (tasks own blocks of columns, rows walked in order).
      default_pool().parallel_for((n + kColumns - 1) / kColumns, [&](int64_t b) {
        const int64_t j0 = b * kColumns, j1 = std::min(n, j0 + kColumns);
        for (int64_t j = j0; j < j1; ++j) col[j] = 0.0;
        for (int64_t i = 0; i < n; ++i) {
          const double* r = R.data() + i * n;
          for (int64_t j = j0; j < j1; ++j) col[j] += i == j ? r[j] : std::max(r[j], 0.0);
        }
      });
      default_pool().parallel_for(n, [&](int64_t i) {
        const double* r = R.data() + i * n;
        double* a = A.data() + i * n;
        for (int64_t j = 0; j < n; ++j) {
          double t = (i == j ? r[j] : std::max(r[j], 0.0)) - col[j];
          if (i != j) t = std::max(t, 0.0);
          a[j] = a[j] * damping - t * rest;
        }
      });
      int64_t k = 0;
      for (int64_t i = 0; i < n; ++i) {
        E[i] = A[i * n + i] + R[i * n + i] > 0.0;
        hist[i * conv + it % conv] = E[i];
        k += E[i];
      }
      report_progress("affinity propagation", it + 1, max_iter);
      if (it >= conv) {
        int64_t settled = 0;
        for (int64_t i = 0; i < n; ++i) {
          int64_t s = 0;
          for (int64_t c = 0; c < conv; ++c) s += hist[i * conv + c];
          settled += s == conv || s == 0;
        }
        if (settled == n && k > 0) {
          converged = true;
          break;
        }
      }
    }
    n_iter_ = converged ? it + 1 : max_iter;
    std::vector<int64_t> I;
    for (int64_t i = 0; i < n; ++i)
      if (E[i]) I.push_back(i);
    if (I.empty()) {
      report_warning(name_ + ": did not converge and has no cluster centers; every label is -1");
      return;
    }
    if (!converged) report_warning(name_ + ": did not converge within max_iter=" + std::to_string(max_iter) +
                                   "; the centers and labels may be degenerate");
    const int64_t K = static_cast<int64_t>(I.size());
    std::vector<int64_t> c = assign(S, n, I);
    for (int64_t k = 0; k < K; ++k) {
      std::vector<int64_t> ii;
      for (int64_t i = 0; i < n; ++i)
        if (c[i] == k) ii.push_back(i);
      int64_t best = 0;
      double best_sum = 0.0;
      for (size_t a = 0; a < ii.size(); ++a) {
        double sum = 0.0;
        for (int64_t r : ii) sum += S[r * n + ii[a]];
        if (a == 0 || sum > best_sum) best_sum = sum, best = static_cast<int64_t>(a);
      }
      I[k] = ii[best];
    }
    c = assign(S, n, I);
    std::vector<int64_t> ex(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ex[i] = I[c[i]];
    centers_ = ex;
    std::sort(centers_.begin(), centers_.end());
    centers_.erase(std::unique(centers_.begin(), centers_.end()), centers_.end());
    for (int64_t i = 0; i < n; ++i)
      labels_[i] = std::lower_bound(centers_.begin(), centers_.end(), ex[i]) - centers_.begin();
  }

  // Each row's exemplar k (largest S_{i, I_k}, the first on ties); exemplar I_k takes k itself.
  static std::vector<int64_t> assign(const std::vector<double>& S, int64_t n, const std::vector<int64_t>& I) {
    std::vector<int64_t> c(static_cast<size_t>(n), 0);
    for (int64_t i = 0; i < n; ++i)
      for (size_t k = 1; k < I.size(); ++k)
        if (S[i * n + I[k]] > S[i * n + I[c[i]]]) c[i] = static_cast<int64_t>(k);
    for (size_t k = 0; k < I.size(); ++k) c[I[k]] = static_cast<int64_t>(k);
    return c;
  }

  dd::HostRows rows_;
  std::vector<int64_t> labels_, centers_;
  std::vector<float> centers_x_;
  int64_t n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_affinity_propagation() { return std::make_unique<AffinityPropagation>(); }

}  // namespace bl::ml
