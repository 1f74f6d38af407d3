// sub_estimators.h: what the meta-estimators (bagging, voting, stacking) share: sub-estimator specs
// named by registry name + parameters, nested model state, row/column gathers and class mapping.
//
// Spec text: items separated by ';', each a registry name optionally followed by its parameters in
// parentheses, separated by ',':  "random_forest_classifier(n_estimators=20,max_depth=5);ridge".
// Values may not contain ';', ',', '(' or ')'.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

// A meta-estimator with a classifier and a regressor form (bagging, voting, stacking): the form's
// registry name, score (accuracy for the classifier, R^2 for the regressor), and what fit records:
// the width of X and, for the classifier, the sorted classes.
class TwoFormEnsemble : public Estimator {
 public:
  TwoFormEnsemble(bool classifier, const char* classifier_name, const char* regressor_name)
      : classifier_(classifier), name_(classifier ? classifier_name : regressor_name) {}
  std::string name() const override { return name_; }
  double score(const Tensor& X, const Tensor& y) const override;

 protected:
  bool classifier_;
  std::vector<double> classes_;
  int64_t n_features_ = 0;

 private:
  std::string name_;
};

struct SubSpec {
  std::string name;
  Params params;
};

// Parses spec text; an empty list, an unknown registry name, a malformed item or an unknown
// parameter throws bl::Error naming `est` and `key` (the parameter that held the text).
std::vector<SubSpec> parse_sub_specs(const std::string& est, const std::string& key, const std::string& text);
// A single spec ("ridge(alpha=2)"): the same rules, exactly one item.
SubSpec parse_sub_spec(const std::string& est, const std::string& key, const std::string& text);
// Canonical text of specs (parameters in sorted order).
std::string sub_specs_text(const std::vector<SubSpec>& specs);

// A new unfitted estimator for the spec; `seed_param` (if the estimator has random_state and the
// spec does not set it) becomes its random_state.
std::unique_ptr<Estimator> make_sub_estimator(const SubSpec& spec, const std::string& seed_param);

// Fits m on X, y: unweighted when w is null, else with the weights w (one per row of X), as
// scikit-learn's ensembles pass sample_weight on; a member without weight support throws naming
// `est` and the member.
void fit_sub_estimator(Estimator& m, const Tensor& X, const Tensor& y, const std::vector<float>* w,
                       const std::string& est);

// A fitted sub-estimator as {"estimator", "params", "state"} and back (load validates and names
// `prefix` on error).
void save_sub_estimator(const Estimator& est, nlohmann::json& out);
std::unique_ptr<Estimator> load_sub_estimator(const nlohmann::json& in, const std::string& prefix);

// The fitted sub-estimators as a JSON list of save_sub_estimator objects, and back (entry e is
// named `est`: state.estimators[e] on error; callers check the list's length).
nlohmann::json save_sub_estimators(const std::vector<std::unique_ptr<Estimator>>& models);
std::vector<std::unique_ptr<Estimator>> load_sub_estimators(const nlohmann::json& list, const std::string& est);

// Model-state checks of the ensembles, each naming `est`: every key present; state.n_features >= 1;
// state.classes with at least two labels when `classifier`.
void require_state_keys(const nlohmann::json& state, const std::string& est,
                        std::initializer_list<const char*> keys);
int64_t state_n_features(const nlohmann::json& state, const std::string& est);
std::vector<double> state_classes(const nlohmann::json& state, const std::string& est, bool classifier);
// What the last two read: state.n_features and state.classes (a JSON list, empty for a regressor).
void put_n_features_classes(nlohmann::json& state, int64_t n_features, const std::vector<double>& classes);

// Predict-time checks of an ensemble or a tree model: fitted, X a 2-d f32 tensor (NaN allowed) with
// n_features columns.
void check_fitted_X(const std::string& est, bool fitted, const Tensor& X, int64_t n_features);

// The label of the largest score of each row (scores [n, classes.size()], the first on ties).
Tensor labels_of_best_scores(const std::vector<double>& classes, const std::vector<float>& scores, int64_t n);

// A count parameter given as an integer (>= 1) or as a fraction in (0, 1] of `total` (text with '.',
// 'e' or 'E'; at least 1); throws naming `est` and `key`.
int64_t count_or_fraction(const std::string& est, const std::string& key, const std::string& v, int64_t total);

// The ensembles' shared hyper-parameters read from text, each throwing naming est: n_estimators
// (an integer >= 1) and learning_rate (a number > 0).
int64_t param_n_estimators(const std::string& est, const std::string& v);
double param_learning_rate(const std::string& est, const std::string& v);

// The rows `rows` (repeats allowed) and columns `cols` of host X [n, d] as a new f32 tensor.
Tensor gather_rows_cols(const Tensor& X, const std::vector<int64_t>& rows, const std::vector<int64_t>& cols);
// Entries `rows` of y (any dtype of check_Xy), same dtype.
Tensor gather_labels(const Tensor& y, const std::vector<int64_t>& rows);

// Columns of a sub-classifier's predict_proba [n, k_sub] (classes `sub`, ascending) placed into the
// full class list `all` ([n, k_all], missing classes 0), added into acc scaled by weight:
// acc[i, c] = acc[i, c] + weight * p[i, j] (contract add/mul, one fixed order).
void add_mapped_proba(const std::vector<double>& all, const std::vector<double>& sub, const Tensor& proba,
                      float weight, std::vector<float>& acc);

// A uniform double in [0, 1) from two Philox words (53 bits) of (seed, stream) at 2i, 2i + 1.
double uniform53(uint64_t seed, uint64_t stream, uint64_t i);

// m draws from rows 0..n-1 (n = w.size()) with probability w_i / sum(w), sorted. With replacement:
// draw i is the first row whose cumulative weight (float64 sums in row order) exceeds
// uniform53(seed, stream, i) sum(w) (the last row if none does). Without replacement (m at most the
// number of positive weights): the m rows of the largest keys log(u_i) / w_i (u_i = 1 -
// uniform53(seed, stream, i), binary64 log of ml/host_math.h; ties to the lower row), the
// Efraimidis-Spirakis sampling. Rows of weight 0 are never drawn.
std::vector<int64_t> draw_weighted_rows(uint64_t seed, uint64_t stream, const std::vector<double>& w, int64_t m,
                                        bool replace);

// Sorted distinct labels of y (f32 integral, i32, i64) as doubles.
std::vector<double> distinct_labels(const Tensor& y);

}  // namespace bl::ml
