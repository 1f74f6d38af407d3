// radius_neighbors.cpp: radius_neighbors_classifier and radius_neighbors_regressor (exact brute
// force, scikit-learn's RadiusNeighborsClassifier / RadiusNeighborsRegressor).
//
// Neighbors. The squared distances D[i, j] = relu((-2 q_i.t_j + |q_i|^2) + |t_j|^2) of
// ml/cluster/distances.h are formed for blocks of queries on the queries' device (contract GEMM,
// the same bits everywhere) and copied to the host, where training row j is a neighbor of query i
// when D[i, j] <= r2. r2 is the exact square of the radius (a binary64 parameter) rounded once to
// binary32; rows exactly on the boundary are neighbors. Neighbors are kept in ascending training
// index. The algorithm and leaf_size parameters are accepted (scikit-learn's); the radius search is
// always this brute force (the result would not differ).
//
// Weights. uniform: 1 each. distance: 1 / sqrt(D) (contract binary32 div and sqrt); when any
// neighbor of a query is at distance 0, those neighbors alone count, with weight 1.
//
// Classifier. The votes of each class and their total are binary64 sums of the binary32 weights in
// ascending training index; predict_proba is votes / total rounded once to binary32, predict its
// argmax (the lowest class on ties). A query without a neighbor: outlier_label=none throws a
// bl::Error naming the row (as scikit-learn raises); a number (or most_frequent: the class with
// the most training rows, the lowest on ties) is its label, with probability 1 on that class when
// it is one of the classes and all zero otherwise.
//
// Regressor. sum(w * y) / sum(w), both binary64 sums in ascending training index (w * y is exact
// in binary64), rounded once to binary32; a query without a neighbor predicts NaN (scikit-learn
// warns and predicts NaN).
#include <algorithm>
#include <cmath>
#include <limits>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/cluster/distances.h"
#include "ml/linear/common.h"
#include "ml/neighbors/metric_neighbors.h"
#include "ml/neighbors/training_rows.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

// The exact square of r rounded once to binary32 (r * r = p + e exactly; p alone would round
// twice where it falls on a binary32 midpoint).
float square_to_f32(double r) {
  const double p = r * r, e = std::fma(r, r, -p);
  float f = static_cast<float>(p);
  if (!std::isfinite(f) || static_cast<double>(f) == p || e == 0.0) return f;
  const float g = std::nextafter(f, static_cast<double>(f) < p ? std::numeric_limits<float>::infinity()
                                                               : -std::numeric_limits<float>::infinity());
  const double df = f, dg = g;
  // p halfway between f and g: the true square lies on the side of e.
  if (std::fabs(p - df) == std::fabs(dg - p)) f = (e > 0.0) == (dg > df) ? g : f;
  return f;
}

// The neighbors of each query: training indices and squared distances in ascending index.
struct RadiusLists {
  std::vector<int64_t> start;  // [m + 1] offsets into idx / dist
  std::vector<int64_t> idx;
  std::vector<float> dist;
};

class RadiusNeighbors final : public lin::ParamEstimator {
 public:
  explicit RadiusNeighbors(bool classifier)
      : lin::ParamEstimator(classifier ? "radius_neighbors_classifier" : "radius_neighbors_regressor",
                            with_search_specs({{"radius", K::number, "1", 0.0},
                                               {"weights", K::choice, "uniform", 0, {"uniform", "distance"}}})),
        classifier_(classifier) {}

  Params get_params() const override {
    Params p = params_.all();
    if (classifier_) p["outlier_label"] = outlier_label_;
    return p;
  }

  void set_params(const Params& params) override {
    set_params_with_extra(
        params, classifier_ ? "outlier_label" : nullptr, &outlier_label_,
        [&](const std::string& text) {
          if (text == "none" || text == "most_frequent") return text;
          const double v = param_double(name_, "outlier_label", text);
          BL_CHECK(std::isfinite(v), name_, ": parameter outlier_label=", text,
                   ": expected none, most_frequent or a finite number");
          return param_text(v);
        },
        [&](const lin::ParamSet& next) {
          const double r = next.number("radius");
          BL_CHECK(r > 0.0, name_, ": parameter radius=", next.text("radius"), ": expected a number > 0");
        });
  }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    rows_.fit(name_, X, y, target_kind());
    if (classifier_) {
      outlier_class_.clear();
      if (outlier_label_ == "most_frequent") {
        std::vector<int64_t> count(rows_.classes.size(), 0);
        for (float c : rows_.target) ++count[static_cast<int64_t>(c)];
        outlier_class_ = {rows_.classes[std::max_element(count.begin(), count.end()) - count.begin()]};
      } else if (outlier_label_ != "none") {
        outlier_class_ = {static_cast<float>(param_double(name_, "outlier_label", outlier_label_))};
      }
    }
    fitted_ = true;
    return *this;
  }

  // The training rows within the radius of each query of X, in blocks of queries on X's device.
  RadiusLists radius_neighbors(const Tensor& X) const {
    check_predict_input(X, rows_.d);
    const int64_t m = X.dim(0);
    const float r2 = square_to_f32(params_.number("radius"));
    Tensor T = Tensor::from_vector(rows_.X, {rows_.n, rows_.d}, X.device());
    const std::vector<float> tt = row_sq_norms(T).to(Device::cpu()).contiguous().to_vector<float>();
    Tensor Q = X.contiguous();
    const int64_t block = std::max<int64_t>(1, std::min<int64_t>(1024, (int64_t{1} << 24) / rows_.n));
    RadiusLists out;
    out.start.assign(1, 0);
    for (int64_t b = 0; b < m; b += block) {
      const int64_t e = std::min(m, b + block);
      Tensor Qb = Q.slice(0, b, e).contiguous();
      // The GEMM of the block on the device; sq_distances' elementwise steps on the host, each the
      // same IEEE operation: relu((-2 * dot + |q|^2) + |t|^2).
      Tensor G = bl::matmul(Qb, T, false, true).to(Device::cpu()).contiguous();
      const std::vector<float> qq = row_sq_norms(Qb).to(Device::cpu()).contiguous().to_vector<float>();
      const float* g = G.data<float>();
      for (int64_t i = 0; i < e - b; ++i) {
        for (int64_t j = 0; j < rows_.n; ++j) {
          float dd = bl::add(bl::add(bl::mul(g[i * rows_.n + j], -2.0f), qq[i]), tt[j]);
          dd = dd > 0.0f || bl::is_nan(dd) ? dd : 0.0f;  // the relu op: NaN stays NaN
          if (dd <= r2) {
            out.idx.push_back(j);
            out.dist.push_back(dd);
          }
        }
        out.start.push_back(static_cast<int64_t>(out.idx.size()));
      }
      report_progress(name_ + " neighbors", e, m);
    }
    return out;
  }

  // The weight of each listed neighbor (1, or 1 / distance; exact matches only when any).
  std::vector<float> weights(const RadiusLists& l) const {
    std::vector<float> w(l.dist.size(), 1.0f);
    if (params_.text("weights") == "uniform") return w;
    for (size_t i = 0; i + 1 < l.start.size(); ++i) {
      bool exact = false;
      for (int64_t j = l.start[i]; j < l.start[i + 1]; ++j) exact = exact || l.dist[j] == 0.0f;
      for (int64_t j = l.start[i]; j < l.start[i + 1]; ++j) {
        const float dd = l.dist[j];
        w[j] = exact ? (dd == 0.0f ? 1.0f : 0.0f) : bl::div(1.0f, bl::sqrt(dd));
      }
    }
    return w;
  }

  // Probabilities [m, c] (host) and whether each query had no neighbor.
  std::vector<float> proba_host(const Tensor& X, std::vector<uint8_t>& outlier) const {
    const int64_t m = X.dim(0), c = static_cast<int64_t>(rows_.classes.size());
    RadiusLists l = radius_neighbors(X);
    std::vector<float> w = weights(l);
    std::vector<float> p(static_cast<size_t>(m * c), 0.0f);
    outlier.assign(static_cast<size_t>(m), 0);
    std::vector<double> votes(static_cast<size_t>(c));
    for (int64_t i = 0; i < m; ++i) {
      if (l.start[i] == l.start[i + 1]) {
        BL_CHECK(!outlier_class_.empty(), name_, ": no training row within radius ", params_.text("radius"),
                 " of query row ", i, " (set outlier_label, or a larger radius)");
        outlier[i] = 1;
        const auto at = std::find(rows_.classes.begin(), rows_.classes.end(), outlier_class_[0]);
        if (at != rows_.classes.end()) p[i * c + (at - rows_.classes.begin())] = 1.0f;
        continue;
      }
      std::fill(votes.begin(), votes.end(), 0.0);
      double total = 0.0;
      for (int64_t j = l.start[i]; j < l.start[i + 1]; ++j) {
        votes[static_cast<int64_t>(rows_.target[l.idx[j]])] += w[j];
        total += w[j];
      }
      for (int64_t k = 0; k < c; ++k) p[i * c + k] = static_cast<float>(votes[k] / total);
    }
    return p;
  }

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(classifier_, name_, ": predict_proba is not supported");
    std::vector<uint8_t> outlier;
    std::vector<float> p = proba_host(X, outlier);
    return Tensor::from_vector(p, {X.dim(0), static_cast<int64_t>(rows_.classes.size())}, X.device());
  }

  Tensor predict(const Tensor& X) const override {
    const int64_t m = X.dim(0);
    if (classifier_) {
      const int64_t c = static_cast<int64_t>(rows_.classes.size());
      std::vector<uint8_t> outlier;
      std::vector<float> p = proba_host(X, outlier);
      // The outlier label is class index c of the extended list (it may be no training class).
      std::vector<float> labels = rows_.classes;
      labels.push_back(outlier_class_.empty() ? 0.0f : outlier_class_[0]);
      std::vector<int64_t> index(static_cast<size_t>(m));
      for (int64_t i = 0; i < m; ++i) {
        int64_t best = 0;
        bool zero = true;
        for (int64_t k = 0; k < c; ++k) {
          zero = zero && p[i * c + k] == 0.0f;
          if (p[i * c + k] > p[i * c + best]) best = k;
        }
        index[i] = outlier[i] && zero ? c : best;
      }
      return lin::labels_from_index(labels, Tensor::from_vector(index, {m}), rows_.label_dtype, X.device());
    }
    RadiusLists l = radius_neighbors(X);
    std::vector<float> w = weights(l), out(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
      if (l.start[i] == l.start[i + 1]) {
        out[i] = std::numeric_limits<float>::quiet_NaN();
        continue;
      }
      double s = 0.0, total = 0.0;
      for (int64_t j = l.start[i]; j < l.start[i + 1]; ++j) {
        s += static_cast<double>(w[j]) * static_cast<double>(rows_.target[l.idx[j]]);
        total += w[j];
      }
      out[i] = static_cast<float>(s / total);
    }
    return Tensor::from_vector(out, {m}, X.device());
  }

  double score(const Tensor& X, const Tensor& y) const override {
    return classifier_ ? lin::accuracy_score(y, predict(X)) : lin::r2_score(y, predict(X));
  }

  void save_state(nlohmann::json& state) const override {
    rows_.save(state, target_kind());
    if (classifier_) lin::put_f32(state, "outlier_label", outlier_class_);
  }

  void load_state(const nlohmann::json& state) override {
    rows_.load(state, name_, target_kind());
    if (classifier_) {
      outlier_class_ = lin::get_f32(state, "outlier_label", -1, name_);
      BL_CHECK(outlier_class_.size() <= 1, name_, ": model state: outlier_label holds more than one value");
      BL_CHECK(outlier_class_.empty() == (outlier_label_ == "none"), name_, ": model state: outlier_label ",
               outlier_class_.empty() ? "is empty" : "holds a label", " but the parameter outlier_label is ",
               outlier_label_);
    }
    fitted_ = true;
  }

 private:
  bool classifier_;
  std::string outlier_label_ = "none";       // the parameter: none, most_frequent or a number
  std::vector<float> outlier_class_;         // the label of queries without neighbors (empty: error)
  TrainingRows rows_;

  TrainingRows::Target target_kind() const {
    return classifier_ ? TrainingRows::Target::classes : TrainingRows::Target::values;
  }
};

}  // namespace

std::unique_ptr<Estimator> make_radius_neighbors_classifier() { return std::make_unique<RadiusNeighbors>(true); }
std::unique_ptr<Estimator> make_radius_neighbors_regressor() { return std::make_unique<RadiusNeighbors>(false); }

}  // namespace bl::ml
