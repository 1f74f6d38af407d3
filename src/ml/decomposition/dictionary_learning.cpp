// dictionary_learning.cpp: dictionary_learning (scikit-learn's DictionaryLearning), X ~ C D with a
// sparse code C [n, k] and atoms D [k, d] of norm at most 1, minimizing
// 0.5 ||X - C D||_F^2 + alpha ||C||_1 (sparse_coding.h's learn_dictionary on X widened to binary64:
// start from the exact SVD, then alternate lasso coordinate descent on the code and one block
// coordinate pass over the atoms until the cost falls by less than tol times itself).
// fit_algorithm: cd (the default here; scikit-learn's is lars, kept at cd so that fits made before
// lars existed stay the same) or lars (each code step by lars.cpp's lasso_lars path, from a zero code,
// transform_max_iter steps, as scikit-learn's).
// transform(X) codes the rows on components_ (D rounded once to binary32, widened back) with
// transform_algorithm: lasso_cd (alpha = transform_alpha, none: alpha, from a zero code,
// transform_max_iter sweeps), lasso_lars (the same problem by the lasso_lars path, transform_max_iter
// steps), omp or lars (transform_n_nonzero_coefs atoms or steps, none: floor(min(max(d / 10, 1), k)))
// or threshold (soft threshold of D x at transform_alpha); positive_code clips the codes at 0;
// split_sign returns [max(code, 0), -min(code, 0)] [n, 2k].
// error_ (the cost after each iteration) and components_ are stored rounded once to binary32.
#include <algorithm>
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/optional_count.h"
#include "ml/decomposition/projection_state.h"
#include "ml/decomposition/sparse_coding.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

class DictionaryLearning final : public lin::ParamEstimator {
 public:
  DictionaryLearning()
      : lin::ParamEstimator("dictionary_learning",
                            {{"alpha", K::number, "1", 0.0},
                             {"fit_algorithm", K::choice, "cd", 0, {"cd", "lars"}},
                             {"max_iter", K::integer, "1000", 1},
                             {"n_components", K::number_or_word, "none", 1.0, {"none"}},
                             {"positive_code", K::boolean, "false"},
                             {"positive_dict", K::boolean, "false"},
                             {"random_state", K::integer, "0", 0},
                             {"split_sign", K::boolean, "false"},
                             {"tol", K::number, "1e-08", 0.0},
                             {"transform_algorithm", K::choice, "omp", 0, {"lasso_cd", "lasso_lars", "lars", "omp", "threshold"}},
                             {"transform_alpha", K::number_or_word, "none", 0.0, {"none"}},
                             {"transform_max_iter", K::integer, "1000", 1},
                             {"transform_n_nonzero_coefs", K::number_or_word, "none", 1.0, {"none"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    const int64_t k = dec::optional_count(params_, name_, "n_components", d);
    BL_CHECK(k <= (int64_t{1} << 16), name_, ": n_components=", k, " is too large");
    // Refused before any work: a bad transform setting would otherwise surface only at transform.
    coding_options(d, k);
    const std::vector<double> xh = dec::to_host64(X);
    dec::DictionaryLearningSetup setup;
    dec::read_dictionary_learning_params(params_, setup);
    setup.code_max_iter = params_.integer("transform_max_iter");
    setup.positive_code = params_.boolean("positive_code");
    setup.positive_dict = params_.boolean("positive_dict");
    setup.coding = params_.text("fit_algorithm") == "lars" ? "lasso_lars" : "lasso_cd";
    BL_CHECK(!(setup.positive_code && setup.coding == "lasso_lars"), name_,
             ": positive_code=true needs fit_algorithm=cd (the lars path here has no positive variant)");
    dec::DictionaryLearningResult r = dec::learn_dictionary(xh, n, d, k, setup, name_);
    d_ = d;
    k_ = k;
    n_iter_ = r.n_iter;
    components_ = dec::rounded32(r.dict);
    error_ = dec::rounded32(r.errors);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const int64_t n = X.dim(0);
    const std::vector<double> xh = dec::to_host64(X);
    const std::vector<double> dict(components_.begin(), components_.end());
    std::vector<double> code;
    const int64_t unconverged = dec::sparse_encode(xh, n, d_, dict, k_, coding_options(d_, k_), code);
    if (unconverged > 0)
      warn_not_converged(name_ + " lasso coordinate descent (transform)", params_.integer("transform_max_iter"));
    if (!params_.boolean("split_sign")) return dec::to_tensor32(code, {n, k_}, X.device());
    std::vector<double> split(static_cast<size_t>(n * 2 * k_));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t t = 0; t < k_; ++t) {
        split[i * 2 * k_ + t] = std::max(code[i * k_ + t], 0.0);
        split[i * 2 * k_ + k_ + t] = -std::min(code[i * k_ + t], 0.0);
      }
    return dec::to_tensor32(split, {n, 2 * k_}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    dec::put_iterated_shape(state, d_, k_, n_iter_);
    lin::put_f32s(state, {{"components", components_}, {"error", error_}});
  }
  void load_state(const nlohmann::json& state) override {
    dec::get_iterated_shape(state, name_, d_, k_, n_iter_);
    BL_CHECK(k_ <= (int64_t{1} << 16), name_, ": model state: n_components ", k_, " is too large");
    components_ = lin::get_f32(state, "components", k_ * d_, name_);
    for (float v : components_) BL_CHECK(std::isfinite(v), name_, ": model state: components hold ", v);
    error_ = lin::get_f32(state, "error", n_iter_, name_);
    fitted_ = true;
  }

 private:
  dec::SparseCodingOptions coding_options(int64_t d, int64_t k) const {
    dec::SparseCodingOptions o;
    o.algorithm = params_.text("transform_algorithm");
    o.alpha = params_.text("transform_alpha") == "none" ? params_.number("alpha") : params_.number("transform_alpha");
    const double fallback = std::floor(std::min(std::max(static_cast<double>(d) / 10.0, 1.0), static_cast<double>(k)));
    o.n_nonzero = dec::optional_count(params_, name_, "transform_n_nonzero_coefs", static_cast<int64_t>(fallback));
    o.max_iter = params_.integer("transform_max_iter");
    o.positive = params_.boolean("positive_code");
    BL_CHECK(!(o.positive && o.algorithm != "lasso_cd" && o.algorithm != "threshold"), name_,
             ": positive_code=true needs transform_algorithm lasso_cd or threshold (", o.algorithm,
             " has no positive variant here)");
    return o;
  }

  std::vector<float> components_, error_;
  int64_t d_ = 0, k_ = 0, n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_dictionary_learning() { return std::make_unique<DictionaryLearning>(); }

}  // namespace bl::ml
