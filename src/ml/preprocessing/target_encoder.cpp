// target_encoder.cpp: target_encoder (scikit-learn's TargetEncoder for numeric categories, target
// types continuous, binary and multiclass): each category of each column replaced by a shrunk mean
// of the target over the rows of that category. CPU-only (host binary64 work; the output, rounded once to
// binary32, goes back to X's device).
//
// fit: each column's categories are its distinct values sorted ascending (as ordinal_encoder; NaN
//   refused). The target: continuous as it is; binary (exactly two distinct values, classes
//   ascending) as 0 / 1 (1 for the larger class); multiclass (classes ascending) as one 0 / 1
//   indicator target per class, each encoded on its own (K = n_classes outputs per column, column
//   major: column j, class k is output j K + k). target_type=auto takes binary for two distinct
//   values, multiclass for more integral values, continuous otherwise. With the target mean mu and
//   population variance v over the rows (sums in row order), category c with count n_c, mean m_c and
//   within-category sum of squared deviations s_c is encoded as
//     smooth=auto:  lambda m_c + (1 - lambda) mu, lambda = v n_c / (v n_c + s_c / n_c) (mu where
//                   lambda is 0 / 0: a constant target);
//     smooth=a >= 0: (n_c m_c + a mu) / (n_c + a).
//   State: the categories (f32), the encodings (column, class, category order) and the target means
//   (binary64), the target type and the classes.
// transform: the encoding of each value's category, the target mean for an unseen value.
// target_encoder_cross_fit (scikit-learn's fit_transform): cv folds of the rows; continuous: the
//   rows (or their Philox permutation nn::shuffled_indices(n, random_state, 0) when shuffle is true)
//   cut into cv contiguous blocks, the first n mod cv one row longer; binary: stratified: the class
//   labels numbered in order of first appearance (binary and multiclass), fold i receives from class k as many rows as the
//   class-sorted labels at positions i, i + cv, ... hold, class k's fold numbers listed ascending
//   (permuted by nn::shuffled_indices(count_k, random_state, 1 + k) when shuffle is true) and given
//   to its rows in row order. Each row of fold f is encoded with the encodings fitted on the other
//   folds (a category absent there: their target mean). Without shuffle the folds are scikit-learn's
//   KFold / StratifiedKFold; with shuffle scikit-learn draws another permutation, so only the fold
//   assignment differs.
// Each column is one task: the same bytes at any thread count.
#include "ml/preprocessing/target_encoder.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "bitlearn/nn/data.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/preprocessing/category_table.h"
#include "ml/preprocessing/column_transformer.h"
#include "ml/preprocessing/host_numerics.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

// The target y [n] (f32, i32 or i64, checked by check_Xy) on the host in binary64.
std::vector<double> host_target(const Tensor& y) {
  Tensor h = y.to(Device::cpu()).contiguous();
  std::vector<double> out(static_cast<size_t>(h.numel()));
  for (int64_t i = 0; i < h.numel(); ++i) {
    if (h.dtype() == DType::f32) out[i] = h.data<float>()[i];
    else if (h.dtype() == DType::i32) out[i] = h.data<int32_t>()[i];
    else out[i] = static_cast<double>(h.data<int64_t>()[i]);
  }
  return out;
}

// Encodings fitted on some rows: the mean of each target over them and, per column and target, one
// value per category (values[j * K + k]).
struct Encodings {
  std::vector<double> mean;
  std::vector<std::vector<double>> values;
};

class TargetEncoder final : public prep::ColumnTransformer {
 public:
  TargetEncoder()
      : prep::ColumnTransformer("target_encoder", {{"target_type", K::choice, "auto", 0, {"auto", "continuous", "binary", "multiclass"}},
                                                   {"smooth", K::number_or_word, "auto", 0, {"auto"}},
                                                   {"cv", K::integer, "5", 2},
                                                   {"shuffle", K::boolean, "true"},
                                                   {"random_state", K::integer, "0", 0}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    BL_CHECK(y.defined(), name_, ": fit needs the target y (one value per row)");
    check_fit_input(X, y);
    const int64_t n = X.dim(0);
    const std::vector<std::vector<double>> cols = prep::host_columns(X);
    categories_ = prep::fit_categories(n, d_, [&](int64_t i, int64_t j) { return static_cast<float>(cols[j][i]); });
    const std::vector<double> t = host_target(y);
    resolve_target_type(t);
    const std::vector<std::vector<double>> enc = encoded_target(t);
    std::vector<int64_t> rows(static_cast<size_t>(n));
    std::iota(rows.begin(), rows.end(), int64_t{0});
    Encodings e = fit_encodings(codes_of(cols), enc, rows);
    mean_ = e.mean;
    encodings_ = std::move(e.values);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    const int64_t n = X.dim(0);
    const std::vector<std::vector<int32_t>> codes = codes_of(prep::host_columns(X));
    const int64_t K = n_targets();
    std::vector<std::vector<double>> out(static_cast<size_t>(d_ * K), std::vector<double>(static_cast<size_t>(n)));
    default_pool().parallel_for(d_ * K, [&](int64_t o) {
      const int64_t j = o / K;
      for (int64_t i = 0; i < n; ++i) out[o][i] = codes[j][i] < 0 ? mean_[o % K] : encodings_[o][codes[j][i]];
    });
    return prep::tensor_from_columns(out, n, X.device());
  }

  // See target_encoder.h.
  Tensor cross_fit(const Tensor& X, const Tensor& y) const {
    check_transform_input(X);
    check_Xy(name_, X, y);
    const int64_t n = X.dim(0), cv = params_.integer("cv");
    const std::vector<std::vector<int32_t>> codes = codes_of(prep::host_columns(X));
    const std::vector<double> t = host_target(y);
    const std::vector<std::vector<double>> enc = encoded_target(t);
    const std::vector<int64_t> fold = type_ == "continuous" ? block_folds(n, cv) : stratified_folds(t, cv);
    const int64_t K = n_targets();
    std::vector<std::vector<double>> out(static_cast<size_t>(d_ * K), std::vector<double>(static_cast<size_t>(n)));
    for (int64_t f = 0; f < cv; ++f) {
      std::vector<int64_t> train, test;
      for (int64_t i = 0; i < n; ++i) (fold[i] == f ? test : train).push_back(i);
      if (test.empty()) continue;
      const Encodings e = fit_encodings(codes, enc, train);
      default_pool().parallel_for(d_ * K, [&](int64_t o) {
        const int64_t j = o / K;
        for (int64_t i : test) out[o][i] = codes[j][i] < 0 ? e.mean[o % K] : e.values[o][codes[j][i]];
      });
    }
    return prep::tensor_from_columns(out, n, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    state["target_type"] = type_;
    prep::put_categories(state, categories_);
    std::vector<double> values;
    for (const std::vector<double>& e : encodings_) values.insert(values.end(), e.begin(), e.end());
    state["encodings_f64"] = density_detail::f64_to_hex(values);
    state["target_mean_f64"] = density_detail::f64_to_hex(mean_);
    if (type_ != "continuous") {
      state["n_classes"] = static_cast<int64_t>(classes_.size());
      lin::put_f32(state, "classes", classes_);
    }
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    BL_CHECK(state.contains("target_type") && state["target_type"].is_string() &&
                 (state["target_type"] == "binary" || state["target_type"] == "continuous" ||
                  state["target_type"] == "multiclass"),
             name_, ": model state field 'target_type' must be \"continuous\", \"binary\" or \"multiclass\"");
    type_ = state["target_type"].get<std::string>();
    const std::string& want = params_.text("target_type");
    BL_CHECK(want == "auto" || want == type_, name_, ": model state: target type ", type_,
             " against the parameter target_type=", want);
    classes_.clear();
    if (type_ != "continuous") {
      const int64_t k = lin::get_int(state, "n_classes", 2, name_);
      BL_CHECK(type_ == "binary" ? k == 2 : (k >= 3 && k <= (int64_t{1} << 16)), name_, ": model state: n_classes ", k,
               " does not fit target type ", type_);
      classes_ = lin::get_f32(state, "classes", k, name_);
      for (int64_t c = 0; c < k; ++c)
        BL_CHECK(std::isfinite(classes_[c]) && (c == 0 || classes_[c - 1] < classes_[c]), name_,
                 ": model state: the classes must be finite and ascending");
    }
    const int64_t K = n_targets();
    categories_ = prep::get_categories(state, d_, name_);
    int64_t total = 0;
    for (const std::vector<float>& c : categories_) total += static_cast<int64_t>(c.size());
    BL_CHECK(total <= (int64_t{1} << 36) / K, name_, ": model state: ", total, " categories of ", K,
             " targets is too many");
    const std::vector<double> values = prep::get_finite_f64(state, "encodings_f64", total * K, name_);
    mean_ = prep::get_finite_f64(state, "target_mean_f64", K, name_);
    encodings_.assign(static_cast<size_t>(d_ * K), {});
    size_t at = 0;
    for (int64_t j = 0; j < d_; ++j) {
      const size_t m = categories_[j].size();
      for (int64_t k = 0; k < K; ++k, at += m)
        encodings_[j * K + k].assign(values.begin() + static_cast<std::ptrdiff_t>(at),
                                     values.begin() + static_cast<std::ptrdiff_t>(at + m));
    }
    fitted_ = true;
  }

 private:
  // type_ and classes_ from the target and the parameter target_type.
  void resolve_target_type(const std::vector<double>& t) {
    std::vector<double> distinct = t;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const std::string& want = params_.text("target_type");
    bool integral = true;
    for (double v : distinct) integral = integral && v == std::floor(v);
    if (want == "auto") type_ = distinct.size() == 2 ? "binary" : (integral ? "multiclass" : "continuous");
    else type_ = want;
    BL_CHECK(type_ != "binary" || distinct.size() == 2, name_, ": target_type=binary needs exactly 2 distinct target values, got ",
             distinct.size());
    BL_CHECK(type_ != "multiclass" || (distinct.size() >= 3 && distinct.size() <= (size_t{1} << 16)), name_,
             ": target_type=multiclass needs 3 to 65536 distinct target values, got ", distinct.size());
    classes_.clear();
    if (type_ != "continuous")
      for (double v : distinct) classes_.push_back(static_cast<float>(v));
  }

  // Targets per output of a column: 1 (continuous, binary) or the class count.
  int64_t n_targets() const { return type_ == "multiclass" ? static_cast<int64_t>(classes_.size()) : 1; }

  // The class index of each target value (refused when not a class).
  std::vector<int64_t> class_index(const std::vector<double>& t) const {
    std::vector<int64_t> out(t.size());
    for (size_t i = 0; i < t.size(); ++i) {
      const float v = static_cast<float>(t[i]);
      auto it = std::lower_bound(classes_.begin(), classes_.end(), v);
      BL_CHECK(it != classes_.end() && *it == v && static_cast<double>(v) == t[i], name_, ": y holds ", t[i], " at row ",
               i, ", not one of the ", classes_.size(), " classes seen at fit");
      out[i] = it - classes_.begin();
    }
    return out;
  }

  // The targets as the encodings see them: continuous as it is; binary 0 / 1 (1 for classes_[1]);
  // multiclass one 0 / 1 indicator per class.
  std::vector<std::vector<double>> encoded_target(const std::vector<double>& t) const {
    if (type_ == "continuous") return {t};
    const std::vector<int64_t> c = class_index(t);
    const int64_t K = n_targets();
    std::vector<std::vector<double>> out(static_cast<size_t>(K), std::vector<double>(t.size(), 0.0));
    for (size_t i = 0; i < t.size(); ++i) {
      if (type_ == "binary") out[0][i] = static_cast<double>(c[i]);
      else out[c[i]][i] = 1.0;
    }
    return out;
  }

  // Each value's category index in its column (-1: unseen).
  std::vector<std::vector<int32_t>> codes_of(const std::vector<std::vector<double>>& cols) const {
    std::vector<std::vector<int32_t>> codes(cols.size());
    default_pool().parallel_for(d_, [&](int64_t j) {
      codes[j].resize(cols[j].size());
      for (size_t i = 0; i < cols[j].size(); ++i)
        codes[j][i] = static_cast<int32_t>(prep::category_index(categories_[j], static_cast<float>(cols[j][i])));
    });
    return codes;
  }

  // The encodings fitted on the rows `rows` (ascending) of the encoded targets T.
  Encodings fit_encodings(const std::vector<std::vector<int32_t>>& codes, const std::vector<std::vector<double>>& T,
                          const std::vector<int64_t>& rows) const {
    const bool auto_smooth = params_.text("smooth") == "auto";
    const double a = auto_smooth ? 0.0 : params_.number("smooth");
    const int64_t K = static_cast<int64_t>(T.size());
    Encodings e;
    std::vector<double> var(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) {
      const std::vector<double>& t = T[k];
      double s = 0.0;
      for (int64_t i : rows) s += t[i];
      e.mean.push_back(s / static_cast<double>(rows.size()));
      double v = 0.0;
      for (int64_t i : rows) v += (t[i] - e.mean[k]) * (t[i] - e.mean[k]);
      var[k] = v / static_cast<double>(rows.size());
    }
    e.values.assign(static_cast<size_t>(d_ * K), {});
    default_pool().parallel_for(d_ * K, [&](int64_t o) {
      const int64_t j = o / K, k = o % K;
      const std::vector<double>& t = T[k];
      const double mu = e.mean[k], v = var[k];
      const size_t m = categories_[j].size();
      std::vector<double> sum(m, 0.0), count(m, 0.0), ssd(m, 0.0), mean(m, 0.0);
      for (int64_t i : rows) {
        const int32_t c = codes[j][i];
        if (c < 0) continue;
        sum[c] += t[i];
        count[c] += 1.0;
      }
      for (size_t c = 0; c < m; ++c) mean[c] = count[c] > 0 ? sum[c] / count[c] : 0.0;
      if (auto_smooth)
        for (int64_t i : rows) {
          const int32_t c = codes[j][i];
          if (c >= 0) ssd[c] += (t[i] - mean[c]) * (t[i] - mean[c]);
        }
      std::vector<double>& out = e.values[o];
      out.assign(m, mu);
      for (size_t c = 0; c < m; ++c) {
        if (count[c] == 0.0) continue;
        if (auto_smooth) {
          const double lambda = v * count[c] / (v * count[c] + ssd[c] / count[c]);
          out[c] = std::isnan(lambda) ? mu : lambda * mean[c] + (1.0 - lambda) * mu;
        } else if (count[c] + a > 0.0) {
          out[c] = (sum[c] + a * mu) / (count[c] + a);
        }
      }
    });
    return e;
  }

  // Fold of each row, contiguous blocks of the (permuted) rows.
  std::vector<int64_t> block_folds(int64_t n, int64_t cv) const {
    BL_CHECK(cv <= n, name_, ": cv=", cv, " folds need at least ", cv, " rows, got ", n);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    if (params_.boolean("shuffle")) order = nn::shuffled_indices(n, static_cast<uint64_t>(params_.integer("random_state")), 0);
    std::vector<int64_t> fold(static_cast<size_t>(n));
    int64_t at = 0;
    for (int64_t f = 0; f < cv; ++f)
      for (int64_t r = 0; r < n / cv + (f < n % cv ? 1 : 0); ++r) fold[order[at++]] = f;
    return fold;
  }

  // Fold of each row, stratified by the class of target t (see the header comment).
  std::vector<int64_t> stratified_folds(const std::vector<double>& t, int64_t cv) const {
    const int64_t n = static_cast<int64_t>(t.size());
    const std::vector<int64_t> c = class_index(t);
    std::vector<int64_t> number(classes_.size(), -1), label(static_cast<size_t>(n));
    int64_t classes = 0;
    for (int64_t i = 0; i < n; ++i) {  // classes numbered by first appearance
      if (number[c[i]] < 0) number[c[i]] = classes++;
      label[i] = number[c[i]];
    }
    std::vector<int64_t> count(static_cast<size_t>(classes), 0), start(static_cast<size_t>(classes) + 1, 0);
    for (int64_t l : label) ++count[l];
    for (int64_t k = 0; k < classes; ++k) start[k + 1] = start[k] + count[k];
    BL_CHECK(cv <= *std::max_element(count.begin(), count.end()), name_, ": cv=", cv,
             " is more than the rows of every class");
    std::vector<int64_t> fold(static_cast<size_t>(n));
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    for (int64_t k = 0; k < classes; ++k) {
      std::vector<int64_t> folds;  // the class-sorted labels at i, i + cv, ... hold this many of class k
      for (int64_t f = 0; f < cv; ++f) {
        int64_t m = 0;
        for (int64_t p = f; p < n; p += cv) m += p >= start[k] && p < start[k + 1] ? 1 : 0;
        folds.insert(folds.end(), static_cast<size_t>(m), f);
      }
      if (params_.boolean("shuffle")) {
        const std::vector<int64_t> perm = nn::shuffled_indices(count[k], seed, static_cast<uint64_t>(1 + k));
        std::vector<int64_t> permuted(folds.size());
        for (size_t r = 0; r < folds.size(); ++r) permuted[r] = folds[perm[r]];
        folds = std::move(permuted);
      }
      size_t at = 0;
      for (int64_t i = 0; i < n; ++i)
        if (label[i] == k) fold[i] = folds[at++];
    }
    return fold;
  }

  prep::CategoryTable categories_;              // per column, ascending
  std::vector<std::vector<double>> encodings_;  // per column and target (j K + k), one per category
  std::vector<double> mean_;                    // per target, its mean (unseen categories)
  std::string type_ = "continuous";             // continuous, binary or multiclass
  std::vector<float> classes_;                  // binary and multiclass: the classes, ascending
};

}  // namespace

std::unique_ptr<Estimator> make_target_encoder() { return std::make_unique<TargetEncoder>(); }

Tensor target_encoder_cross_fit(const Estimator& est, const Tensor& X, const Tensor& y) {
  const auto* te = dynamic_cast<const TargetEncoder*>(&est);
  BL_CHECK(te != nullptr, "target_encoder_cross_fit: expected a target_encoder, got ", est.name());
  return te->cross_fit(X, y);
}

}  // namespace bl::ml
