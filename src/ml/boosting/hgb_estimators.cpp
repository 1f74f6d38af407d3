// hgb_estimators.cpp: hist_gradient_boosting_classifier / _regressor / _ranker (see bitlearn/ml/boosting.h).
//
// The ranker reads each row's query id from the feature column group_column of X (fit, predict and
// score alike; that column is no feature), as LightGBM's group_column: the generic fit(X, y) then
// carries the groups, and score(X, y) can give the mean NDCG@eval_at over X's queries. At fit the
// rows of a query must be contiguous (hgb_losses.h: query_starts). The ranker's early stopping holds
// out whole queries (hgb_losses.h: query_validation_mask) and scores the mean NDCG@eval_at, with
// sample weights the mean over queries weighted by each query's mean row weight (as LightGBM).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/estimator.h"
#include "contract/arith.h"
#include "core/error.h"
#include "contract/math.h"
#include "ml/boosting/boosting_estimators.h"
#include "ml/boosting/hgb_losses.h"
#include "ml/boosting/hist_gbm.h"
#include "ml/cluster/density_clustering.h"
#include "ml/ensemble/sub_estimators.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"
#include "io/json_number.h"

namespace bl::ml {

namespace {

const char* const kLossNames[] = {"squared_error", "log_loss", "log_loss", "absolute_error", "quantile",   "poisson",
                                  "gamma",         "tweedie",  "huber",    "lambdarank",     "pairwise"};

// The integers of a list parameter ("[0, 3]", "(1,-1)", "0,3": brackets and spaces ignored, ','
// between items). An empty list is allowed only where empty_ok; else the empty item is an error.
std::vector<int64_t> int_list(const std::string& est, const std::string& k, const std::string& v, bool empty_ok) {
  std::string t;
  for (char ch : v)
    if (ch != '[' && ch != ']' && ch != ' ' && ch != '(' && ch != ')') t += ch;
  std::vector<int64_t> out;
  if (t.empty() && empty_ok) return out;
  for (size_t at = 0; at <= t.size();) {
    const size_t comma = std::min(t.find(',', at), t.size());
    out.push_back(param_int(est, k, t.substr(at, comma - at)));
    at = comma + 1;
  }
  return out;
}

class HistGradientBoosting : public Estimator {
 public:
  explicit HistGradientBoosting(bool classifier, bool ranker = false) : classifier_(classifier), ranker_(ranker) {
    if (ranker_) p_.loss = BoostLoss::lambdarank;
  }

  std::string name() const override {
    if (ranker_) return "hist_gradient_boosting_ranker";
    return classifier_ ? "hist_gradient_boosting_classifier" : "hist_gradient_boosting_regressor";
  }

  Params get_params() const override {
    Params q;
    q["learning_rate"] = param_text(p_.learning_rate);
    q["max_iter"] = std::to_string(p_.max_iter);
    q["max_leaf_nodes"] = p_.max_leaf_nodes <= 0 ? "none" : std::to_string(p_.max_leaf_nodes);
    q["max_depth"] = p_.max_depth < 0 ? "none" : std::to_string(p_.max_depth);
    q["min_samples_leaf"] = std::to_string(p_.min_samples_leaf);
    q["min_child_weight"] = param_text(p_.min_child_weight);
    q["l2_regularization"] = param_text(p_.l2_regularization);
    q["l1_regularization"] = param_text(p_.l1_regularization);
    q["min_split_gain"] = param_text(p_.min_split_gain);
    q["max_bins"] = std::to_string(p_.max_bins);
    q["grow_policy"] = p_.symmetric ? "symmetric" : (p_.depthwise ? "depthwise" : "lossguide");
    if (p_.dart) {  // listed only for DART, so gbtree model files keep their bytes
      q["booster"] = "dart";
      q["rate_drop"] = param_text(p_.rate_drop);
      q["skip_drop"] = param_text(p_.skip_drop);
      q["one_drop"] = p_.one_drop ? "true" : "false";
      q["normalize_type"] = p_.normalize_forest ? "forest" : "tree";
    }
    q["subsample"] = param_text(p_.subsample);
    q["colsample_bytree"] = param_text(p_.colsample_bytree);
    q["random_state"] = std::to_string(p_.seed);
    // Listed only when set, so the model files of the defaults keep their bytes.
    if (!classifier_ && p_.loss != BoostLoss::squared_error) q["loss"] = kLossNames[static_cast<int>(p_.loss)];
    if (!classifier_ && p_.loss == BoostLoss::quantile) q["quantile"] = param_text(p_.quantile);
    if (!classifier_ && p_.loss == BoostLoss::tweedie) q["power"] = param_text(p_.power);
    if (!classifier_ && p_.loss == BoostLoss::huber) q["alpha"] = param_text(p_.alpha);
    if (ranker_) {
      q["group_column"] = group_column_ < 0 ? "none" : std::to_string(group_column_);
      q["eval_at"] = std::to_string(eval_at_);
      q["sigmoid"] = param_text(p_.sigmoid);
      if (p_.loss == BoostLoss::lambdarank) {
        q["lambdarank_truncation_level"] = std::to_string(p_.truncation_level);
        q["lambdarank_norm"] = p_.lambdarank_norm ? "true" : "false";
      }
    }
    if (!p_.monotonic.empty()) {
      std::string t;
      for (int8_t c : p_.monotonic) t += (t.empty() ? "" : ",") + std::to_string(static_cast<int>(c));
      q["monotonic_cst"] = t;
    }
    if (!interaction_.empty()) q["interaction_cst"] = interaction_;
    if (!p_.categorical.empty()) {
      std::string t;
      for (int32_t f : p_.categorical) t += (t.empty() ? "" : ",") + std::to_string(f);
      q["categorical_features"] = t;
    }
    if (early_stopping_ != "false") {
      q["early_stopping"] = early_stopping_;
      q["validation_fraction"] = validation_fraction_ > 0.0 ? param_text(validation_fraction_) : "none";
      q["n_iter_no_change"] = std::to_string(p_.n_iter_no_change);
      q["tol"] = param_text(p_.tol);
      q["scoring"] = ranker_ ? "ndcg" : "loss";
    }
    return q;
  }

  void set_params(const Params& params) override {
    const std::string est = name();
    for (const auto& kv : params) {
      // Named references, not a structured binding: C++17 lambdas cannot capture bindings (clang).
      const std::string& k = kv.first;
      const std::string& v = kv.second;
      auto positive = [&](double x) {
        BL_CHECK(x > 0.0, est, ": parameter ", k, "=", v, ": expected > 0");
        return x;
      };
      auto non_negative = [&](double x) {
        BL_CHECK(x >= 0.0, est, ": parameter ", k, "=", v, ": expected >= 0");
        return x;
      };
      auto fraction = [&](double x) {
        BL_CHECK(x > 0.0 && x <= 1.0, est, ": parameter ", k, "=", v, ": expected a value in (0, 1]");
        return x;
      };
      const bool none = v == "none" || v == "None";
      if (k == "learning_rate") p_.learning_rate = positive(param_double(est, k, v));
      else if (k == "max_iter") p_.max_iter = static_cast<int64_t>(positive(static_cast<double>(param_int(est, k, v))));
      else if (k == "max_leaf_nodes") {
        p_.max_leaf_nodes = none ? 0 : param_int(est, k, v);
        BL_CHECK(none || p_.max_leaf_nodes >= 2, est, ": parameter max_leaf_nodes=", v, ": expected >= 2 or none");
      } else if (k == "max_depth") {
        p_.max_depth = none ? -1 : param_int(est, k, v);
        BL_CHECK(none || p_.max_depth >= 1, est, ": parameter max_depth=", v, ": expected >= 1 or none");
      } else if (k == "min_samples_leaf") {
        p_.min_samples_leaf = param_int(est, k, v);
        BL_CHECK(p_.min_samples_leaf >= 1, est, ": parameter min_samples_leaf=", v, ": expected >= 1");
      } else if (k == "min_child_weight") p_.min_child_weight = non_negative(param_double(est, k, v));
      else if (k == "l2_regularization") p_.l2_regularization = non_negative(param_double(est, k, v));
      else if (k == "l1_regularization") p_.l1_regularization = non_negative(param_double(est, k, v));
      else if (k == "min_split_gain") p_.min_split_gain = non_negative(param_double(est, k, v));
      else if (k == "max_bins") {
        p_.max_bins = param_int(est, k, v);
        BL_CHECK(p_.max_bins >= 2 && p_.max_bins <= 255, est, ": parameter max_bins=", v, ": expected 2 .. 255");
      } else if (k == "grow_policy") {
        BL_CHECK(v == "depthwise" || v == "lossguide" || v == "symmetric", est, ": parameter grow_policy=", v,
                 ": expected depthwise, lossguide or symmetric");
        p_.depthwise = v == "depthwise";
        p_.symmetric = v == "symmetric";
      } else if (k == "booster") {
        BL_CHECK(v == "gbtree" || v == "dart", est, ": parameter booster=", v, ": expected gbtree or dart");
        p_.dart = v == "dart";
      } else if (k == "rate_drop") {
        p_.rate_drop = param_double(est, k, v);
        BL_CHECK(p_.rate_drop >= 0.0 && p_.rate_drop <= 1.0, est, ": parameter rate_drop=", v, ": expected [0, 1]");
      } else if (k == "skip_drop") {
        p_.skip_drop = param_double(est, k, v);
        BL_CHECK(p_.skip_drop >= 0.0 && p_.skip_drop <= 1.0, est, ": parameter skip_drop=", v, ": expected [0, 1]");
      } else if (k == "one_drop") {
        p_.one_drop = param_bool(est, k, v);
      } else if (k == "normalize_type") {
        BL_CHECK(v == "tree" || v == "forest", est, ": parameter normalize_type=", v, ": expected tree or forest");
        p_.normalize_forest = v == "forest";
      } else if (k == "subsample") p_.subsample = fraction(param_double(est, k, v));
      else if (k == "colsample_bytree") p_.colsample_bytree = fraction(param_double(est, k, v));
      else if (k == "random_state") p_.seed = static_cast<uint64_t>(param_int(est, k, v));
      else if (k == "loss") set_loss(v);
      else if (k == "quantile") {
        if (none) continue;
        p_.quantile = param_double(est, k, v);
        BL_CHECK(p_.quantile > 0.0 && p_.quantile < 1.0, est, ": parameter quantile=", v,
                 ": expected a value in (0, 1)");
      } else if (k == "power") {
        p_.power = param_double(est, k, v);
        BL_CHECK(p_.power >= 1.0 && p_.power < 2.0, est, ": parameter power=", v, ": expected a value in [1, 2)");
      } else if (k == "alpha") {
        p_.alpha = positive(param_double(est, k, v));
      } else if (ranker_ && k == "group_column") {
        group_column_ = none ? -1 : param_int(est, k, v);
        BL_CHECK(none || group_column_ >= 0, est, ": parameter group_column=", v, ": expected a column index >= 0");
      } else if (ranker_ && k == "eval_at") {
        eval_at_ = param_int(est, k, v);
        BL_CHECK(eval_at_ >= 1, est, ": parameter eval_at=", v, ": expected >= 1");
      } else if (ranker_ && k == "sigmoid") {
        p_.sigmoid = positive(param_double(est, k, v));
      } else if (ranker_ && k == "lambdarank_truncation_level") {
        p_.truncation_level = param_int(est, k, v);
        BL_CHECK(p_.truncation_level >= 1, est, ": parameter lambdarank_truncation_level=", v, ": expected >= 1");
      } else if (ranker_ && k == "lambdarank_norm") {
        p_.lambdarank_norm = param_bool(est, k, v);
      } else if (k == "monotonic_cst") {
        p_.monotonic.clear();
        if (none || v.empty()) continue;
        for (const int64_t c : int_list(est, k, v, false)) {
          BL_CHECK(c >= -1 && c <= 1, est, ": parameter monotonic_cst=", v, ": expected -1, 0 or 1 per feature");
          p_.monotonic.push_back(static_cast<int8_t>(c));
        }
      } else if (k == "categorical_features") {
        // Feature indices separated by ',' (brackets and spaces ignored); none or empty: no feature.
        p_.categorical.clear();
        if (none || v.empty()) continue;
        for (const int64_t f : int_list(est, k, v, true)) {
          BL_CHECK(f >= 0 && f < (int64_t{1} << 31), est, ": parameter categorical_features=", v,
                   ": feature indices must be >= 0");
          BL_CHECK(std::find(p_.categorical.begin(), p_.categorical.end(), f) == p_.categorical.end(), est,
                   ": parameter categorical_features=", v, ": feature ", f, " is listed twice");
          p_.categorical.push_back(static_cast<int32_t>(f));
        }
      } else if (k == "interaction_cst") {
        interaction_.clear();
        if (none || v.empty()) continue;
        if (v == "pairwise" || v == "no_interactions") {
          interaction_ = v;
          continue;
        }
        // Groups separated by ';', feature indices by ',' (brackets and spaces ignored).
        for (const std::string& g : split_groups(v)) {
          BL_CHECK(!g.empty(), est, ": parameter interaction_cst=", v, ": an empty group");
          size_t at = 0;
          while (at <= g.size()) {
            const size_t comma = std::min(g.find(',', at), g.size());
            BL_CHECK(param_int(est, k, g.substr(at, comma - at)) >= 0, est, ": parameter interaction_cst=", v,
                     ": feature indices must be >= 0");
            at = comma + 1;
          }
          interaction_ += (interaction_.empty() ? "" : ";") + g;
        }
      } else if (k == "early_stopping") {
        BL_CHECK(v == "auto" || v == "true" || v == "false" || v == "True" || v == "False", est,
                 ": parameter early_stopping=", v, ": expected auto, true or false");
        early_stopping_ = v == "auto" ? "auto" : (v == "true" || v == "True" ? "true" : "false");
      } else if (k == "validation_fraction") {
        validation_fraction_ = none ? 0.0 : param_double(est, k, v);
        BL_CHECK(none || (validation_fraction_ > 0.0 && validation_fraction_ < 1.0), est,
                 ": parameter validation_fraction=", v, ": expected a value in (0, 1) or none");
      } else if (k == "n_iter_no_change") {
        p_.n_iter_no_change = param_int(est, k, v);
        BL_CHECK(p_.n_iter_no_change >= 1, est, ": parameter n_iter_no_change=", v, ": expected >= 1");
      } else if (k == "tol") p_.tol = non_negative(param_double(est, k, v));
      else if (k == "scoring" && ranker_) {
        // The ranker's one early-stopping score is the mean NDCG@eval_at; loss (scikit-learn's
        // default spelling) and none name it too.
        BL_CHECK(v == "ndcg" || v == "loss" || none, est, ": parameter scoring=", v,
                 ": expected ndcg (the mean NDCG@eval_at)");
      } else if (k == "scoring") {
        BL_CHECK(v == "loss" || none, est, ": parameter scoring=", v, ": expected loss");
      } else throw Error(est + ": unknown parameter '" + k + "'");
    }
  }

  bool fitted() const override { return !model_.trees.empty(); }

  Estimator& fit(const Tensor& X, const Tensor& y) override { return fit_rows(X, y, nullptr); }
  bool supports_sample_weight() const override { return true; }

 protected:
  Estimator& fit_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) override {
    return fit_rows(X, y, w.data());
  }

 public:
  Estimator& fit_rows(const Tensor& X, const Tensor& y, const float* weight) {
    const std::string est = name();
    check_Xy(est, X, y, /*allow_nan_X=*/true);
    if (ranker_) return fit_ranker(X, y, weight);
    Tensor hx = host_f32(X);
    BoostParams bp = p_;
    bp.use_cuda = X.device().is_cuda();
    LabelEncoding enc;
    std::vector<float> targets;
    if (classifier_) {
      enc = encode_labels(est, y);
      bp.n_classes = static_cast<int64_t>(enc.classes.size());
      bp.loss = bp.n_classes == 2 ? BoostLoss::logistic : BoostLoss::softmax;
    } else {
      targets = regression_targets(y);
      check_boost_targets(bp, targets.data(), hx.dim(0), est);
    }
    BL_CHECK(p_.monotonic.empty() || static_cast<int64_t>(p_.monotonic.size()) == hx.dim(1), est,
             ": monotonic_cst has ", p_.monotonic.size(), " entries, expected one per feature (", hx.dim(1), ")");
    const int64_t n = hx.dim(0), d = hx.dim(1);
    bp.interaction = interaction_groups(d);
    bp.early_stopping = early_stopping_ == "true" || (early_stopping_ == "auto" && n > 10000);
    if (bp.early_stopping && validation_fraction_ > 0.0) {
      // Held-out rows (hgb_losses.h: seeded, stratified for classifiers); binning and trees see the rest.
      // Category codes are checked first, so that an error names the row of X.
      check_category_codes(bp, hx.data<float>(), n, d, "row");
      const std::vector<char> held = validation_mask(n, classifier_ ? enc.y_index.data() : nullptr, bp.n_classes,
                                                     validation_fraction_, p_.seed);
      Split tr, va;
      const float* xs = hx.data<float>();
      for (int64_t i = 0; i < n; ++i) {
        Split& part = held[i] ? va : tr;
        part.x.insert(part.x.end(), xs + i * d, xs + (i + 1) * d);
        if (classifier_) part.c.push_back(enc.y_index[i]);
        else part.y.push_back(targets[i]);
        if (weight) part.w.push_back(weight[i]);
      }
      const int64_t n_tr = static_cast<int64_t>(tr.x.size()) / d;
      BoostValidation val;
      val.X = va.x.data();
      val.n = static_cast<int64_t>(va.x.size()) / d;
      val.y_value = va.y.data();
      val.y_class = va.c.data();
      val.weight = weight ? va.w.data() : nullptr;
      model_ = fit_boosting(tr.x.data(), n_tr, d, tr.y.data(), tr.c.data(), bp, weight ? tr.w.data() : nullptr, &val);
    } else {
      model_ = fit_boosting(hx.data<float>(), n, d, targets.data(), enc.y_index.data(), bp, weight);
    }
    classes_ = enc.classes;
    n_features_ = hx.dim(1);
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    std::vector<float> raw = raw_scores(X);
    if (ranker_) return Tensor::from_vector(raw, {X.dim(0)});  // ranking scores (higher: more relevant)
    const int64_t n = X.dim(0);
    if (!classifier_ && boost_log_link(p_.loss)) {
      for (float& r : raw) r = bl::exp(r);  // log link: the prediction is exp(raw)
    }
    if (!classifier_) return Tensor::from_vector(raw, {n});
    const int64_t K = model_.n_groups;
    std::vector<int32_t> idx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      idx[i] = K == 1 ? (raw[i] > 0.0f ? 1 : 0) : argmax_row(&raw[i * K], K);
    }
    return decode_labels(classes_, idx);
  }

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(classifier_, name(), ": predict_proba is not supported (", ranker_ ? "a ranker" : "a regressor", ")");
    std::vector<float> raw = raw_scores(X);
    const int64_t n = X.dim(0), K = model_.n_groups;
    raw_to_probability(raw, n, K);
    return probability_columns(raw, n, K);
  }

  double score(const Tensor& X, const Tensor& y) const override {
    if (ranker_) return mean_ndcg(X, y);
    return classifier_ ? accuracy_score(y, predict(X)) : r2_score(y, predict(X));
  }

 protected:
  // The ranker: the NDCG mean over queries weighted by each query's mean row weight (the rule of its
  // weighted early stopping); the classifier and regressor: weighted accuracy and R^2.
  double score_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) const override {
    if (ranker_) return mean_ndcg(X, y, w.data());
    return classifier_ ? accuracy_score(y, predict(X), w) : r2_score(y, predict(X), w);
  }

 public:

  void save_state(nlohmann::json& state) const override {
    put_n_features_classes(state, n_features_, classes_);
    save_boost_model(model_, state);
    if (!model_.train_score.empty()) {  // early stopping: the iterations run and their scores
      state["n_iter"] = static_cast<int64_t>(model_.trees.size()) / model_.n_groups;
      state["train_score"] = density_detail::f64_to_hex(model_.train_score);
      if (!model_.validation_score.empty()) {
        state["validation_score"] = density_detail::f64_to_hex(model_.validation_score);
      }
    }
  }

  void load_state(const nlohmann::json& state) override {
    const std::string est = name();
    BL_CHECK(state.contains("n_features") && state.contains("classes"), est,
             ": model state needs n_features and classes");
    n_features_ = io::json_integer<int64_t>(state["n_features"], name() + ": state.n_features");
    BL_CHECK(n_features_ >= 1, est, ": state.n_features must be >= 1");
    classes_ = state["classes"].get<std::vector<double>>();
    model_ = load_boost_model(state, ranker_ ? n_features_ - 1 : n_features_, est);
    if (state.contains("train_score")) {
      const int64_t n_scores = static_cast<int64_t>(model_.trees.size()) / model_.n_groups + 1;
      model_.train_score = density_detail::f64_from_state(state, "train_score", n_scores, est);
      if (state.contains("validation_score")) {
        model_.validation_score = density_detail::f64_from_state(state, "validation_score", n_scores, est);
      }
    }
    if (classifier_) {
      BL_CHECK(classes_.size() >= 2, est, ": state.classes needs >= 2 labels");
      const int64_t want = classes_.size() == 2 ? 1 : static_cast<int64_t>(classes_.size());
      BL_CHECK(model_.n_groups == want, est, ": state.n_groups is ", model_.n_groups, ", expected ", want);
    } else {
      BL_CHECK(model_.n_groups == 1, est, ": state.n_groups must be 1 for a regressor");
    }
    BL_CHECK(!ranker_ || (group_column_ >= 0 && group_column_ < n_features_ && n_features_ >= 2), est,
             ": state.group_column must name one of the ", n_features_, " columns");
  }

 private:
  struct Split {  // one side of the early-stopping split
    std::vector<float> x, y, w;
    std::vector<int32_t> c;
  };

  // interaction_cst text: "a,b;c" groups with brackets, parentheses and spaces removed.
  static std::vector<std::string> split_groups(const std::string& v) {
    std::string t;
    int depth = 0;
    for (char ch : v) {  // "[[0, 1], [2]]" (Python's list text) reads as "0,1;2"
      if (ch == '[' || ch == '(') ++depth;
      if (ch == ']' || ch == ')') --depth;
      if (ch == ',' && depth == 1 && !t.empty() && t.back() != ';' && v.find('[') != std::string::npos &&
          v.find('[', v.find('[') + 1) != std::string::npos) {
        t += ';';
        continue;
      }
      if (ch != '[' && ch != ']' && ch != '(' && ch != ')' && ch != ' ') t += ch;
    }
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= t.size()) {
      const size_t semi = std::min(t.find(';', at), t.size());
      out.push_back(t.substr(at, semi - at));
      at = semi + 1;
    }
    return out;
  }

  // The interaction groups for d features (empty: no constraint).
  std::vector<std::vector<int32_t>> interaction_groups(int64_t d) const {
    std::vector<std::vector<int32_t>> groups;
    if (interaction_ == "no_interactions") {
      for (int64_t f = 0; f < d; ++f) groups.push_back({static_cast<int32_t>(f)});
    } else if (interaction_ == "pairwise") {
      for (int64_t a = 0; a < d; ++a) {
        for (int64_t b = a + 1; b < d; ++b) groups.push_back({static_cast<int32_t>(a), static_cast<int32_t>(b)});
      }
    } else if (!interaction_.empty()) {
      for (const std::string& g : split_groups(interaction_)) {
        groups.emplace_back();
        size_t at = 0;
        while (at <= g.size()) {
          const size_t comma = std::min(g.find(',', at), g.size());
          const int64_t f = param_int(name(), "interaction_cst", g.substr(at, comma - at));
          BL_CHECK(f < d, name(), ": interaction_cst names feature ", f, ", but X has ", d, " features");
          groups.back().push_back(static_cast<int32_t>(f));
          at = comma + 1;
        }
      }
    }
    return groups;
  }

  void set_loss(const std::string& v) {
    const std::string est = name();
    if (ranker_) {
      BL_CHECK(v == "lambdarank" || v == "pairwise", est, ": parameter loss=", v, ": expected lambdarank or pairwise");
      p_.loss = v == "lambdarank" ? BoostLoss::lambdarank : BoostLoss::pairwise;
      return;
    }
    if (classifier_) {
      BL_CHECK(v == "log_loss" || v == "auto", est, ": parameter loss=", v, ": expected log_loss");
      return;
    }
    for (int l = 0; l < 9; ++l) {
      const auto loss = static_cast<BoostLoss>(l);
      if (v == kLossNames[l] && loss != BoostLoss::logistic && loss != BoostLoss::softmax) {
        p_.loss = loss;
        return;
      }
    }
    throw Error(est + ": parameter loss=" + v +
                ": expected squared_error, absolute_error, quantile, poisson, gamma, tweedie or huber");
  }

  std::vector<float> raw_scores(const Tensor& X) const {
    check_fitted_X(name(), fitted(), X, n_features_);
    Tensor hx = host_f32(X);
    if (ranker_) {
      const std::vector<float> f = without_group_column(hx);
      return boosting_raw(model_, f.data(), hx.dim(0), hx.dim(1) - 1);
    }
    return boosting_raw(model_, hx.data<float>(), hx.dim(0), hx.dim(1));
  }

  // X's rows without the group column (row-major [n, d - 1]).
  std::vector<float> without_group_column(const Tensor& hx) const {
    const int64_t n = hx.dim(0), d = hx.dim(1);
    const float* xs = hx.data<float>();
    std::vector<float> out(static_cast<size_t>(n * (d - 1)));
    for (int64_t i = 0; i < n; ++i) {
      float* o = out.data() + i * (d - 1);
      for (int64_t j = 0; j < d; ++j) {
        if (j != group_column_) *o++ = xs[i * d + j];
      }
    }
    return out;
  }

  void check_group_column(const std::string& est, int64_t d) const {
    BL_CHECK(group_column_ >= 0, est, ": needs the query id column: set group_column (the index of the column of X "
             "holding each row's query id; bitlearn fit --group COLUMN)");
    BL_CHECK(group_column_ < d, est, ": group_column=", group_column_, " but X has ", d, " columns");
    BL_CHECK(d >= 2, est, ": X needs a feature column besides the query id column");
  }

  Estimator& fit_ranker(const Tensor& X, const Tensor& y, const float* weight) {
    const std::string est = name();
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0), d = hx.dim(1);
    check_group_column(est, d);
    std::vector<float> rel = regression_targets(y);
    check_relevance(rel.data(), n, est);
    BoostParams bp = p_;
    bp.use_cuda = X.device().is_cuda();
    bp.query_start = query_starts(hx.data<float>() + group_column_, n, d, 2, est);
    BL_CHECK(p_.monotonic.empty() || static_cast<int64_t>(p_.monotonic.size()) == d - 1, est, ": monotonic_cst has ",
             p_.monotonic.size(), " entries, expected one per feature (", d - 1, ", the query id column excluded)");
    bp.interaction = interaction_groups(d - 1);
    bp.early_stopping = early_stopping_ == "true" || (early_stopping_ == "auto" && n > 10000);
    bp.ndcg_at = eval_at_;
    BL_CHECK(!(bp.early_stopping && bp.dart), est, ": early_stopping is not supported with booster=dart");
    const std::vector<float> f = without_group_column(hx);
    if (bp.early_stopping && validation_fraction_ > 0.0) {
      // Held-out whole queries (seeded); binning and trees see the rest, both sides in row order.
      // Category codes are checked first, so that an error names the row of X.
      check_category_codes(bp, f.data(), n, d - 1, "row");
      const std::vector<char> held = query_validation_mask(bp.query_start, validation_fraction_, p_.seed, est);
      const int64_t df = d - 1;
      Split tr, va;
      std::vector<int64_t> tr_q{0}, va_q{0};
      for (size_t q = 0; q + 1 < bp.query_start.size(); ++q) {
        const int64_t b = bp.query_start[q], e = bp.query_start[q + 1];
        Split& part = held[b] ? va : tr;
        part.x.insert(part.x.end(), f.begin() + b * df, f.begin() + e * df);
        part.y.insert(part.y.end(), rel.begin() + b, rel.begin() + e);
        if (weight) part.w.insert(part.w.end(), weight + b, weight + e);
        std::vector<int64_t>& qs = held[b] ? va_q : tr_q;
        qs.push_back(qs.back() + (e - b));
      }
      if (weight) {
        // Both NDCGs are weighted by the queries' mean row weights: each side needs a positive one.
        bool any_va = false, any_tr = false;
        for (float v : va.w) any_va = any_va || v > 0.0f;
        for (float v : tr.w) any_tr = any_tr || v > 0.0f;
        BL_CHECK(any_va && any_tr, est, ": early stopping: every ", any_va ? "training" : "held-out",
                 " query (validation_fraction=", validation_fraction_, ", random_state=", p_.seed,
                 ") has sample weight 0, so the weighted NDCG of those queries is undefined; use another "
                 "random_state or validation_fraction=none");
      }
      BoostValidation val;
      val.X = va.x.data();
      val.n = va_q.back();
      val.y_value = va.y.data();
      val.weight = weight ? va.w.data() : nullptr;
      val.query_start = std::move(va_q);
      bp.query_start = std::move(tr_q);
      model_ = fit_boosting(tr.x.data(), bp.query_start.back(), df, tr.y.data(), nullptr, bp,
                            weight ? tr.w.data() : nullptr, &val);
    } else {
      model_ = fit_boosting(f.data(), n, d - 1, rel.data(), nullptr, bp, weight);
    }
    classes_.clear();
    n_features_ = d;
    return *this;
  }

  // The mean NDCG@eval_at over the queries of X's group column (contiguous runs of equal ids, as at
  // fit; a single-row query counts, with NDCG 1), weighted by the queries' mean row weights when
  // weight (one per row) is given.
  double mean_ndcg(const Tensor& X, const Tensor& y, const float* weight = nullptr) const {
    const std::string est = name();
    std::vector<float> raw = raw_scores(X);
    std::vector<float> rel = regression_targets(y);
    BL_CHECK(static_cast<int64_t>(rel.size()) == X.dim(0), est, ": score: y has ", rel.size(), " rows, X has ",
             X.dim(0));
    check_relevance(rel.data(), X.dim(0), est);
    Tensor hx = host_f32(X);
    const std::vector<int64_t> qs = query_starts(hx.data<float>() + group_column_, hx.dim(0), hx.dim(1), 1, est);
    return mean_query_ndcg(raw.data(), rel.data(), qs, eval_at_, weight);
  }

  bool classifier_;
  bool ranker_;
  int64_t group_column_ = -1;  // ranker: the column of X holding the query id (-1: not set)
  int64_t eval_at_ = 5;        // ranker: score() is the mean NDCG at this cut-off
  BoostParams p_;
  std::string early_stopping_ = "false";
  std::string interaction_;  // interaction_cst, normalized ("" none)
  double validation_fraction_ = 0.1;  // 0: none (the training rows score)
  BoostModel model_;
  std::vector<double> classes_;
  int64_t n_features_ = 0;
};

}  // namespace

void save_boost_model(const BoostModel& model, nlohmann::json& state) {
  state["n_groups"] = model.n_groups;
  state["base"] = f32_to_hex(model.base);
  nlohmann::json trees = nlohmann::json::array();
  for (const Tree& t : model.trees) {
    nlohmann::json j;
    tree_to_json(t, j);
    trees.push_back(j);
  }
  state["trees"] = trees;
}

BoostModel load_boost_model(const nlohmann::json& state, int64_t n_features, const std::string& est) {
  BL_CHECK(state.contains("n_groups") && state.contains("base") && state.contains("trees"), est,
           ": model state needs n_groups, base and trees");
  BoostModel m;
  m.n_groups = io::json_integer<int64_t>(state["n_groups"], est + ": state.n_groups");
  BL_CHECK(m.n_groups >= 1, est, ": state.n_groups must be >= 1");
  m.base = f32_from_hex(state["base"].get<std::string>(), "state.base");
  BL_CHECK(static_cast<int64_t>(m.base.size()) == m.n_groups, est, ": state.base holds ", m.base.size(),
           " values, expected n_groups = ", m.n_groups);
  const auto& js = state["trees"];
  BL_CHECK(js.is_array() && !js.empty() && js.size() % static_cast<size_t>(m.n_groups) == 0, est,
           ": state.trees must be a non-empty list, a multiple of n_groups long");
  for (size_t i = 0; i < js.size(); ++i) {
    m.trees.push_back(tree_from_json(js[i], n_features, est + ": state.trees[" + std::to_string(i) + "]"));
    BL_CHECK(m.trees.back().n_values == 1, est, ": state.trees[", i, "].n_values must be 1");
  }
  return m;
}

std::unique_ptr<Estimator> make_hist_gradient_boosting_classifier() {
  return std::make_unique<HistGradientBoosting>(true);
}
std::unique_ptr<Estimator> make_hist_gradient_boosting_regressor() {
  return std::make_unique<HistGradientBoosting>(false);
}
std::unique_ptr<Estimator> make_hist_gradient_boosting_ranker() {
  return std::make_unique<HistGradientBoosting>(false, true);
}

}  // namespace bl::ml
