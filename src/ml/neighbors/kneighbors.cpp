// kneighbors.cpp: kneighbors_classifier and kneighbors_regressor (exact brute force), and
// nearest_neighbors (scikit-learn's NearestNeighbors: the neighbors alone).
//
// The n_neighbors nearest training rows of each query under the metric parameter (default
// minkowski with p = 2, the euclidean squared distances D = relu((-2 q.t + |q|^2) + |t|^2) of
// ml/cluster/distances.h; manhattan, chebyshev, minkowski, cosine and haversine in binary64 on the
// host; equal distances to the lowest training index) come from metric_neighbors.h. Votes
// (classifier: most votes, lowest class on ties; weights=distance: 1 / distance, exact matches
// alone when any) and means (regressor, neighbors in distance order) are taken on the host in
// binary32 in a fixed order. algorithm / leaf_size choose the search (brute force or the exact
// kd-tree of kd_tree.h: the same bits, see metric_neighbors.h). nearest_neighbors: predict gives the neighbor indices [m, k] (i64,
// nearest first), transform their distances [m, k] (f32).
#include <algorithm>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "kernels/matmul_packed.h"
#include "ml/cluster/distances.h"
#include "ml/linear/common.h"
#include "ml/neighbors/metric_neighbors.h"
#include "ml/neighbors/training_rows.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

using Target = TrainingRows::Target;

// The parameters and the stored rows of the k-nearest-neighbor estimators.
class NeighborsBase : public lin::ParamEstimator {
 public:
  NeighborsBase(const std::string& name, Target target, std::vector<ParamSpec> extra)
      : lin::ParamEstimator(name, with_metric(std::move(extra))), target_kind_(target) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    rows_.fit(name_, X, y, target_kind_);
    const int64_t k = params_.integer("n_neighbors");
    BL_CHECK(k <= rows_.n, name_, ": n_neighbors=", k, " is more than the ", rows_.n, " training rows");
    metric();
    fitted_ = true;
    return *this;
  }

  void save_state(nlohmann::json& state) const override { rows_.save(state, target_kind_); }
  void load_state(const nlohmann::json& state) override {
    rows_.load(state, name_, target_kind_);
    fitted_ = true;
  }

 protected:
  static std::vector<ParamSpec> with_metric(std::vector<ParamSpec> extra) {
    extra.push_back({"metric", K::choice, "minkowski", 0, metric_names()});
    extra.push_back({"n_neighbors", K::integer, "5", 1});
    extra.push_back({"p", K::number, "2", 1.0});
    return with_search_specs(std::move(extra));
  }

  Metric metric() const { return metric_of(name_, params_.text("metric"), params_.number("p"), rows_.d); }

  // Neighbor indices [m, k] (host, nearest first) and their distances (not squared).
  void kneighbors(const Tensor& X, std::vector<int64_t>& idx, std::vector<float>& dist) const {
    check_predict_input(X, rows_.d);
    NeighborLists lists = metric_neighbors(X, rows_.X, rows_.n, rows_.d, params_.integer("n_neighbors"), metric(),
                                           params_.number("p"), name_, search_of(params_));
    idx = std::move(lists.idx);
    dist = std::move(lists.dist);
  }

  Target target_kind_;
  TrainingRows rows_;
};

class KNeighbors final : public NeighborsBase {
 public:
  explicit KNeighbors(bool classifier)
      : NeighborsBase(classifier ? "kneighbors_classifier" : "kneighbors_regressor",
                      classifier ? Target::classes : Target::values,
                      {{"weights", K::choice, "uniform", 0, {"uniform", "distance"}}}),
        classifier_(classifier) {}

  // Per query, the weight of each neighbor (1, or 1 / distance; exact matches only when any).
  std::vector<float> weights(const std::vector<float>& dist, int64_t m, int64_t k) const {
    std::vector<float> w(dist.size(), 1.0f);
    if (params_.text("weights") == "uniform") return w;
    for (int64_t i = 0; i < m; ++i) {
      bool exact = false;
      for (int64_t j = 0; j < k; ++j) exact = exact || dist[i * k + j] == 0.0f;
      for (int64_t j = 0; j < k; ++j) {
        float dd = dist[i * k + j];
        w[i * k + j] = exact ? (dd == 0.0f ? 1.0f : 0.0f) : bl::div(1.0f, dd);
      }
    }
    return w;
  }

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(classifier_, name_, ": predict_proba is not supported");
    const int64_t m = X.dim(0), k = params_.integer("n_neighbors"), c = static_cast<int64_t>(rows_.classes.size());
    std::vector<int64_t> idx;
    std::vector<float> dist;
    kneighbors(X, idx, dist);
    std::vector<float> w = weights(dist, m, k);
    std::vector<float> p(static_cast<size_t>(m * c), 0.0f);
    for (int64_t i = 0; i < m; ++i) {
      float total = 0.0f;
      for (int64_t j = 0; j < k; ++j) {
        int64_t cls = static_cast<int64_t>(rows_.target[idx[i * k + j]]);
        p[i * c + cls] = bl::add(p[i * c + cls], w[i * k + j]);
        total = bl::add(total, w[i * k + j]);
      }
      for (int64_t j = 0; j < c; ++j) p[i * c + j] = bl::div(p[i * c + j], total);
    }
    return Tensor::from_vector(p, {m, c}, X.device());
  }

  Tensor predict(const Tensor& X) const override {
    const int64_t m = X.dim(0);
    if (classifier_) {
      Tensor P = predict_proba(X);
      return lin::labels_from_index(rows_.classes, bl::argmax(P, 1), rows_.label_dtype, X.device());
    }
    const int64_t k = params_.integer("n_neighbors");
    std::vector<int64_t> idx;
    std::vector<float> dist;
    kneighbors(X, idx, dist);
    std::vector<float> w = weights(dist, m, k), out(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
      float s = 0.0f, total = 0.0f;
      for (int64_t j = 0; j < k; ++j) {
        s = bl::fma(w[i * k + j], rows_.target[idx[i * k + j]], s);
        total = bl::add(total, w[i * k + j]);
      }
      out[i] = bl::div(s, total);
    }
    return Tensor::from_vector(out, {m}, X.device());
  }

  double score(const Tensor& X, const Tensor& y) const override {
    return classifier_ ? lin::accuracy_score(y, predict(X)) : lin::r2_score(y, predict(X));
  }

 private:
  bool classifier_;
};

// nearest_neighbors: the neighbors of each query (predict: indices, transform: distances).
class NearestNeighbors final : public NeighborsBase {
 public:
  NearestNeighbors() : NeighborsBase("nearest_neighbors", Target::none, {}) {}

  Tensor predict(const Tensor& X) const override {
    std::vector<int64_t> idx;
    std::vector<float> dist;
    kneighbors(X, idx, dist);
    return Tensor::from_vector(idx, {X.dim(0), params_.integer("n_neighbors")}, X.device());
  }

  Tensor transform(const Tensor& X) const override {
    std::vector<int64_t> idx;
    std::vector<float> dist;
    kneighbors(X, idx, dist);
    return Tensor::from_vector(dist, {X.dim(0), params_.integer("n_neighbors")}, X.device());
  }
};

}  // namespace

std::unique_ptr<Estimator> make_kneighbors_classifier() { return std::make_unique<KNeighbors>(true); }
std::unique_ptr<Estimator> make_kneighbors_regressor() { return std::make_unique<KNeighbors>(false); }
std::unique_ptr<Estimator> make_nearest_neighbors() { return std::make_unique<NearestNeighbors>(); }

}  // namespace bl::ml
