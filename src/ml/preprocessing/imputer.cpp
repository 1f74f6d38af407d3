// imputer.cpp: simple_imputer (scikit-learn's SimpleImputer for numeric data): NaN marks a missing
// value; fit learns one statistic per column from the observed values, transform puts it in place
// of every NaN of that column.
//
// Numerics: each column's observed values are copied to the host and its statistic computed there
// in binary64, then rounded once to binary32 (one task per column; each statistic depends on its
// column alone, so the thread count changes nothing). mean: the binary64 sum in row order over the
// count. median: numpy's rule (the middle value, or the mean of the two middle ones in binary64).
// most_frequent: the value seen most often, the smallest one among ties. constant: fill_value (0
// when none). transform: bl::where(X != X, statistic, X) on X's device (the NaN test is X != X).
// A column without an observed value is refused at fit (except for constant), where scikit-learn
// drops it from the output.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/preprocessing/column_transformer.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

// The statistic of one column's observed values (non-empty), in binary64.
double column_statistic(const std::string& strategy, std::vector<float>& v) {
  if (strategy == "mean") {
    double s = 0.0;
    for (float x : v) s += static_cast<double>(x);
    return s / static_cast<double>(v.size());
  }
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  if (strategy == "median")
    return n % 2 == 1 ? static_cast<double>(v[n / 2])
                      : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2.0;
  // most_frequent: runs of equal values in ascending order; a later run wins only with more.
  float best = v[0];
  size_t best_count = 0;
  for (size_t i = 0; i < n;) {
    size_t k = i;
    while (k < n && v[k] == v[i]) ++k;
    if (k - i > best_count) {
      best = v[i];
      best_count = k - i;
    }
    i = k;
  }
  return static_cast<double>(best);
}

// X for the imputer: 2-d f32, NaN allowed (the missing marker), no infinity (as scikit-learn).
void check_imputer_X(const std::string& est, const Tensor& X) {
  check_X(est, X, /*allow_nan=*/true);
  prep::check_no_infinity(est, X);
}

class SimpleImputer final : public prep::ColumnTransformer {
 public:
  SimpleImputer()
      : prep::ColumnTransformer("simple_imputer",
                                {{"fill_value", K::number_or_word, "none", -1e308, {"none"}},
                                 {"strategy", K::choice, "mean", 0, {"mean", "median", "most_frequent", "constant"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y, /*allow_nan=*/true);
    check_imputer_X(name_, X);
    const std::string strategy = params_.text("strategy");
    statistics_.assign(static_cast<size_t>(d_), 0.0f);
    if (strategy == "constant") {
      const std::string& f = params_.text("fill_value");
      const float fill = f == "none" ? 0.0f : static_cast<float>(param_double(name_, "fill_value", f));
      BL_CHECK(std::isfinite(fill), name_, ": fill_value=", f, " does not fit binary32");
      statistics_.assign(static_cast<size_t>(d_), fill);
      fitted_ = true;
      return *this;
    }
    const int64_t n = X.dim(0);
    Tensor h = X.to(Device::cpu()).contiguous();
    const float* p = h.data<float>();
    std::vector<int64_t> observed(static_cast<size_t>(d_), 0);
    default_pool().parallel_for(d_, [&](int64_t j) {
      std::vector<float> col;
      col.reserve(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        if (!std::isnan(p[i * d_ + j])) col.push_back(p[i * d_ + j]);
      observed[j] = static_cast<int64_t>(col.size());
      if (!col.empty()) statistics_[j] = static_cast<float>(column_statistic(strategy, col));
    });
    for (int64_t j = 0; j < d_; ++j)
      BL_CHECK(observed[j] > 0, name_, ": column ", j, " has no observed value (all NaN), so strategy=", strategy,
               " has nothing to learn from (scikit-learn drops such a column; bitlearn refuses it)");
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    BL_CHECK(fitted_, name_, ": transform before fit");
    check_imputer_X(name_, X);
    BL_CHECK(X.dim(1) == d_, name_, ": X has ", X.dim(1), " features but the model was fit with ", d_);
    return bl::where(bl::ne(X, X), row_on(statistics_, X), X);
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    lin::put_f32(state, "statistics", statistics_);
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    statistics_ = get_finite_row(state, "statistics");
    fitted_ = true;
  }

 private:
  std::vector<float> statistics_;
};

}  // namespace

std::unique_ptr<Estimator> make_simple_imputer() { return std::make_unique<SimpleImputer>(); }

}  // namespace bl::ml
