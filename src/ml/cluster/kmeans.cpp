// kmeans.cpp: kmeans (k-means++ initialization from Philox, Lloyd iterations) and
// minibatch_kmeans (Philox mini-batches, per-center learning rates 1 / count).
//
// k-means++ (greedy, as scikit-learn): the first center is row philox_index(word 0 of stream 1); each
// further center draws 2 + floor(ln k) candidates, candidate t of center c from word c * 64 + t of
// stream 1: r = uniform_co(word) * potential, the first row whose cumulative closest distance
// (cumsum op) exceeds r; the candidate with the least new potential wins (lowest index on ties).
// Lloyd: labels = argmin of the GEMM distances (lowest index on ties); new centers = M^T X / counts
// with M the one-hot [n, k] label matrix (a contract GEMM, so sums are fixed-order on any device);
// an empty cluster takes the row farthest from its center (top-k, lowest index on ties). Stops when
// the squared center shift <= tol * mean column variance, or after max_iter; the final labels and
// inertia come from one more assignment pass with the final centers.
// minibatch_kmeans with sample weights (as scikit-learn): the batches are drawn as without weights;
// k-means++ on the init subsample takes the subsample's weights, each batch's one-hot matrix is
// weighted (a center moves by the weighted sum of its batch rows over its running weight total), the
// batch inertia is sum_i w_i d_i / batch_size, and the final inertia is weighted. All-ones weights
// are the unweighted fit (the same bits).
// kmeans with sample weights: the one-hot matrix is weighted (centers = weighted means, an
// empty cluster is one of weight 0), k-means++ draws its first center and its candidates in
// proportion to w (w times the closest distance) and scores candidates by the weighted potential,
// init=random draws among the rows of positive weight, and the inertia is sum_i w_i d_i, as
// scikit-learn's; tol stays relative to the unweighted column variance, as there.
#include <algorithm>
#include <cmath>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/cluster/distances.h"
#include "ml/cluster/kmeans.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/weighted_fit.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

constexpr uint64_t kInitStream = 1, kSubsampleStream = 2, kBatchStream = 3;

struct Assignment {
  Tensor labels;  // [n] i64
  Tensor mind;    // [n] f32, squared distance to the own center
};

Assignment assign(const Tensor& X, const Tensor& xx, const Tensor& C) {
  Tensor cc = row_sq_norms(C);
  Tensor D = sq_distances(X, xx, C, cc);
  Assignment a;
  a.labels = bl::argmin(D, 1);
  a.mind = bl::amin(D, {1});
  return a;
}

// Sums of the rows of each cluster [k, d] and the counts [k] via the one-hot GEMM (weighted by
// weight [n, 1] when it is defined).
void cluster_sums(const Tensor& X, const Tensor& labels, int64_t k, Tensor& sums, Tensor& counts,
                  const Tensor& weight) {
  Tensor ar = Tensor::arange(k, DType::i64, X.device()).reshape({1, k});
  Tensor M = bl::cast(bl::eq(labels.reshape({X.dim(0), 1}), ar), DType::f32);
  if (weight.defined()) M = bl::mul(M, weight);
  sums = bl::matmul(M, X, true, false);
  counts = bl::sum(M, {0});
}

}  // namespace

// The first index i with cs[i] > r (cs ascending; n - 1 when none).
static int64_t first_above(const std::vector<float>& cs, float r) {
  int64_t lo = 0, hi = static_cast<int64_t>(cs.size()) - 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cs[mid] > r) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

std::vector<float> kmeans_plus_plus(const Tensor& X, int64_t k, uint64_t seed, const Tensor& weight) {
  const int64_t n = X.dim(0), d = X.dim(1);
  Tensor xx = row_sq_norms(X);
  // 2 + floor(ln k) without libm: thresholds ceil(e^m) for m = 1, 2, ...
  static const int64_t kExpCeil[] = {3, 8, 21, 55, 149, 404, 1097, 2981, 8104, 22027, 59875, 162755,
                                     442414, 1202605, 3269018, 8886111, 24154953, 65659970};
  int64_t trials = 2;
  for (int64_t e : kExpCeil) trials += k >= e ? 1 : 0;
  std::vector<float> centers;
  centers.reserve(static_cast<size_t>(k * d));
  auto take_row = [&](int64_t i) {
    std::vector<float> row = X.slice(0, i, i + 1).to(Device::cpu()).to_vector<float>();
    centers.insert(centers.end(), row.begin(), row.end());
  };
  const bool weighted = weight.defined();
  int64_t first;
  if (weighted) {  // in proportion to the weights
    std::vector<float> cw = bl::cumsum(weight.reshape({n}), 0).to(Device::cpu()).to_vector<float>();
    first = first_above(cw, bl::mul(uniform_co(random_u32_element(seed, kInitStream, 0)), cw[n - 1]));
  } else {
    first = philox_index(random_u32_element(seed, kInitStream, 0), n);
  }
  take_row(first);
  Tensor c0 = X.slice(0, first, first + 1);
  Tensor closest = sq_distances(X, xx, c0, row_sq_norms(c0));  // [n, 1]
  for (int64_t c = 1; c < k; ++c) {
    Tensor mass = weighted ? bl::mul(closest, weight) : closest;
    std::vector<float> cs = bl::cumsum(mass.reshape({n}), 0).to(Device::cpu()).to_vector<float>();
    float pot = cs[n - 1];
    std::vector<int64_t> cand(static_cast<size_t>(trials));
    for (int64_t t = 0; t < trials; ++t) {
      float r = bl::mul(uniform_co(random_u32_element(seed, kInitStream, static_cast<uint64_t>(c * 64 + t))), pot);
      cand[t] = first_above(cs, r);
    }
    Tensor idx = Tensor::from_vector(cand, {trials}, X.device());
    Tensor C = bl::index_select(X, 0, idx);
    Tensor Dc = sq_distances(X, xx, C, row_sq_norms(C));  // [n, trials]
    Tensor newc = bl::minimum(Dc, closest);               // broadcast [n, 1]
    Tensor pots = bl::sum(weighted ? bl::mul(newc, weight) : newc, {0});
    int64_t best = static_cast<int64_t>(bl::argmin(pots, 0).item());
    closest = bl::slice(newc, 1, best, best + 1).contiguous();
    take_row(cand[best]);
    report_progress("k-means++ init", c + 1, k);
  }
  return centers;
}

namespace {

class KMeansBase : public lin::ParamEstimator {
 public:
  KMeansBase(std::string name, std::vector<ParamSpec> specs)
      : lin::ParamEstimator(std::move(name), std::move(specs)) {}

  Tensor predict(const Tensor& X) const override {
    check_predict_input(X, d_);
    return assign(X, row_sq_norms(X), centers_tensor(X.device())).labels;
  }
  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    Tensor C = centers_tensor(X.device());
    return bl::sqrt(sq_distances(X, row_sq_norms(X), C, row_sq_norms(C)));
  }
  double score(const Tensor& X, const Tensor&) const override {
    BL_CHECK(fitted_, name_, ": score before fit");
    lin::check_predict_X(name_, X, d_);
    Assignment a = assign(X, row_sq_norms(X), centers_tensor(X.device()));
    return -bl::sum(a.mind).item();
  }
  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_clusters", k_}, {"n_iter", n_iter_}});
    lin::put_f32s(state, {{"cluster_centers", centers_}, {"inertia", {inertia_}}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    k_ = lin::get_int(state, "n_clusters", 1, name_);
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    centers_ = lin::get_f32(state, "cluster_centers", k_ * d_, name_);
    inertia_ = lin::get_f32(state, "inertia", 1, name_)[0];
    fitted_ = true;
  }

  const std::vector<float>& centers() const { return centers_; }
  float inertia() const { return inertia_; }

 protected:
  Tensor centers_tensor(Device dev) const { return Tensor::from_vector(centers_, {k_, d_}, dev); }
  void check_fit_input(const Tensor& X) {
    check_X(name_, X);
    k_ = params_.integer("n_clusters");
    BL_CHECK(k_ <= X.dim(0), name_, ": n_clusters=", k_, " is more than the ", X.dim(0),
             " rows of X (more clusters than rows)");
    d_ = X.dim(1);
  }
  void finish(const Tensor& X, const Tensor& xx, const Tensor& weight = Tensor()) {
    Assignment a = assign(X, xx, centers_tensor(X.device()));
    inertia_ = static_cast<float>(
        bl::sum(weight.defined() ? bl::mul(a.mind, weight.reshape({X.dim(0)})) : a.mind).item());
    fitted_ = true;
  }

  std::vector<float> centers_;
  float inertia_ = 0.0f;
  int64_t k_ = 0, d_ = 0, n_iter_ = 0;
};

class KMeans final : public WeightedRowsFitX<KMeans, KMeansBase> {
 public:
  KMeans()
      : WeightedRowsFitX("kmeans", {{"init", K::choice, "k-means++", 0, {"k-means++", "random"}},
                                    {"max_iter", K::integer, "300", 1},
                                    {"n_clusters", K::integer, "8", 1},
                                    {"random_state", K::integer, "0", 0},
                                    {"tol", K::number, "0.0001", 0.0}}) {}

 private:
  friend WeightedRowsFitX;

  Estimator& fit_rows(const Tensor& X, const std::vector<float>* w) {
    check_fit_input(X);
    const int64_t n = X.dim(0), k = k_;
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    Tensor weight;
    if (w) {
      int64_t positive = 0;
      for (float v : *w) positive += v > 0.0f ? 1 : 0;
      BL_CHECK(positive >= k, name_, ": n_clusters=", k, " is more than the ", positive, " rows of positive weight");
      weight = Tensor::from_vector(*w, {n, 1}, X.device());
    }
    if (params_.text("init") == "k-means++") {
      centers_ = kmeans_plus_plus(X, k, seed, weight);
    } else {  // k distinct rows drawn by Philox (partial Fisher-Yates on the host; weighted: rows of weight > 0)
      std::vector<int64_t> perm;
      for (int64_t i = 0; i < n; ++i)
        if (!w || (*w)[i] > 0.0f) perm.push_back(i);
      const int64_t m = static_cast<int64_t>(perm.size());
      for (int64_t i = 0; i < k; ++i) {
        int64_t j = i + philox_index(random_u32_element(seed, kInitStream, static_cast<uint64_t>(i)), m - i);
        std::swap(perm[i], perm[j]);
      }
      std::vector<int64_t> pick(perm.begin(), perm.begin() + k);
      centers_ = bl::index_select(X, 0, Tensor::from_vector(pick, {k}, X.device())).to(Device::cpu()).to_vector<float>();
    }
    Tensor xx = row_sq_norms(X);
    const float tol = bl::mul(static_cast<float>(params_.number("tol")),
                              static_cast<float>(bl::mean(bl::var(X, {0})).item()));
    const int64_t max_iter = params_.integer("max_iter");
    Tensor C = centers_tensor(X.device());
    n_iter_ = 0;
    for (int64_t it = 0; it < max_iter; ++it) {
      Assignment a = assign(X, xx, C);
      Tensor sums, counts;
      cluster_sums(X, a.labels, k, sums, counts, weight);
      std::vector<float> cnt = counts.to(Device::cpu()).to_vector<float>();
      Tensor safe = bl::maximum(counts, Tensor::scalar(1.0, DType::f32, X.device())).reshape({k, 1});
      Tensor Cn = bl::div(sums, safe);
      int64_t empty = 0;
      for (float c : cnt) empty += c == 0.0f ? 1 : 0;
      if (empty > 0) {  // relocate empty clusters to the rows farthest from their centers
        std::vector<int64_t> far = bl::topk(a.mind, empty, 0).indices.to(Device::cpu()).to_vector<int64_t>();
        std::vector<float> host = Cn.to(Device::cpu()).to_vector<float>();
        int64_t used = 0;
        for (int64_t j = 0; j < k; ++j) {
          if (cnt[j] != 0.0f) continue;
          std::vector<float> row = X.slice(0, far[used], far[used] + 1).to(Device::cpu()).to_vector<float>();
          ++used;
          std::copy(row.begin(), row.end(), host.begin() + j * d_);
        }
        Cn = Tensor::from_vector(host, {k, d_}, X.device());
      }
      float shift = static_cast<float>(bl::sum(bl::square(bl::sub(Cn, C))).item());
      C = Cn;
      n_iter_ = it + 1;
      report_progress("kmeans Lloyd", it + 1, max_iter);
      if (shift <= tol) break;
    }
    report_progress("kmeans Lloyd", max_iter, max_iter);
    centers_ = C.to(Device::cpu()).to_vector<float>();
    finish(X, xx, weight);
    return *this;
  }
};

class MiniBatchKMeans final : public WeightedRowsFitX<MiniBatchKMeans, KMeansBase> {
 public:
  MiniBatchKMeans()
      : WeightedRowsFitX("minibatch_kmeans", {{"batch_size", K::integer, "1024", 1},
                                              {"max_iter", K::integer, "100", 1},
                                              {"max_no_improvement", K::integer, "10", 0},
                                              {"n_clusters", K::integer, "8", 1},
                                              {"random_state", K::integer, "0", 0}}) {}

 private:
  friend WeightedRowsFitX;

  Estimator& fit_rows(const Tensor& X, const std::vector<float>* w) {
    w = null_if_unit_weights(w);  // all-ones weights give the unweighted fit's bits
    check_fit_input(X);
    const int64_t n = X.dim(0), k = k_, d = d_;
    Tensor weight = w != nullptr ? Tensor::from_vector(*w, {n, 1}, X.device()) : Tensor();
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    const int64_t batch = std::min<int64_t>(params_.integer("batch_size"), n);
    // k-means++ on a Philox subsample of 3 * batch_size rows (at least k).
    const int64_t init_size = std::min<int64_t>(n, std::max<int64_t>(3 * batch, k));
    Tensor Xinit = X, Winit = weight;
    std::vector<int64_t> init_rows;
    if (init_size < n) {
      std::vector<int64_t> idx(static_cast<size_t>(init_size));
      for (int64_t i = 0; i < init_size; ++i)
        idx[i] = philox_index(random_u32_element(seed, kSubsampleStream, static_cast<uint64_t>(i)), n);
      Tensor at = Tensor::from_vector(idx, {init_size}, X.device());
      Xinit = bl::index_select(X, 0, at);
      if (w != nullptr) Winit = bl::index_select(weight, 0, at);
      init_rows = idx;
    }
    if (w != nullptr) {
      int64_t positive = 0;
      if (init_rows.empty())
        for (float v : *w) positive += v > 0.0f ? 1 : 0;
      else
        for (int64_t r : init_rows) positive += (*w)[r] > 0.0f ? 1 : 0;
      BL_CHECK(positive >= k, name_, ": n_clusters=", k, " is more than the ", positive,
               " rows of positive weight in the k-means++ sample");
    }
    centers_ = kmeans_plus_plus(Xinit, k, seed, Winit);
    std::vector<float> total(static_cast<size_t>(k), 0.0f);
    const int64_t steps = params_.integer("max_iter") * ((n + batch - 1) / batch);
    const int64_t patience = params_.integer("max_no_improvement");
    float ewa = 0.0f, best = 0.0f;
    int64_t no_improve = 0;
    const float alpha = std::min(1.0f, bl::div(bl::mul(2.0f, static_cast<float>(batch)), static_cast<float>(n + 1)));
    n_iter_ = 0;
    for (int64_t step = 0; step < steps; ++step) {
      std::vector<int64_t> idx(static_cast<size_t>(batch));
      for (int64_t i = 0; i < batch; ++i)
        idx[i] = philox_index(
            random_u32_element(seed, kBatchStream, static_cast<uint64_t>(step) * static_cast<uint64_t>(batch) + i), n);
      Tensor at = Tensor::from_vector(idx, {batch}, X.device());
      Tensor Xb = bl::index_select(X, 0, at);
      Tensor Wb = w != nullptr ? bl::index_select(weight, 0, at) : Tensor();
      Tensor C = centers_tensor(X.device());
      Assignment a = assign(Xb, row_sq_norms(Xb), C);
      Tensor mass = w != nullptr ? bl::mul(a.mind, Wb.reshape({batch})) : a.mind;
      float batch_inertia = bl::div(static_cast<float>(bl::sum(mass).item()), static_cast<float>(batch));
      Tensor sums, counts;
      cluster_sums(Xb, a.labels, k, sums, counts, Wb);
      std::vector<float> s = sums.to(Device::cpu()).to_vector<float>();
      std::vector<float> c = counts.to(Device::cpu()).to_vector<float>();
      for (int64_t j = 0; j < k; ++j) {
        if (c[j] == 0.0f) continue;
        float old = total[j];
        total[j] = bl::add(old, c[j]);
        for (int64_t f = 0; f < d; ++f) {
          float& v = centers_[j * d + f];
          v = bl::div(bl::fma(v, old, s[j * d + f]), total[j]);
        }
      }
      n_iter_ = step + 1;
      report_progress("minibatch_kmeans", step + 1, steps);
      ewa = step == 0 ? batch_inertia : bl::fma(alpha, bl::sub(batch_inertia, ewa), ewa);
      if (step == 0 || ewa < best) {
        best = ewa;
        no_improve = 0;
      } else if (patience > 0 && ++no_improve >= patience) {
        break;
      }
    }
    report_progress("minibatch_kmeans", steps, steps);
    finish(X, row_sq_norms(X), weight);
    return *this;
  }

 public:
};

}  // namespace

std::unique_ptr<Estimator> make_kmeans() { return std::make_unique<KMeans>(); }
std::unique_ptr<Estimator> make_minibatch_kmeans() { return std::make_unique<MiniBatchKMeans>(); }

}  // namespace bl::ml
