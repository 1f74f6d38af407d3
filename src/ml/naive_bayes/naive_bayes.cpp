// naive_bayes.cpp: gaussian_nb, multinomial_nb, complement_nb, bernoulli_nb and categorical_nb.
//
// Fit reads X once on the host in row order: per class, sums (and for gaussian_nb squared
// deviations) accumulate in binary64 and are rounded to binary32 once, so the statistics do not
// depend on thread count or device. With sample weights (fit_weighted) row i adds w_i times its
// count, values and squared deviations (class counts, priors, means, variances and feature counts
// become weighted, as scikit-learn's); gaussian_nb's var_smoothing stays relative to the unweighted
// variance of X, as there. A weight of 1 multiplies exactly, so all-ones weights change nothing. Every logarithm is the contract's bl::log on binary32.
//
// Prediction forms the joint log-likelihood jll [m, n_classes]:
//   multinomial, complement, bernoulli: jll = X W^T + b through the contract GEMM on X's device
//     (bernoulli binarizes X first);
//   gaussian: log prior_c - 0.5 sum_j log(2 pi var_cj) - 0.5 sum_j (x_j - theta_cj)^2 / var_cj, and
//   categorical: log prior_c + sum_j log P(x_j | c), both on the host in feature order.
// predict is the first class of largest jll; predict_proba is the contract softmax of jll.
#include <cmath>
#include <numeric>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/math.h"
#include "core/error.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

enum class Kind { gaussian, multinomial, complement, bernoulli, categorical };

const char* name_of(Kind k) {
  switch (k) {
    case Kind::gaussian: return "gaussian_nb";
    case Kind::multinomial: return "multinomial_nb";
    case Kind::complement: return "complement_nb";
    case Kind::bernoulli: return "bernoulli_nb";
    case Kind::categorical: return "categorical_nb";
  }
  return "";
}

std::vector<ParamSpec> specs_of(Kind k) {
  if (k == Kind::gaussian) return {{"var_smoothing", K::number, "1e-09", 0.0}};
  std::vector<ParamSpec> s{{"alpha", K::number, "1", 0.0}, {"fit_prior", K::boolean, "true"},
                           {"force_alpha", K::boolean, "true"}};
  if (k == Kind::bernoulli) s.push_back({"binarize", K::number, "0", -1e308});
  if (k == Kind::complement) s.push_back({"norm", K::boolean, "false"});
  return s;
}

// ln(2 pi) rounded to binary32.
constexpr float kLog2Pi = 1.83787706640934548356f;

class NaiveBayes final : public lin::ParamEstimator {
 public:
  explicit NaiveBayes(Kind kind) : lin::ParamEstimator(name_of(kind), specs_of(kind)), kind_(kind) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    w_.clear();
    return fit_rows(X, y);
  }
  bool supports_sample_weight() const override { return true; }

 protected:
  Estimator& fit_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) override {
    w_.assign(w.begin(), w.end());
    Estimator& out = fit_rows(X, y);
    w_.clear();
    return out;
  }

 public:
  Estimator& fit_rows(const Tensor& X, const Tensor& y) {
    check_Xy(name_, X, y);
    lin::EncodedLabels e = lin::encode_labels(name_, y, 1);
    const int64_t n = X.dim(0), d = X.dim(1), c = static_cast<int64_t>(e.classes.size());
    std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>();
    const float alpha = kind_ == Kind::gaussian ? 0.0f : smoothing_alpha();
    if (kind_ == Kind::multinomial || kind_ == Kind::complement || kind_ == Kind::categorical) {
      for (int64_t i = 0; i < n * d; ++i)
        BL_CHECK(x[i] >= 0.0f, name_, ": X must be non-negative (counts or categories), got ", x[i],
                 " at row ", i / d, ", column ", i % d);
    }
    if (kind_ == Kind::bernoulli) binarize_host(x);
    classes_ = e.classes;
    label_dtype_ = y.dtype();
    d_ = d;
    std::vector<double> count(static_cast<size_t>(c), 0.0);
    double total = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      count[static_cast<size_t>(e.index[i])] += wt(i);
      total += wt(i);
    }
    for (int64_t k = 0; k < c; ++k)
      BL_CHECK(count[k] > 0.0, name_, ": class ", e.classes[k], " has a total sample weight of 0");
    class_count_.assign(count.begin(), count.end());
    set_log_prior(count, total);
    switch (kind_) {
      case Kind::gaussian: fit_gaussian(x, e.index, count, n); break;
      case Kind::multinomial:
      case Kind::complement:
      case Kind::bernoulli: fit_counts(x, e.index, count, n, alpha); break;
      case Kind::categorical: fit_categorical(x, e.index, count, n, alpha); break;
    }
    fitted_ = true;
    return *this;
  }

  Tensor predict_proba(const Tensor& X) const override { return bl::softmax(joint_log_likelihood(X), 1); }

  Tensor predict(const Tensor& X) const override {
    return lin::labels_from_index(classes_, bl::argmax(joint_log_likelihood(X), 1), label_dtype_, X.device());
  }

  double score(const Tensor& X, const Tensor& y) const override { return lin::accuracy_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    const int64_t c = static_cast<int64_t>(classes_.size());
    lin::put_ints(state, {{"n_features", d_}, {"n_classes", c}});
    lin::put_labels(state, classes_, label_dtype_);
    lin::put_f32s(state, {{"class_count", class_count_}, {"class_log_prior", log_prior_}});
    if (kind_ == Kind::gaussian) {
      lin::put_f32s(state, {{"theta", theta_}, {"var", var_}});
    } else if (kind_ == Kind::categorical) {
      state["n_categories"] = n_categories_;
      lin::put_f32(state, "feature_log_prob", flp_);
    } else {
      lin::put_f32s(state, {{"feature_count", feature_count_}, {"weight", weight_}, {"bias", bias_}});
    }
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    const int64_t c = lin::get_int(state, "n_classes", 1, name_);
    BL_CHECK(c <= (int64_t{1} << 20), name_, ": model state: n_classes=", c, " is too large");
    classes_ = lin::get_f32(state, "classes", c, name_);
    label_dtype_ = lin::get_label_dtype(state);
    class_count_ = lin::get_f32(state, "class_count", c, name_);
    log_prior_ = lin::get_f32(state, "class_log_prior", c, name_);
    BL_CHECK(d_ <= (int64_t{1} << 40) / c, name_, ": model state: n_classes x n_features is too large");
    if (kind_ == Kind::gaussian) {
      theta_ = lin::get_f32(state, "theta", c * d_, name_);
      var_ = lin::get_f32(state, "var", c * d_, name_);
      for (float v : var_) BL_CHECK(v > 0.0f, name_, ": model state: var must be positive, got ", v);
    } else if (kind_ == Kind::categorical) {
      BL_CHECK(state.contains("n_categories") && state["n_categories"].is_array() &&
                   static_cast<int64_t>(state["n_categories"].size()) == d_,
               name_, ": model state: n_categories must be an array of ", d_, " integers");
      n_categories_.clear();
      int64_t total = 0;
      for (const auto& v : state["n_categories"]) {
        BL_CHECK(v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= (int64_t{1} << 24), name_,
                 ": model state: n_categories entries must be integers in [1, 2^24]");
        n_categories_.push_back(v.get<int64_t>());
        total += v.get<int64_t>();
      }
      flp_ = lin::get_f32(state, "feature_log_prob", total * c, name_);
      category_offsets();
    } else {
      feature_count_ = lin::get_f32(state, "feature_count", c * d_, name_);
      weight_ = lin::get_f32(state, "weight", c * d_, name_);
      bias_ = lin::get_f32(state, "bias", c, name_);
    }
    fitted_ = true;
  }

 private:
  // Row i's weight (1 without sample weights).
  double wt(int64_t i) const { return w_.empty() ? 1.0 : w_[static_cast<size_t>(i)]; }

  float smoothing_alpha() const {
    const double a = params_.number("alpha");
    if (a >= 1e-10) return static_cast<float>(a);
    BL_CHECK(!params_.boolean("force_alpha"), name_, ": alpha=", params_.text("alpha"),
             " would take the logarithm of a zero count; use alpha >= 1e-10, or force_alpha=false to raise it to 1e-10");
    return 1e-10f;
  }

  void binarize_host(std::vector<float>& x) const {
    const float t = static_cast<float>(params_.number("binarize"));
    for (float& v : x) v = v > t ? 1.0f : 0.0f;
  }

  void set_log_prior(const std::vector<double>& count, double n) {
    const size_t c = count.size();
    log_prior_.assign(c, 0.0f);
    const bool fit_prior = kind_ == Kind::gaussian || params_.boolean("fit_prior");
    for (size_t k = 0; k < c; ++k) {
      // log(count / n) as log(count) - log(n); uniform: -log(c).
      log_prior_[k] = fit_prior ? bl::sub(bl::log(static_cast<float>(count[k])), bl::log(static_cast<float>(n)))
                                : bl::neg(bl::log(static_cast<float>(c)));
    }
  }

  void fit_gaussian(const std::vector<float>& x, const std::vector<int64_t>& cls, const std::vector<double>& count,
                    int64_t n) {
    const int64_t d = d_, c = static_cast<int64_t>(count.size());
    std::vector<double> sum(static_cast<size_t>(c * d), 0.0), sq(static_cast<size_t>(c * d), 0.0);
    std::vector<double> all_sum(static_cast<size_t>(d), 0.0), all_sq(static_cast<size_t>(d), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) {
        sum[cls[i] * d + j] += wt(i) * x[i * d + j];
        all_sum[j] += x[i * d + j];
      }
    std::vector<double> mean(sum.size()), all_mean(static_cast<size_t>(d));
    for (int64_t k = 0; k < c; ++k)
      for (int64_t j = 0; j < d; ++j) mean[k * d + j] = sum[k * d + j] / count[k];
    for (int64_t j = 0; j < d; ++j) all_mean[j] = all_sum[j] / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) {
        double dv = x[i * d + j] - mean[cls[i] * d + j], da = x[i * d + j] - all_mean[j];
        sq[cls[i] * d + j] += wt(i) * dv * dv;
        all_sq[j] += da * da;
      }
    // epsilon = var_smoothing * the largest feature variance of X (scikit-learn's rule).
    double max_var = 0.0;
    for (int64_t j = 0; j < d; ++j) max_var = std::max(max_var, all_sq[j] / static_cast<double>(n));
    const double eps = params_.number("var_smoothing") * max_var;
    theta_.assign(static_cast<size_t>(c * d), 0.0f);
    var_.assign(static_cast<size_t>(c * d), 0.0f);
    for (int64_t k = 0; k < c; ++k)
      for (int64_t j = 0; j < d; ++j) {
        theta_[k * d + j] = static_cast<float>(mean[k * d + j]);
        var_[k * d + j] = static_cast<float>(sq[k * d + j] / count[k] + eps);
        BL_CHECK(var_[k * d + j] > 0.0f, name_, ": feature ", j, " has zero variance in class ", classes_[k],
                 " and the smoothing var_smoothing x (largest feature variance of X) is 0; use var_smoothing > 0 with a "
                 "non-constant feature");
      }
  }

  // Per-class feature sums, then the linear form W, b of the joint log-likelihood.
  void fit_counts(const std::vector<float>& x, const std::vector<int64_t>& cls, const std::vector<double>& count,
                  int64_t n, float alpha) {
    const int64_t d = d_, c = static_cast<int64_t>(count.size());
    std::vector<double> fc(static_cast<size_t>(c * d), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) fc[cls[i] * d + j] += wt(i) * x[i * d + j];
    feature_count_.assign(fc.begin(), fc.end());
    weight_.assign(static_cast<size_t>(c * d), 0.0f);
    bias_ = log_prior_;
    if (kind_ == Kind::multinomial) {
      // log((fc + alpha) / sum_j (fc + alpha))
      for (int64_t k = 0; k < c; ++k) {
        double total = 0.0;
        for (int64_t j = 0; j < d; ++j) total += fc[k * d + j] + alpha;
        const float lt = bl::log(static_cast<float>(total));
        for (int64_t j = 0; j < d; ++j)
          weight_[k * d + j] = bl::sub(bl::log(static_cast<float>(fc[k * d + j] + alpha)), lt);
      }
    } else if (kind_ == Kind::bernoulli) {
      // P(x_j = 1 | c) = (fc + alpha) / (count + 2 alpha); jll = x (log p - log(1 - p)) + sum log(1 - p).
      for (int64_t k = 0; k < c; ++k) {
        const double denom = count[k] + 2.0 * alpha;
        const float ld = bl::log(static_cast<float>(denom));
        double neg_sum = 0.0;
        for (int64_t j = 0; j < d; ++j) {
          float lp = bl::sub(bl::log(static_cast<float>(fc[k * d + j] + alpha)), ld);
          float lq = bl::sub(bl::log(static_cast<float>(denom - fc[k * d + j] - alpha)), ld);
          weight_[k * d + j] = bl::sub(lp, lq);
          neg_sum += lq;
        }
        bias_[k] = bl::add(log_prior_[k], static_cast<float>(neg_sum));
      }
    } else {
      // Complement: counts of every other class, log of their share; norm divides by the row sum.
      std::vector<double> all(static_cast<size_t>(d), 0.0);
      for (int64_t k = 0; k < c; ++k)
        for (int64_t j = 0; j < d; ++j) all[j] += fc[k * d + j];
      const bool norm = params_.boolean("norm");
      for (int64_t k = 0; k < c; ++k) {
        double total = 0.0;
        std::vector<double> comp(static_cast<size_t>(d));
        for (int64_t j = 0; j < d; ++j) {
          comp[j] = all[j] + alpha - fc[k * d + j];
          total += comp[j];
        }
        const float lt = bl::log(static_cast<float>(total));
        double lsum = 0.0;
        for (int64_t j = 0; j < d; ++j) {
          weight_[k * d + j] = bl::sub(bl::log(static_cast<float>(comp[j])), lt);
          lsum += weight_[k * d + j];
        }
        for (int64_t j = 0; j < d; ++j)
          weight_[k * d + j] = norm ? bl::div(weight_[k * d + j], static_cast<float>(lsum)) : bl::neg(weight_[k * d + j]);
        // scikit-learn adds the prior only when there is a single class.
        bias_[k] = c == 1 ? log_prior_[k] : 0.0f;
      }
    }
  }

  void category_offsets() {
    offset_.assign(n_categories_.size() + 1, 0);
    for (size_t j = 0; j < n_categories_.size(); ++j) offset_[j + 1] = offset_[j] + n_categories_[j];
  }

  void fit_categorical(const std::vector<float>& x, const std::vector<int64_t>& cls, const std::vector<double>& count,
                       int64_t n, float alpha) {
    const int64_t d = d_, c = static_cast<int64_t>(count.size());
    n_categories_.assign(static_cast<size_t>(d), 1);
    for (int64_t i = 0; i < n * d; ++i) {
      const float v = x[i];
      BL_CHECK(v == std::floor(v) && v < 16777216.0f, name_, ": X must hold integer categories below 2^24, got ", v,
               " at row ", i / d, ", column ", i % d);
      n_categories_[i % d] = std::max(n_categories_[i % d], static_cast<int64_t>(v) + 1);
    }
    category_offsets();
    const int64_t total = offset_.back();
    BL_CHECK(total <= (int64_t{1} << 28) / c, name_, ": ", total, " categories x ", c,
             " classes is too many (the limit is 2^28 counts)");
    std::vector<double> fc(static_cast<size_t>(total * c), 0.0);
    // Layout: for feature j, class k, category v at (offset_[j] * c + k * n_categories_[j] + v).
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j)
        fc[offset_[j] * c + cls[i] * n_categories_[j] + static_cast<int64_t>(x[i * d + j])] += wt(i);
    flp_.assign(fc.size(), 0.0f);
    for (int64_t j = 0; j < d; ++j)
      for (int64_t k = 0; k < c; ++k) {
        const int64_t base = offset_[j] * c + k * n_categories_[j];
        const float ld = bl::log(static_cast<float>(count[k] + alpha * static_cast<double>(n_categories_[j])));
        for (int64_t v = 0; v < n_categories_[j]; ++v)
          flp_[base + v] = bl::sub(bl::log(static_cast<float>(fc[base + v] + alpha)), ld);
      }
  }

  Tensor joint_log_likelihood(const Tensor& X) const {
    check_predict_input(X, d_);
    const int64_t m = X.dim(0), d = d_, c = static_cast<int64_t>(classes_.size());
    if (kind_ == Kind::multinomial || kind_ == Kind::complement || kind_ == Kind::bernoulli) {
      Tensor A = X.contiguous();
      if (kind_ == Kind::bernoulli) {
        Tensor t = Tensor::from_vector(std::vector<float>{static_cast<float>(params_.number("binarize"))}, {1}, X.device());
        A = bl::cast(bl::gt(A, t), DType::f32);
      }
      Tensor W = Tensor::from_vector(weight_, {c, d}, X.device());
      Tensor b = Tensor::from_vector(bias_, {1, c}, X.device());
      return bl::add(bl::matmul(A, W, false, true), b);
    }
    std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<float> jll(static_cast<size_t>(m * c));
    if (kind_ == Kind::gaussian) {
      std::vector<float> base(static_cast<size_t>(c)), inv(var_.size());
      for (int64_t k = 0; k < c; ++k) {
        float s = 0.0f;
        for (int64_t j = 0; j < d; ++j) s = bl::add(s, bl::add(kLog2Pi, bl::log(var_[k * d + j])));
        base[k] = bl::fma(-0.5f, s, log_prior_[k]);
      }
      for (size_t i = 0; i < var_.size(); ++i) inv[i] = bl::div(1.0f, var_[i]);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t k = 0; k < c; ++k) {
          float s = 0.0f;
          for (int64_t j = 0; j < d; ++j) {
            const float diff = bl::sub(x[i * d + j], theta_[k * d + j]);
            s = bl::fma(bl::mul(diff, diff), inv[k * d + j], s);
          }
          jll[i * c + k] = bl::fma(-0.5f, s, base[k]);
        }
    } else {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < d; ++j) {
          const float v = x[i * d + j];
          BL_CHECK(v >= 0.0f && v == std::floor(v) && v < static_cast<float>(n_categories_[j]), name_,
                   ": category ", v, " at row ", i, ", column ", j, " was not seen in fit (", n_categories_[j],
                   " categories: 0 to ", n_categories_[j] - 1, ")");
        }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t k = 0; k < c; ++k) {
          float s = log_prior_[k];
          for (int64_t j = 0; j < d; ++j)
            s = bl::add(s, flp_[offset_[j] * c + k * n_categories_[j] + static_cast<int64_t>(x[i * d + j])]);
          jll[i * c + k] = s;
        }
    }
    return Tensor::from_vector(jll, {m, c}, X.device());
  }

  Kind kind_;
  std::vector<double> w_;  // the fit's sample weights (empty: unweighted)
  std::vector<float> classes_, class_count_, log_prior_;
  std::vector<float> theta_, var_;                    // gaussian [c, d]
  std::vector<float> feature_count_, weight_, bias_;  // multinomial, complement, bernoulli
  std::vector<int64_t> n_categories_, offset_;        // categorical
  std::vector<float> flp_;
  DType label_dtype_ = DType::f32;
  int64_t d_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_gaussian_nb() { return std::make_unique<NaiveBayes>(Kind::gaussian); }
std::unique_ptr<Estimator> make_multinomial_nb() { return std::make_unique<NaiveBayes>(Kind::multinomial); }
std::unique_ptr<Estimator> make_complement_nb() { return std::make_unique<NaiveBayes>(Kind::complement); }
std::unique_ptr<Estimator> make_bernoulli_nb() { return std::make_unique<NaiveBayes>(Kind::bernoulli); }
std::unique_ptr<Estimator> make_categorical_nb() { return std::make_unique<NaiveBayes>(Kind::categorical); }

}  // namespace bl::ml
