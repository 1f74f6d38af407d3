// bagging.cpp: bagging_classifier / bagging_regressor: any registered estimator fitted on Philox
// bootstrap samples of rows and features (see include/bitlearn/ml/ensemble.h).
//
// sample_weight (as scikit-learn 1.9): each member's rows are drawn with probability w_i / sum(w)
// (draw_weighted_rows of sub_estimators.h, stream kBagRowStream | member; with replacement when
// bootstrap=true, else without), max_samples of the n rows as without weights, and the member is
// fitted on its drawn rows unweighted, so any member estimator takes part. Rows of weight 0 are never
// drawn. Weights that are all equal draw as without weights (the same distribution), so all-ones
// weights give the unweighted bits.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/progress.h"
#include "contract/arith.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/ensemble/ensemble_estimators.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "ml/weighted_fit.h"
#include "io/json_number.h"

namespace bl::ml {

namespace {

struct Member {
  std::vector<int64_t> features;  // columns of X the member sees, ascending
  std::vector<double> classes;    // classes present in its sample (classifier)
  std::unique_ptr<Estimator> model;
};

class Bagging : public WeightedRowsFit<Bagging, TwoFormEnsemble> {
 public:
  explicit Bagging(bool classifier) : WeightedRowsFit(classifier, "bagging_classifier", "bagging_regressor") {
    estimator_ = parse_sub_spec(name(), "estimator", classifier ? "decision_tree_classifier" : "decision_tree_regressor");
  }

  Params get_params() const override {
    return {{"estimator", sub_specs_text({estimator_})},
            {"n_estimators", std::to_string(n_estimators_)},
            {"max_samples", max_samples_},
            {"max_features", max_features_},
            {"bootstrap", bootstrap_ ? "true" : "false"},
            {"bootstrap_features", bootstrap_features_ ? "true" : "false"},
            {"random_state", std::to_string(seed_)}};
  }

  void set_params(const Params& params) override {
    const std::string est = name();
    for (const auto& [k, v] : params) {
      if (k == "estimator") estimator_ = parse_sub_spec(est, k, v);
      else if (k == "n_estimators") n_estimators_ = param_n_estimators(est, v);
      else if (k == "max_samples" || k == "max_features") {
        count_or_fraction(est, k, v, 1 << 30);  // validates the text
        (k == "max_samples" ? max_samples_ : max_features_) = v;
      } else if (k == "bootstrap") bootstrap_ = param_bool(est, k, v);
      else if (k == "bootstrap_features") bootstrap_features_ = param_bool(est, k, v);
      else if (k == "random_state") seed_ = static_cast<uint64_t>(param_int(est, k, v));
      else throw Error(est + ": unknown parameter '" + k + "'");
    }
  }

  bool fitted() const override { return !members_.empty(); }

 private:
  friend WeightedRowsFit;

  Estimator& fit_rows(const Tensor& X, const Tensor& y, const std::vector<float>* sample_weight) {
    const std::string est = name();
    check_Xy(est, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    if (classifier_) classes_ = encode_labels(est, y).classes;
    const int64_t m_rows = count_or_fraction(est, "max_samples", max_samples_, n);
    const int64_t m_cols = count_or_fraction(est, "max_features", max_features_, d);
    BL_CHECK(bootstrap_ || m_rows <= n, est, ": max_samples=", max_samples_, " asks for ", m_rows,
             " rows without replacement from ", n);
    BL_CHECK(bootstrap_features_ || m_cols <= d, est, ": max_features=", max_features_, " asks for ", m_cols,
             " features without replacement from ", d);
    // Unequal weights draw the rows in proportion to them.
    std::vector<double> w;
    if (sample_weight != nullptr &&
        std::any_of(sample_weight->begin(), sample_weight->end(), [&](float v) { return v != (*sample_weight)[0]; }))
      w.assign(sample_weight->begin(), sample_weight->end());
    if (!w.empty() && !bootstrap_) {
      const int64_t positive = std::count_if(w.begin(), w.end(), [](double v) { return v > 0.0; });
      BL_CHECK(m_rows <= positive, est, ": max_samples=", max_samples_, " asks for ", m_rows,
               " rows without replacement from ", positive, " rows of positive sample_weight");
    }
    Tensor hx = host_f32(X);
    std::vector<Member> members;
    for (int64_t e = 0; e < n_estimators_; ++e) {
      const uint64_t tag = static_cast<uint64_t>(e);
      Member m;
      std::vector<int64_t> rows = w.empty() ? draw_indices(seed_, kBagRowStream | tag, n, m_rows, bootstrap_)
                                            : draw_weighted_rows(seed_, kBagRowStream | tag, w, m_rows, bootstrap_);
      m.features = draw_indices(seed_, kBagFeatureStream | tag, d, m_cols, bootstrap_features_);
      Tensor sub_y = gather_labels(y, rows);
      if (classifier_) {
        m.classes = distinct_labels(sub_y);
        BL_CHECK(m.classes.size() >= 2, est, ": the sample of estimator ", e,
                 " holds a single class; raise max_samples or use more data");
      }
      const std::string sub_seed = std::to_string(random_u32_element(seed_, kSubSeedStream, tag));
      m.model = make_sub_estimator(estimator_, sub_seed);
      m.model->fit(gather_rows_cols(hx, rows, m.features), sub_y);
      members.push_back(std::move(m));
      report_progress(est + " estimators", e + 1, n_estimators_);
    }
    members_ = std::move(members);
    n_features_ = d;
    soft_ = classifier_ && supports_proba(*members_[0].model, gather_rows_cols(hx, {0}, members_[0].features));
    return *this;
  }

 public:
  Tensor predict(const Tensor& X) const override {
    std::vector<float> v = average(X);
    const int64_t n = X.dim(0);
    if (!classifier_) return Tensor::from_vector(v, {n});
    return labels_of_best_scores(classes_, v, n);
  }

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(classifier_, name(), ": predict_proba is not supported (a regressor)");
    return Tensor::from_vector(average(X), {X.dim(0), static_cast<int64_t>(classes_.size())});
  }

  void save_state(nlohmann::json& state) const override {
    put_n_features_classes(state, n_features_, classes_);
    state["soft"] = soft_;
    nlohmann::json list = nlohmann::json::array();
    for (const Member& m : members_) {
      nlohmann::json j;
      j["features"] = m.features;
      j["classes"] = m.classes;
      save_sub_estimator(*m.model, j["model"]);
      list.push_back(j);
    }
    state["estimators"] = list;
  }

  void load_state(const nlohmann::json& state) override {
    const std::string est = name();
    require_state_keys(state, est, {"n_features", "classes", "soft", "estimators"});
    n_features_ = state_n_features(state, est);
    classes_ = state_classes(state, est, classifier_);
    soft_ = state["soft"].get<bool>();
    const auto& list = state["estimators"];
    BL_CHECK(list.is_array() && !list.empty(), est, ": state.estimators must be a non-empty list");
    std::vector<Member> members;
    for (size_t e = 0; e < list.size(); ++e) {
      const std::string prefix = est + ": state.estimators[" + std::to_string(e) + "]";
      Member m;
      m.features = io::json_integers<int64_t>(list[e].at("features"), prefix + ".features");
      m.classes = list[e].at("classes").get<std::vector<double>>();
      BL_CHECK(!m.features.empty(), prefix, ".features is empty");
      for (int64_t f : m.features) BL_CHECK(f >= 0 && f < n_features_, prefix, ".features holds ", f);
      for (double c : m.classes) {
        BL_CHECK(std::binary_search(classes_.begin(), classes_.end(), c), prefix, ".classes holds ", c,
                 ", not in state.classes");
      }
      m.model = load_sub_estimator(list[e].at("model"), prefix + ".model");
      members.push_back(std::move(m));
    }
    members_ = std::move(members);
  }

 private:
  // Whether the member gives predict_proba (tried on one row); otherwise members vote.
  static bool supports_proba(const Estimator& model, const Tensor& one_row) {
    try {
      model.predict_proba(one_row);
    } catch (const Error& e) {
      if (std::string(e.what()).find("predict_proba is not supported") != std::string::npos) return false;
      throw;
    }
    return true;
  }

  // Mean class probabilities (soft), vote fractions (hard) or mean predictions, in member order.
  std::vector<float> average(const Tensor& X) const {
    check_fitted_X(name(), fitted(), X, n_features_);
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0);
    const int64_t k = classifier_ ? static_cast<int64_t>(classes_.size()) : 1;
    std::vector<int64_t> all_rows(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) all_rows[i] = i;
    std::vector<float> acc(static_cast<size_t>(n * k), 0.0f);
    int64_t done = 0;
    for (const Member& m : members_) {
      report_progress(name() + " predict estimators", done++, static_cast<int64_t>(members_.size()));
      Tensor xm = gather_rows_cols(hx, all_rows, m.features);
      if (!classifier_) {
        std::vector<float> p = host_f32(m.model->predict(xm)).to_vector<float>();
        for (int64_t i = 0; i < n; ++i) acc[i] = bl::add(acc[i], p[i]);
      } else if (soft_) {
        add_mapped_proba(classes_, m.classes, m.model->predict_proba(xm), 1.0f, acc);
      } else {
        std::vector<float> p = host_f32(m.model->predict(xm)).to_vector<float>();
        for (int64_t i = 0; i < n; ++i) {
          const int64_t c = std::lower_bound(classes_.begin(), classes_.end(), static_cast<double>(p[i])) -
                            classes_.begin();
          acc[i * k + c] = bl::add(acc[i * k + c], 1.0f);
        }
      }
    }
    report_progress(name() + " predict estimators", done, static_cast<int64_t>(members_.size()));
    const float count = static_cast<float>(members_.size());
    for (float& a : acc) a = bl::div(a, count);
    return acc;
  }

  SubSpec estimator_;
  int64_t n_estimators_ = 10;
  std::string max_samples_ = "1.0", max_features_ = "1.0";
  bool bootstrap_ = true, bootstrap_features_ = false;
  uint64_t seed_ = 0;

  std::vector<Member> members_;
  bool soft_ = false;
};

}  // namespace

std::unique_ptr<Estimator> make_bagging_classifier() { return std::make_unique<Bagging>(true); }
std::unique_ptr<Estimator> make_bagging_regressor() { return std::make_unique<Bagging>(false); }

std::vector<int64_t> draw_indices(uint64_t seed, uint64_t stream, int64_t n, int64_t m, bool replace) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(m));
  if (replace) {
    for (int64_t i = 0; i < m; ++i) {
      out.push_back(random_below(seed, stream, static_cast<uint64_t>(i), static_cast<uint32_t>(n)));
    }
  } else {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    for (int64_t i = 0; i < m; ++i) {  // position i takes a draw from [i, n)
      const int64_t j = i + random_below(seed, stream, static_cast<uint64_t>(i), static_cast<uint32_t>(n - i));
      std::swap(perm[i], perm[j]);
      out.push_back(perm[i]);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace bl::ml
