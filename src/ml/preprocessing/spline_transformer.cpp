// spline_transformer.cpp: spline_transformer (scikit-learn's SplineTransformer, dense input): each
// column expanded into its B-spline basis. CPU-only (host binary64 work; the output, rounded once to
// binary32, goes back to X's device).
//
// fit: n_knots base knots per column (state field base_knots_f64, [n_knots, d] row-major):
//   uniform: numpy's linspace(min, max, n_knots) of the column (k (max - min) / (n_knots - 1) + min,
//   the last knot max itself); quantile: numpy's linear percentiles at 100 linspace(0, 1, n_knots)
//   (sorted_percentile in host_numerics.h). The base knots must be strictly increasing (a constant
//   column, or repeated quantiles, is refused naming the column).
// The full knot vector t (recomputed from the base knots on load): periodic: the degree base knots
//   before the last shifted down by the period (last - first), the base knots, the degree after the
//   first shifted up; otherwise degree knots spaced by the first gap below the first knot and degree
//   spaced by the last gap above the last one (numpy linspace). n_splines = n_knots - 1 (periodic)
//   or n_knots + degree - 1 basis functions per column, in column order then spline order.
// transform of a value x of column j, all in binary64: the interval l (the last knot t[l] <= x among
//   t[degree] .. t[m - 1], m = len(t) - degree - 1; the first or last one outside), then the degree + 1
//   basis functions that are nonzero there by the Cox-de Boor recursion (degree rounds, each over
//   its terms in ascending order), written to splines l - degree .. l; periodic: x first reduced to
//   t[degree] + (x - t[degree]) mod period (numpy's floored mod) and spline s + n_splines added to s;
//   outside [t[degree], t[m]]: error refuses the value, continue extends the end polynomials,
//   constant keeps the first (last) degree splines at their value at the end, linear extends the
//   first (last) max(degree, 2 if degree <= 1) splines by their value and slope at the end.
//   include_bias=false leaves out the last spline of each column.
// Each column is one task writing its own output columns: the same bytes at any thread count.
#include <algorithm>
#include <cmath>
#include <string>
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

// At most this many knots over all columns, and output values (the fit refuses beyond).
constexpr int64_t kMaxKnots = int64_t{1} << 26;
constexpr int64_t kMaxOutput = int64_t{1} << 32;


class SplineTransformer final : public prep::ColumnTransformer {
 public:
  SplineTransformer()
      : prep::ColumnTransformer(
            "spline_transformer",
            {{"n_knots", K::integer, "5", 2},
             {"degree", K::integer, "3", 0},
             {"knots", K::choice, "uniform", 0, {"uniform", "quantile"}},
             {"extrapolation", K::choice, "constant", 0, {"error", "constant", "linear", "continue", "periodic"}},
             {"include_bias", K::boolean, "true"}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    check_sizes(0);
    const int64_t nk = params_.integer("n_knots");
    const bool quantile = params_.text("knots") == "quantile";
    std::vector<std::vector<double>> cols = prep::host_columns(X);
    std::vector<std::vector<double>> base(static_cast<size_t>(d_));
    default_pool().parallel_for(d_, [&](int64_t j) {
      std::vector<double>& col = cols[j];
      if (quantile) {
        std::sort(col.begin(), col.end());
        const std::vector<double> ref = prep::linspace64(0.0, 1.0, nk);
        base[j].resize(static_cast<size_t>(nk));
        for (int64_t k = 0; k < nk; ++k) base[j][k] = prep::sorted_percentile(col, ref[k] * 100.0);
      } else {
        const auto [lo, hi] = std::minmax_element(col.begin(), col.end());
        base[j] = prep::linspace64(*lo, *hi, nk);
      }
    });
    set_knots(base);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    check_sizes(X.dim(0));
    const int64_t n = X.dim(0);
    const int64_t deg = params_.integer("degree");
    const std::string extra = params_.text("extrapolation");
    const bool bias = params_.boolean("include_bias");
    const int64_t ns = n_splines(), width = ns - (bias ? 0 : 1);
    std::vector<std::vector<double>> cols = prep::host_columns(X);
    if (extra == "error")
      for (int64_t j = 0; j < d_; ++j)
        for (int64_t i = 0; i < n; ++i)
          BL_CHECK(cols[j][i] >= knots_[j][deg] && cols[j][i] <= knots_[j][knots_[j].size() - deg - 1], name_,
                   ": X holds ", cols[j][i], " at row ", i, ", column ", j,
                   ", beyond the limits of the knots (extrapolation=error)");
    std::vector<float> out(static_cast<size_t>(n * d_ * width));
    const Mode mode = extra == "periodic" ? Mode::periodic
                      : extra == "constant" ? Mode::constant
                      : extra == "linear"   ? Mode::linear
                                            : Mode::extend;
    default_pool().parallel_for(d_, [&](int64_t j) {
      std::vector<double> row(static_cast<size_t>(ns)), h(static_cast<size_t>(deg + 1)), hh(h.size());
      for (int64_t i = 0; i < n; ++i) {
        column_basis(knots_[j], cols[j][i], mode, deg, row, h.data(), hh.data());
        for (int64_t s = 0; s < width; ++s) out[(i * d_ + j) * width + s] = static_cast<float>(row[s]);
      }
    });
    return Tensor::from_vector(out, {n, d_ * width}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    const int64_t nk = params_.integer("n_knots");
    std::vector<double> flat(static_cast<size_t>(nk * d_));
    for (int64_t k = 0; k < nk; ++k)
      for (int64_t j = 0; j < d_; ++j) flat[k * d_ + j] = base_knot(j, k);
    state["base_knots_f64"] = density_detail::f64_to_hex(flat);
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    check_sizes(0);
    const int64_t nk = params_.integer("n_knots");
    const std::vector<double> flat = prep::get_finite_f64(state, "base_knots_f64", nk * d_, name_);
    std::vector<std::vector<double>> base(static_cast<size_t>(d_), std::vector<double>(static_cast<size_t>(nk)));
    for (int64_t k = 0; k < nk; ++k)
      for (int64_t j = 0; j < d_; ++j) base[j][k] = flat[k * d_ + j];
    set_knots(base);
    fitted_ = true;
  }

 private:
  int64_t n_splines() const {
    const int64_t nk = params_.integer("n_knots"), deg = params_.integer("degree");
    return params_.text("extrapolation") == "periodic" ? nk - 1 : nk + deg - 1;
  }

  // The parameters against the sizes (and the output of n rows), before anything is allocated.
  void check_sizes(int64_t n) const {
    const int64_t nk = params_.integer("n_knots"), deg = params_.integer("degree");
    BL_CHECK(params_.text("extrapolation") != "periodic" || deg < nk, name_, ": periodic splines need degree (", deg,
             ") < n_knots (", nk, ")");
    BL_CHECK(nk <= kMaxKnots && deg <= kMaxKnots && (nk + 2 * deg) <= kMaxKnots / d_, name_, ": n_knots=", nk,
             " and degree=", deg, " over ", d_, " features make too many knots");
    BL_CHECK(n_splines() <= kMaxOutput / d_ / std::max<int64_t>(n, 1), name_, ": the output of ", n, " rows, ", d_,
             " features and ", n_splines(), " splines each is too large");
    BL_CHECK(n_splines() >= 1 + (params_.boolean("include_bias") ? 0 : 1), name_,
             ": include_bias=false leaves no spline");
  }

  // The base knots (strictly increasing, else refused) to the full knot vectors.
  void set_knots(const std::vector<std::vector<double>>& base) {
    const int64_t deg = params_.integer("degree");
    const bool periodic = params_.text("extrapolation") == "periodic";
    knots_.assign(static_cast<size_t>(d_), {});
    for (int64_t j = 0; j < d_; ++j) {
      const std::vector<double>& b = base[j];
      const int64_t nk = static_cast<int64_t>(b.size());
      for (int64_t k = 1; k < nk; ++k)
        BL_CHECK(b[k - 1] < b[k], name_, ": the knots of column ", j, " are not strictly increasing (", b[k - 1],
                 " then ", b[k], "): a constant column, or repeated quantiles");
      std::vector<double>& t = knots_[j];
      if (periodic) {
        const double period = b[nk - 1] - b[0];
        for (int64_t k = nk - 1 - deg; k < nk - 1; ++k) t.push_back(b[k] - period);
        t.insert(t.end(), b.begin(), b.end());
        for (int64_t k = 1; k <= deg; ++k) t.push_back(b[k] + period);
      } else {
        const double gap_lo = b[1] - b[0], gap_hi = b[nk - 1] - b[nk - 2];
        const double ddeg = static_cast<double>(deg);
        t = prep::linspace64(b[0] - ddeg * gap_lo, b[0] - gap_lo, deg);
        t.insert(t.end(), b.begin(), b.end());
        const std::vector<double> hi = prep::linspace64(b[nk - 1] + gap_hi, b[nk - 1] + ddeg * gap_hi, deg);
        t.insert(t.end(), hi.begin(), hi.end());
      }
    }
  }

  // Base knot k of column j (the full vector holds degree knots before the base ones).
  double base_knot(int64_t j, int64_t k) const { return knots_[j][static_cast<size_t>(k + params_.integer("degree"))]; }

  // How values outside [t[degree], t[m]] are treated (error and continue both extend the end
  // polynomials: error has refused such values before).
  enum class Mode { extend, constant, linear, periodic };

  // The degree + 1 basis functions nonzero on interval l at x (derivative: their first derivatives),
  // into h[0 .. degree] (hh: scratch of the same size): Cox-de Boor, each round's terms in
  // ascending order.
  static void basis_at(const std::vector<double>& t, int64_t deg, int64_t l, double x, bool derivative, double* h,
                       double* hh) {
    std::fill(h, h + deg + 1, 0.0);
    h[0] = 1.0;
    const int64_t rounds = derivative ? deg - 1 : deg;
    for (int64_t r = 1; r <= rounds; ++r) {
      std::copy(h, h + r, hh);
      h[0] = 0.0;
      for (int64_t m = 1; m <= r; ++m) {
        const double xb = t[l + m], xa = t[l + m - r];
        const double w = hh[m - 1] / (xb - xa);
        h[m - 1] += w * (xb - x);
        h[m] = w * (x - xa);
      }
    }
    if (!derivative) return;
    if (deg == 0) {
      h[0] = 0.0;
      return;
    }
    std::copy(h, h + deg, hh);
    h[0] = 0.0;
    for (int64_t m = 1; m <= deg; ++m) {
      const double xb = t[l + m], xa = t[l + m - deg];
      const double w = static_cast<double>(deg) * hh[m - 1] / (xb - xa);
      h[m - 1] -= w;
      h[m] = w;
    }
  }

  // All n_splines values of one column's basis at x into row (extrapolation applied; h, hh: scratch
  // of degree + 1 values).
  static void column_basis(const std::vector<double>& t, double x, Mode mode, int64_t deg, std::vector<double>& row,
                           double* h, double* hh) {
    const int64_t m = static_cast<int64_t>(t.size()) - deg - 1, ns = static_cast<int64_t>(row.size());
    const double lo = t[deg], hi = t[m];
    std::fill(row.begin(), row.end(), 0.0);
    auto interval = [&](double v) {
      const int64_t at = static_cast<int64_t>(std::upper_bound(t.begin() + deg, t.begin() + m, v) - t.begin()) - 1;
      return std::max(deg, at);
    };
    auto add_basis = [&](double v) {
      const int64_t l = interval(v);
      basis_at(t, deg, l, v, false, h, hh);
      for (int64_t r = 0; r <= deg; ++r) row[(l - deg + r) % ns] += h[r];
    };
    if (mode == Mode::periodic) {
      const double period = hi - lo;
      double r = std::fmod(x - lo, period);
      if (r != 0.0 && r < 0.0) r += period;
      add_basis(lo + r);
      return;
    }
    if (mode == Mode::extend || (x >= lo && x <= hi)) {
      add_basis(x);
      return;
    }
    // constant / linear beyond [lo, hi]: the end basis (and slope) at the nearer end.
    const bool below = x < lo;
    const double end = below ? lo : hi;
    const int64_t l = interval(end);
    std::vector<double> value(static_cast<size_t>(ns), 0.0), slope(static_cast<size_t>(ns), 0.0);
    basis_at(t, deg, l, end, false, h, hh);
    for (int64_t r = 0; r <= deg; ++r) value[l - deg + r] = h[r];
    if (mode == Mode::constant) {
      for (int64_t s = 0; s < deg; ++s) {
        const int64_t c = below ? s : ns - deg + s;
        row[c] = value[c];
      }
      return;
    }
    basis_at(t, deg, l, end, true, h, hh);
    for (int64_t r = 0; r <= deg; ++r) slope[l - deg + r] = h[r];
    const int64_t count = std::min(deg <= 1 ? deg + 1 : deg, ns);
    for (int64_t s = 0; s < count; ++s) {
      const int64_t c = below ? s : ns - 1 - s;
      row[c] = value[c] + (x - end) * slope[c];
    }
  }

  std::vector<std::vector<double>> knots_;  // per column, the full knot vector
};

}  // namespace

std::unique_ptr<Estimator> make_spline_transformer() { return std::make_unique<SplineTransformer>(); }

}  // namespace bl::ml
