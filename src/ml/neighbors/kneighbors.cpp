// kneighbors.cpp: kneighbors_classifier and kneighbors_regressor (exact brute force).
//
// The n_neighbors nearest training rows of each query (squared distances D = relu((-2 q.t + |q|^2)
// + |t|^2) as in ml/cluster/distances.h, equal distances to the lowest training index) come from
// nearest_rows.h: fused GEMM tiles + selection on the CPU, GEMM on the device + host selection
// elsewhere, the same bits. Votes (classifier: most votes, lowest class on ties;
// weights=distance: 1 / distance, exact matches alone when any) and means (regressor, neighbors
// in distance order) are taken on the host in binary32 in a fixed order.
#include <algorithm>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "core/error.h"
#include "kernels/matmul_packed.h"
#include "ml/cluster/distances.h"
#include "ml/linear/common.h"
#include "ml/neighbors/kneighbors.h"
#include "ml/neighbors/nearest_rows.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

class KNeighbors final : public lin::ParamEstimator {
 public:
  explicit KNeighbors(bool classifier)
      : lin::ParamEstimator(classifier ? "kneighbors_classifier" : "kneighbors_regressor",
                            {{"n_neighbors", K::integer, "5", 1},
                             {"weights", K::choice, "uniform", 0, {"uniform", "distance"}}}),
        classifier_(classifier) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    const int64_t k = params_.integer("n_neighbors");
    BL_CHECK(k <= X.dim(0), name_, ": n_neighbors=", k, " is more than the ", X.dim(0), " training rows");
    n_ = X.dim(0);
    d_ = X.dim(1);
    X_ = X.to(Device::cpu()).contiguous().to_vector<float>();
    if (classifier_) {
      lin::EncodedLabels e = lin::encode_labels(name_, y, 1);
      classes_ = e.classes;
      target_.assign(e.index.begin(), e.index.end());
      label_dtype_ = y.dtype();
    } else {
      BL_CHECK(y.dtype() == DType::f32, name_, ": y must be f32 for a regressor, got ", y.str());
      std::vector<float> t = lin::y_to_host(y);
      target_.assign(t.begin(), t.end());
    }
    fitted_ = true;
    return *this;
  }

  // Neighbor indices [m, k] (i64, host) and their squared distances [m, k] (host) for queries X:
  // fused on the CPU for CPU tensors, GEMM on the device then host selection otherwise (same bits).
  void kneighbors(const Tensor& X, std::vector<int64_t>& idx, std::vector<float>& dist) const {
    BL_CHECK(fitted_, name_, ": predict before fit");
    lin::check_predict_X(name_, X, d_);
    const int64_t m = X.dim(0), k = params_.integer("n_neighbors");
    BL_CHECK(k <= n_, name_, ": n_neighbors=", k, " is more than the ", n_, " training rows");
    Tensor T = Tensor::from_vector(X_, {n_, d_}, X.device());
    std::vector<float> tt = row_sq_norms(T).to(Device::cpu()).to_vector<float>();
    NeighborLists lists;
    if (X.device().is_cpu()) {
      Tensor Q = X.contiguous();
      std::vector<float> qq = row_sq_norms(Q).to_vector<float>();
      PackedMatrix packed = matmul_pack_b_cpu(X_.data(), d_, n_, d_, true);
      lists = nearest_rows_cpu(Q.data<float>(), m, qq.data(), packed, tt.data(), k);
      report_progress(name_ + " neighbors", m, m);
    } else {
      lists = nearest_rows_gemm(X, T, tt, k);
    }
    idx = std::move(lists.idx);
    dist = std::move(lists.dist);
  }

  // Per query, the weight of each neighbor (1, or 1 / distance; exact matches only when any).
  std::vector<float> weights(const std::vector<float>& dist, int64_t m, int64_t k) const {
    std::vector<float> w(dist.size(), 1.0f);
    if (params_.text("weights") == "uniform") return w;
    for (int64_t i = 0; i < m; ++i) {
      bool exact = false;
      for (int64_t j = 0; j < k; ++j) exact = exact || dist[i * k + j] == 0.0f;
      for (int64_t j = 0; j < k; ++j) {
        float dd = dist[i * k + j];
        w[i * k + j] = exact ? (dd == 0.0f ? 1.0f : 0.0f) : bl::div(1.0f, bl::sqrt(dd));
      }
    }
    return w;
  }

  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(classifier_, name_, ": predict_proba is not supported");
    const int64_t m = X.dim(0), k = params_.integer("n_neighbors"), c = static_cast<int64_t>(classes_.size());
    std::vector<int64_t> idx;
    std::vector<float> dist;
    kneighbors(X, idx, dist);
    std::vector<float> w = weights(dist, m, k);
    std::vector<float> p(static_cast<size_t>(m * c), 0.0f);
    for (int64_t i = 0; i < m; ++i) {
      float total = 0.0f;
      for (int64_t j = 0; j < k; ++j) {
        int64_t cls = static_cast<int64_t>(target_[idx[i * k + j]]);
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
      return lin::labels_from_index(classes_, bl::argmax(P, 1), label_dtype_, X.device());
    }
    const int64_t k = params_.integer("n_neighbors");
    std::vector<int64_t> idx;
    std::vector<float> dist;
    kneighbors(X, idx, dist);
    std::vector<float> w = weights(dist, m, k), out(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
      float s = 0.0f, total = 0.0f;
      for (int64_t j = 0; j < k; ++j) {
        s = bl::fma(w[i * k + j], target_[idx[i * k + j]], s);
        total = bl::add(total, w[i * k + j]);
      }
      out[i] = bl::div(s, total);
    }
    return Tensor::from_vector(out, {m}, X.device());
  }

  double score(const Tensor& X, const Tensor& y) const override {
    return classifier_ ? lin::accuracy_score(y, predict(X)) : lin::r2_score(y, predict(X));
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    state["n_samples"] = n_;
    lin::put_f32(state, "fit_X", X_);
    lin::put_f32(state, "fit_y", target_);
    if (classifier_) {
      lin::put_labels(state, classes_, label_dtype_);
    }
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    n_ = lin::get_int(state, "n_samples", 1, name_);
    X_ = lin::get_f32(state, "fit_X", n_ * d_, name_);
    target_ = lin::get_f32(state, "fit_y", n_, name_);
    if (classifier_) {
      classes_ = lin::get_f32(state, "classes", -1, name_);
      for (float t : target_)
        BL_CHECK(t >= 0.0f && t < static_cast<float>(classes_.size()), name_,
                 ": model state: class index ", t, " out of range");
      label_dtype_ = lin::get_label_dtype(state);
    }
    fitted_ = true;
  }

 private:
  bool classifier_;
  std::vector<float> X_, target_, classes_;  // target_: class index (classifier) or value
  DType label_dtype_ = DType::f32;
  int64_t n_ = 0, d_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_kneighbors_classifier() { return std::make_unique<KNeighbors>(true); }
std::unique_ptr<Estimator> make_kneighbors_regressor() { return std::make_unique<KNeighbors>(false); }

}  // namespace bl::ml
