// nearest_centroid.cpp: nearest_centroid, each class represented by one centroid.
//
// metric=euclidean: the centroid is the class mean (binary64 sums in row order, rounded once);
// prediction takes the smallest squared distance relu((-2 x.c + |x|^2) + |c|^2) of
// ml/cluster/distances.h (contract GEMM on X's device) and argmin (first class on ties).
// metric=manhattan: the centroid is the per-feature class median (the mean of the two middle
// values for an even count, as numpy's median); distances sum |x_j - c_j| on the host in feature
// order.
#include <algorithm>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "ml/cluster/distances.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

class NearestCentroid final : public lin::ParamEstimator {
 public:
  NearestCentroid()
      : lin::ParamEstimator("nearest_centroid", {{"metric", K::choice, "euclidean", 0, {"euclidean", "manhattan"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    lin::EncodedLabels e = lin::encode_labels(name_, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1), c = static_cast<int64_t>(e.classes.size());
    std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>();
    classes_ = e.classes;
    label_dtype_ = y.dtype();
    d_ = d;
    centroids_.assign(static_cast<size_t>(c * d), 0.0f);
    if (params_.text("metric") == "euclidean") {
      std::vector<double> sum(centroids_.size(), 0.0), count(static_cast<size_t>(c), 0.0);
      for (int64_t i = 0; i < n; ++i) {
        count[e.index[i]] += 1.0;
        for (int64_t j = 0; j < d; ++j) sum[e.index[i] * d + j] += x[i * d + j];
      }
      for (int64_t k = 0; k < c; ++k)
        for (int64_t j = 0; j < d; ++j) centroids_[k * d + j] = static_cast<float>(sum[k * d + j] / count[k]);
    } else {
      std::vector<std::vector<int64_t>> rows(static_cast<size_t>(c));
      for (int64_t i = 0; i < n; ++i) rows[e.index[i]].push_back(i);
      std::vector<float> col;
      for (int64_t k = 0; k < c; ++k)
        for (int64_t j = 0; j < d; ++j) {
          col.clear();
          for (int64_t i : rows[k]) col.push_back(x[i * d + j]);
          std::sort(col.begin(), col.end());
          const size_t h = col.size() / 2;
          centroids_[k * d + j] =
              col.size() % 2 ? col[h] : static_cast<float>((static_cast<double>(col[h - 1]) + col[h]) * 0.5);
        }
    }
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    check_predict_input(X, d_);
    const int64_t m = X.dim(0), d = d_, c = static_cast<int64_t>(classes_.size());
    Tensor D;
    if (params_.text("metric") == "euclidean") {
      Tensor Q = X.contiguous();
      Tensor C = Tensor::from_vector(centroids_, {c, d}, X.device());
      D = sq_distances(Q, row_sq_norms(Q), C, row_sq_norms(C));
    } else {
      std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>(), dist(static_cast<size_t>(m * c));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t k = 0; k < c; ++k) {
          float s = 0.0f;
          for (int64_t j = 0; j < d; ++j) s = bl::add(s, bl::abs(bl::sub(x[i * d + j], centroids_[k * d + j])));
          dist[i * c + k] = s;
        }
      D = Tensor::from_vector(dist, {m, c}, X.device());
    }
    return lin::labels_from_index(classes_, bl::argmin(D, 1), label_dtype_, X.device());
  }

  double score(const Tensor& X, const Tensor& y) const override { return lin::accuracy_score(y, predict(X)); }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_classes", static_cast<int64_t>(classes_.size())}});
    lin::put_labels(state, classes_, label_dtype_);
    lin::put_f32(state, "centroids", centroids_);
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    const int64_t c = lin::get_int(state, "n_classes", 2, name_);
    BL_CHECK(c <= (int64_t{1} << 20) && d_ <= (int64_t{1} << 40) / c, name_,
             ": model state: n_classes x n_features is too large");
    classes_ = lin::get_f32(state, "classes", c, name_);
    label_dtype_ = lin::get_label_dtype(state);
    centroids_ = lin::get_f32(state, "centroids", c * d_, name_);
    fitted_ = true;
  }

 private:
  std::vector<float> classes_, centroids_;
  DType label_dtype_ = DType::f32;
  int64_t d_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_nearest_centroid() { return std::make_unique<NearestCentroid>(); }

}  // namespace bl::ml
