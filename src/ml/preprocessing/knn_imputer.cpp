// knn_imputer.cpp: knn_imputer (scikit-learn's KNNImputer for numeric data): NaN marks a missing
// value; transform replaces each one with the mean of that column's values in the n_neighbors
// nearest training rows where the column is observed. CPU-only (host binary64 work; the output goes
// back to X's device).
//
// fit keeps the training rows (NaN included) and each column's mean over its observed values
// (binary64 sum in row order over the count); a column without an observed value is refused.
// Distance (scikit-learn's nan_euclidean): over the coordinates present in both rows,
// sqrt((sum (a_f - b_f)^2 / present) d) in binary64 (feature order), undefined (no donor) when no
// coordinate is present in both. For a missing entry (i, j): the donors are the training rows with
// column j observed and a defined distance to row i, ordered by (distance, training row index); the
// first min(n_neighbors, count) give the value: uniform: their mean; distance: weights 1 / distance,
// or, where some donor is at distance 0, weight 1 for those at 0 and 0 for the others; the weighted
// sum over the weight sum in binary64 (donor order), rounded once to binary32. Without a donor: the
// column's training mean. Observed entries are kept bit for bit. One task per row: the same bits at
// any thread count. (scikit-learn breaks distance ties by its partial sort's order, which numpy
// leaves unspecified; here the lower training row index comes first.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/preprocessing/column_transformer.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

class KnnImputer final : public prep::ColumnTransformer {
 public:
  KnnImputer()
      : prep::ColumnTransformer("knn_imputer", {{"metric", K::choice, "nan_euclidean", 0, {"nan_euclidean"}},
                                                {"n_neighbors", K::integer, "5", 1},
                                                {"weights", K::choice, "uniform", 0, {"uniform", "distance"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y, /*allow_nan=*/true);
    prep::check_no_infinity(name_, X);
    n_ = X.dim(0);
    rows_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    derive_means();
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    BL_CHECK(fitted_, name_, ": transform before fit");
    check_X(name_, X, /*allow_nan=*/true);
    BL_CHECK(X.dim(1) == d_, name_, ": X has ", X.dim(1), " features but the model was fit with ", d_);
    prep::check_no_infinity(name_, X);
    const int64_t m = X.dim(0);
    std::vector<float> out = X.to(Device::cpu()).contiguous().to_vector<float>();
    const int64_t k = params_.integer("n_neighbors");
    const bool by_distance = params_.text("weights") == "distance";
    default_pool().parallel_for(m, [&](int64_t i) {
      float* row = out.data() + i * d_;
      std::vector<int64_t> missing;
      for (int64_t j = 0; j < d_; ++j)
        if (std::isnan(row[j])) missing.push_back(j);
      if (missing.empty()) return;
      // Distances to every training row (NaN where no coordinate is present in both).
      std::vector<double> dist(static_cast<size_t>(n_));
      for (int64_t r = 0; r < n_; ++r) dist[r] = nan_euclidean(row, rows_.data() + r * d_);
      std::vector<std::pair<double, int64_t>> donors;
      for (int64_t j : missing) {
        donors.clear();
        for (int64_t r = 0; r < n_; ++r)
          if (!std::isnan(rows_[r * d_ + j]) && !std::isnan(dist[r])) donors.emplace_back(dist[r], r);
        if (donors.empty()) {
          row[j] = static_cast<float>(means_[j]);
          continue;
        }
        const size_t take = static_cast<size_t>(std::min<int64_t>(k, static_cast<int64_t>(donors.size())));
        std::partial_sort(donors.begin(), donors.begin() + static_cast<std::ptrdiff_t>(take), donors.end());
        bool at_zero = false;
        for (size_t t = 0; t < take; ++t) at_zero = at_zero || donors[t].first == 0.0;
        double num = 0.0, den = 0.0;
        for (size_t t = 0; t < take; ++t) {
          const double w = !by_distance ? 1.0 : at_zero ? (donors[t].first == 0.0 ? 1.0 : 0.0) : 1.0 / donors[t].first;
          num += w * static_cast<double>(rows_[donors[t].second * d_ + j]);
          den += w;
        }
        row[j] = static_cast<float>(num / den);
      }
    });
    return Tensor::from_vector(out, {m, d_}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    state["n_samples"] = n_;
    lin::put_f32(state, "fit_X", rows_);
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    n_ = lin::get_int(state, "n_samples", 1, name_);
    BL_CHECK(d_ <= (int64_t{1} << 40) / n_, name_, ": model state: n_samples x n_features is too large");
    rows_ = lin::get_f32(state, "fit_X", n_ * d_, name_);
    for (size_t k = 0; k < rows_.size(); ++k)
      BL_CHECK(!std::isinf(rows_[k]), name_, ": model state: fit_X holds an infinity at ", k);
    derive_means();
    fitted_ = true;
  }

 private:
  // Each column's mean over its observed training values (refused where there is none).
  void derive_means() {
    means_.assign(static_cast<size_t>(d_), 0.0);
    for (int64_t j = 0; j < d_; ++j) {
      double s = 0.0;
      int64_t count = 0;
      for (int64_t r = 0; r < n_; ++r) {
        const float v = rows_[r * d_ + j];
        if (std::isnan(v)) continue;
        s += static_cast<double>(v);
        ++count;
      }
      BL_CHECK(count > 0, name_, ": column ", j,
               " has no observed value (all NaN): no donor can fill it (scikit-learn drops such a column; bitlearn "
               "refuses it)");
      means_[j] = s / static_cast<double>(count);
    }
  }

  double nan_euclidean(const float* a, const float* b) const {
    double s = 0.0;
    int64_t present = 0;
    for (int64_t f = 0; f < d_; ++f) {
      if (std::isnan(a[f]) || std::isnan(b[f])) continue;
      const double t = static_cast<double>(a[f]) - static_cast<double>(b[f]);
      s += t * t;
      ++present;
    }
    if (present == 0) return std::numeric_limits<double>::quiet_NaN();
    return std::sqrt(s / static_cast<double>(present) * static_cast<double>(d_));
  }

  int64_t n_ = 0;
  std::vector<float> rows_;    // the training rows [n_, d_], NaN where missing
  std::vector<double> means_;  // per column: the mean of its observed training values
};

}  // namespace

std::unique_ptr<Estimator> make_knn_imputer() { return std::make_unique<KnnImputer>(); }

}  // namespace bl::ml
