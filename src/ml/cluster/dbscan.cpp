// dbscan.cpp: dbscan, density-based clustering (scikit-learn's DBSCAN, metric euclidean).
//
// Neighborhoods: the squared distance of rows i and j is sum_f (x_if - x_jf)^2 (sub, square, then
// a sum over features in the reduction schedule: Tensor ops on X's device, computed in row blocks
// of at most 2^24 elements). It is symmetric and 0 on the diagonal, and j is a neighbor of i when
// it is <= eps^2, with eps^2 formed as eps * eps in binary64 and rounded once to binary32 (so a
// pair exactly eps apart is a neighbor, as scikit-learn's dist <= eps). Neighbor lists are in
// ascending index order.
// Core points: a neighborhood (the point itself included) of at least min_samples rows.
// Labels, as scikit-learn's dbscan_inner: points are visited in ascending index; an unlabeled
// core point starts cluster 0, 1, 2, ...; the cluster grows depth-first with a stack, every core
// point pushing its unlabeled neighbors in ascending order; a point keeps the first label it gets
// (so a border point reachable from two clusters goes to the one started first). The rest is
// noise, -1.
// predict (an extension; scikit-learn's DBSCAN has none): a row takes the label of its nearest
// core sample (lowest index on ties) when that one is within eps, else -1. On the training rows
// this is the fit labels for core and noise points; a border point takes its nearest core point's
// cluster.
#include "ml/cluster/dbscan.h"

#include <algorithm>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/linear/common.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

constexpr int64_t kBlockElems = int64_t{1} << 24;
constexpr int64_t kMaxPairs = int64_t{1} << 27;

// Squared distances [a, b] of the rows of A [a, d] to the rows of B [b, d].
Tensor sq_diff_distances(const Tensor& A, const Tensor& B) {
  const int64_t a = A.dim(0), b = B.dim(0), d = A.dim(1);
  return bl::sum(bl::square(bl::sub(A.contiguous().reshape({a, 1, d}), B.reshape({1, b, d}))), {2});
}

int64_t block_rows(int64_t b, int64_t d) { return std::max<int64_t>(1, kBlockElems / std::max<int64_t>(1, b * d)); }

class Dbscan final : public lin::ParamEstimator {
 public:
  Dbscan()
      : lin::ParamEstimator("dbscan", {{"eps", K::number, "0.5", 0.0},
                                       {"metric", K::choice, "euclidean", 0, {"euclidean"}},
                                       {"min_samples", K::integer, "5", 1}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const double eps = params_.number("eps");
    BL_CHECK(eps > 0.0, name_, ": eps=", params_.text("eps"), " must be > 0 (the neighborhood radius)");
    const int64_t n = X.dim(0), d = X.dim(1), min_samples = params_.integer("min_samples");
    const float eps2 = static_cast<float>(eps * eps);
    const Device dev = X.device();
    Tensor Xc = X.contiguous(), limit = Tensor::scalar(static_cast<double>(eps2), DType::f32, dev);
    // Neighbor lists, in CSR form, rows in ascending order.
    std::vector<int64_t> start{0}, nbr;
    const int64_t rows = block_rows(n, d);
    for (int64_t s = 0; s < n; s += rows) {
      const int64_t e = std::min(n, s + rows);
      Tensor mask = bl::cast(bl::le(sq_diff_distances(Xc.slice(0, s, e), Xc), limit), DType::i32);
      std::vector<int32_t> m = mask.to(Device::cpu()).contiguous().to_vector<int32_t>();
      for (int64_t i = 0; i < e - s; ++i) {
        for (int64_t j = 0; j < n; ++j)
          if (m[i * n + j]) nbr.push_back(j);
        BL_CHECK(static_cast<int64_t>(nbr.size()) <= kMaxPairs, name_, ": eps=", params_.text("eps"),
                 " gives more than ", kMaxPairs, " neighbor pairs on ", n,
                 " rows (the neighborhoods are too large to hold); use a smaller eps or fewer rows");
        start.push_back(static_cast<int64_t>(nbr.size()));
      }
      report_progress("dbscan neighborhoods", e, n);
    }
    std::vector<char> core(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) core[i] = start[i + 1] - start[i] >= min_samples;
    labels_.assign(static_cast<size_t>(n), -1);
    int64_t cluster = 0;
    std::vector<int64_t> stack;
    for (int64_t i0 = 0; i0 < n; ++i0) {
      if (labels_[i0] != -1 || !core[i0]) continue;
      int64_t i = i0;
      for (;;) {
        if (labels_[i] == -1) {
          labels_[i] = cluster;
          if (core[i])
            for (int64_t k = start[i]; k < start[i + 1]; ++k)
              if (labels_[nbr[k]] == -1) stack.push_back(nbr[k]);
        }
        if (stack.empty()) break;
        i = stack.back();
        stack.pop_back();
      }
      ++cluster;
    }
    core_.clear();
    for (int64_t i = 0; i < n; ++i)
      if (core[i]) core_.push_back(i);
    std::vector<int64_t> core_idx(core_.begin(), core_.end());
    components_.clear();
    if (!core_.empty()) {
      const int64_t c = static_cast<int64_t>(core_.size());
      components_ = bl::index_select(Xc, 0, Tensor::from_vector(core_idx, {c}, dev))
                        .to(Device::cpu())
                        .contiguous()
                        .to_vector<float>();
    }
    n_ = n;
    d_ = d;
    eps2_ = eps2;
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    BL_CHECK(fitted_, name_, ": predict before fit");
    lin::check_predict_X(name_, X, d_);
    const int64_t m = X.dim(0), c = static_cast<int64_t>(core_.size());
    std::vector<int64_t> out(static_cast<size_t>(m), -1);
    if (c > 0) {
      const Device dev = X.device();
      Tensor C = Tensor::from_vector(components_, {c, d_}, dev);
      const int64_t rows = block_rows(c, d_);
      for (int64_t s = 0; s < m; s += rows) {
        const int64_t e = std::min(m, s + rows);
        Tensor D = sq_diff_distances(X.slice(0, s, e), C);
        std::vector<int64_t> arg = bl::argmin(D, 1).to(Device::cpu()).contiguous().to_vector<int64_t>();
        std::vector<float> dmin = bl::amin(D, {1}).to(Device::cpu()).contiguous().to_vector<float>();
        for (int64_t i = 0; i < e - s; ++i)
          if (dmin[i] <= eps2_) out[s + i] = labels_[core_[arg[i]]];
      }
    }
    return Tensor::from_vector(out, {m}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    state["n_samples"] = n_;
    state["labels"] = labels_;
    state["core_sample_indices"] = core_;
    lin::put_f32(state, "components", components_);
    lin::put_f32(state, "eps_squared", {eps2_});
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    n_ = lin::get_int(state, "n_samples", 1, name_);
    BL_CHECK(n_ <= (int64_t{1} << 40) / d_, name_, ": model state: n_samples x n_features is too large");
    auto ints = [&](const char* key) {
      BL_CHECK(state.contains(key) && state[key].is_array(), name_, ": model state: ", key,
               " must be an array of integers");
      std::vector<int64_t> v;
      for (const auto& x : state[key]) {
        BL_CHECK(x.is_number_integer(), name_, ": model state: ", key, " must hold integers");
        v.push_back(x.get<int64_t>());
      }
      return v;
    };
    labels_ = ints("labels");
    BL_CHECK(static_cast<int64_t>(labels_.size()) == n_, name_, ": model state: labels must have ", n_,
             " entries, got ", labels_.size());
    for (int64_t l : labels_)
      BL_CHECK(l >= -1 && l < n_, name_, ": model state: label ", l, " is out of range [-1, ", n_, ")");
    core_ = ints("core_sample_indices");
    for (size_t k = 0; k < core_.size(); ++k)
      BL_CHECK(core_[k] >= 0 && core_[k] < n_ && (k == 0 || core_[k] > core_[k - 1]) && labels_[core_[k]] >= 0,
               name_, ": model state: core_sample_indices must be ascending row indices of clustered rows");
    components_ = lin::get_f32(state, "components", static_cast<int64_t>(core_.size()) * d_, name_);
    eps2_ = lin::get_f32(state, "eps_squared", 1, name_)[0];
    fitted_ = true;
  }

 private:
  std::vector<int64_t> labels_, core_;
  std::vector<float> components_;
  float eps2_ = 0.0f;
  int64_t n_ = 0, d_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_dbscan() { return std::make_unique<Dbscan>(); }

}  // namespace bl::ml
