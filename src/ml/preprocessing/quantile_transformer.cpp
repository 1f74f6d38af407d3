// quantile_transformer.cpp: quantile_transformer (scikit-learn's QuantileTransformer, dense input):
// each column mapped through its empirical distribution function to a uniform or a standard normal
// output. CPU-only (host binary64 work; the output goes back to X's device).
//
// fit: m = min(n_quantiles, n) quantiles per column (every row is used: no subsampling) at the
// references r_k = k (1 / (m - 1)), k = 0 .. m - 2, and r_{m-1} = 1 (numpy's linspace; r = {0}
// for m = 1): each column's values sorted in binary64, the quantile at percentile 100 r_k by numpy's
// linear interpolation (sorted_percentile in host_numerics.h), then made non-decreasing by a running
// maximum. The quantiles are kept in binary64 (state field quantiles_f64, [m, d] row-major:
// scikit-learn's quantiles_).
//
// transform of a value x of column j with quantiles q (binary64, then rounded once to binary32):
//   u = (F(x) - G(-x)) / 2 with F the piecewise-linear interpolation of (q, r) and G that of
//   (-q reversed, -r reversed) (numpy's interp: clamped at the ends; at a node, the node's value),
//   so a run of equal quantiles maps to the middle of its references;
//   uniform: u = 0 where x == q_0 and 1 where x == q_{m-1};
//   normal: u = 0 where x - 1e-7 < q_0 and 1 where x + 1e-7 > q_{m-1}; then Phi^-1(u)
//   (normal_quantile64) clipped to [Phi^-1(1e-7 - 2^-52), Phi^-1(1 - (1e-7 - 2^-52))].
// Each element depends on its own column's quantiles only: one task per column, any thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/preprocessing/column_transformer.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

constexpr double kBoundsThreshold = 1e-7;
constexpr double kSpacing1 = 2.220446049250313e-16;  // the distance from 1 to the next binary64

// numpy's linspace(0, 1, m).
std::vector<double> references(int64_t m) {
  std::vector<double> r(static_cast<size_t>(m), 0.0);
  if (m == 1) return r;
  const double step = 1.0 / static_cast<double>(m - 1);
  for (int64_t k = 0; k < m; ++k) r[k] = static_cast<double>(k) * step;
  r[m - 1] = 1.0;
  return r;
}

// numpy's interp(x, xp, fp) for ascending xp (x finite): clamped ends; xp[j] <= x < xp[j + 1] by
// binary search (the last of a run of equal nodes), the node's value at a node.
double interp(double x, const std::vector<double>& xp, const std::vector<double>& fp) {
  const size_t m = xp.size();
  if (x > xp[m - 1]) return fp[m - 1];
  if (x < xp[0]) return fp[0];
  const size_t j = static_cast<size_t>(std::upper_bound(xp.begin(), xp.end(), x) - xp.begin()) - 1;
  if (j == m - 1 || xp[j] == x) return fp[j];
  const double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
  double v = slope * (x - xp[j]) + fp[j];
  if (std::isnan(v)) {
    v = slope * (x - xp[j + 1]) + fp[j + 1];
    if (std::isnan(v) && fp[j] == fp[j + 1]) v = fp[j];
  }
  return v;
}

class QuantileTransformer final : public prep::ColumnTransformer {
 public:
  QuantileTransformer()
      : prep::ColumnTransformer("quantile_transformer",
                                {{"n_quantiles", K::integer, "1000", 1},
                                 {"output_distribution", K::choice, "uniform", 0, {"uniform", "normal"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    const int64_t n = X.dim(0);
    m_ = std::max<int64_t>(1, std::min<int64_t>(params_.integer("n_quantiles"), n));
    const std::vector<double> ref = references(m_);
    std::vector<std::vector<double>> cols = prep::host_columns(X);
    quantiles_.assign(static_cast<size_t>(d_), {});
    default_pool().parallel_for(d_, [&](int64_t j) {
      std::vector<double>& col = cols[j];
      std::sort(col.begin(), col.end());
      std::vector<double> q(static_cast<size_t>(m_));
      for (int64_t k = 0; k < m_; ++k) {
        q[k] = prep::sorted_percentile(col, ref[k] * 100.0);
        if (k > 0) q[k] = std::max(q[k], q[k - 1]);
      }
      quantiles_[j] = std::move(q);
    });
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    const int64_t n = X.dim(0);
    const bool normal = params_.text("output_distribution") == "normal";
    const std::vector<double> ref = references(m_);
    std::vector<double> neg_ref(ref.rbegin(), ref.rend());
    for (double& r : neg_ref) r = -r;
    const double clip_lo = prep::normal_quantile64(kBoundsThreshold - kSpacing1);
    const double clip_hi = prep::normal_quantile64(1.0 - (kBoundsThreshold - kSpacing1));
    std::vector<std::vector<double>> cols = prep::host_columns(X);
    default_pool().parallel_for(d_, [&](int64_t j) {
      const std::vector<double>& q = quantiles_[j];
      std::vector<double> neg_q(q.rbegin(), q.rend());
      for (double& v : neg_q) v = -v;
      const double lo = q.front(), hi = q.back();
      for (double& x : cols[j]) {
        const bool at_lo = normal ? x - kBoundsThreshold < lo : x == lo;
        const bool at_hi = normal ? x + kBoundsThreshold > hi : x == hi;
        double u = 0.5 * (interp(x, q, ref) - interp(-x, neg_q, neg_ref));
        if (at_hi) u = 1.0;
        if (at_lo) u = 0.0;
        if (normal) u = std::min(std::max(prep::normal_quantile64(u), clip_lo), clip_hi);
        x = u;
      }
    });
    return prep::tensor_from_columns(cols, n, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    state["n_quantiles"] = m_;
    std::vector<double> flat(static_cast<size_t>(m_ * d_));
    for (int64_t k = 0; k < m_; ++k)
      for (int64_t j = 0; j < d_; ++j) flat[k * d_ + j] = quantiles_[j][k];
    state["quantiles_f64"] = density_detail::f64_to_hex(flat);
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    m_ = lin::get_int(state, "n_quantiles", 1, name_);
    BL_CHECK(m_ <= params_.integer("n_quantiles"), name_, ": model state: n_quantiles ", m_,
             " is more than the parameter n_quantiles=", params_.integer("n_quantiles"));
    BL_CHECK(d_ <= (int64_t{1} << 40) / m_, name_, ": model state: ", m_, " quantiles of ", d_, " features is too many");
    const std::vector<double> flat = prep::get_finite_f64(state, "quantiles_f64", m_ * d_, name_);
    quantiles_.assign(static_cast<size_t>(d_), std::vector<double>(static_cast<size_t>(m_)));
    for (int64_t j = 0; j < d_; ++j)
      for (int64_t k = 0; k < m_; ++k) {
        quantiles_[j][k] = flat[k * d_ + j];
        BL_CHECK(k == 0 || quantiles_[j][k - 1] <= quantiles_[j][k], name_, ": model state: the quantiles of column ",
                 j, " are not non-decreasing");
      }
    fitted_ = true;
  }

 private:
  int64_t m_ = 0;                              // quantiles per column
  std::vector<std::vector<double>> quantiles_;  // per column, m_ non-decreasing values
};

}  // namespace

std::unique_ptr<Estimator> make_quantile_transformer() { return std::make_unique<QuantileTransformer>(); }

}  // namespace bl::ml
