// bisecting_kmeans.cpp: bisecting_kmeans (scikit-learn's BisectingKMeans), divisive k-means.
//
// Fit: the tree starts with one leaf holding every row (its center the column means of X). Then,
// n_clusters - 1 times: the leaf of largest score (the first in tree order, left before right, on
// ties) is split in two by bitlearn's kmeans (n_clusters = 2, the given init, max_iter and tol) run
// n_init times on its rows (index_select on X's device); run t of bisection b uses random_state =
// Philox word (b * n_init + t) of stream 7 under random_state (32 bits). A run replaces the best
// so far when its inertia < best * (1 - 1e-6) (binary64, as scikit-learn). The rows go to the left
// child (label 0) or the right child (label 1) with the kmeans labels (nearest of the two final
// centers by the GEMM distances, the left one on ties). A child's score is its inertia (binary64 sum
// of its rows' squared distances in row order; biggest_inertia) or its row count (largest_cluster).
// The leaves in tree order are the clusters 0..n_clusters-1; inertia is the binary64 row-order sum
// of each row's squared distance to its cluster's center, rounded once to binary32.
// predict descends the tree as scikit-learn: at each split the nearer of the two child centers by
// the contract-GEMM squared distances (the left one on ties). transform gives the distances to the
// cluster centers, score minus the sum of each row's squared distance to its nearest cluster center
// (as scikit-learn's KMeans.score). n_iter is the most Lloyd iterations of a kept kmeans run.
// sample_weight (as scikit-learn): each bisection runs kmeans's weighted fit on the leaf's rows and
// their weights; a child's biggest_inertia score and the final inertia are the binary64 sums of
// w_i times the squared distances; largest_cluster still counts rows and the root center is the
// unweighted column mean, as there. All-ones weights are the unweighted fit (the same bits).
#include <algorithm>
#include <cmath>
#include <string>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/rng.h"
#include "core/error.h"
#include "ml/cluster/distances.h"
#include "io/json_number.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/weighted_fit.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr uint64_t kSeedStream = 7;

struct Node {
  std::vector<int64_t> rows;  // training rows (fit only)
  int64_t left = -1, right = -1;
  double score = 0.0;
};

class BisectingKMeans final : public WeightedRowsFitX<BisectingKMeans, lin::ParamEstimator> {
 public:
  BisectingKMeans()
      : WeightedRowsFitX("bisecting_kmeans",
                         {{"bisecting_strategy", K::choice, "biggest_inertia", 0, {"biggest_inertia", "largest_cluster"}},
                          {"init", K::choice, "random", 0, {"random", "k-means++"}},
                          {"max_iter", K::integer, "300", 1},
                          {"n_clusters", K::integer, "8", 1},
                          {"n_init", K::integer, "1", 1},
                          {"random_state", K::integer, "0", 0},
                          {"tol", K::number, "0.0001", 0.0}}) {}

 private:
  friend WeightedRowsFitX;

  Estimator& fit_rows(const Tensor& X, const std::vector<float>* w) {
    w = null_if_unit_weights(w);  // all-ones weights give the unweighted fit's bits
    check_X(name_, X);
    const int64_t n = X.dim(0), k = params_.integer("n_clusters"), n_init = params_.integer("n_init");
    d_ = X.dim(1);
    BL_CHECK(k <= n, name_, ": n_clusters=", k, " is more than the ", n, " rows of X (more clusters than rows)");
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    const bool by_inertia = params_.text("bisecting_strategy") == "biggest_inertia";
    std::vector<Node> nodes(1);
    nodes[0].rows.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) nodes[0].rows[i] = i;
    n_iter_ = 0;
    centers_ = bl::mean(X, {0}).to(Device::cpu()).to_vector<float>();
    for (int64_t b = 0; b + 1 < k; ++b) {
      const int64_t leaf = pick_leaf(nodes);
      const std::vector<int64_t> rows = nodes[leaf].rows;
      const int64_t m = static_cast<int64_t>(rows.size());
      BL_CHECK(m >= 2, name_, ": the cluster to bisect holds ", m,
               " row; it cannot be split in two (fewer distinct rows than n_clusters?)");
      Tensor Xs = bl::index_select(X, 0, Tensor::from_vector(rows, {m}, X.device()));
      std::vector<float> ws;  // the leaf's weights (weighted fits)
      if (w != nullptr)
        for (int64_t r : rows) ws.push_back((*w)[r]);
      std::vector<float> best_c;
      double best = 0.0;
      int64_t best_iter = 0;
      for (int64_t t = 0; t < n_init; ++t) {
        const uint32_t s = random_u32_element(seed, kSeedStream, static_cast<uint64_t>(b * n_init + t));
        auto km = make_estimator("kmeans", {{"n_clusters", "2"},
                                            {"init", params_.text("init")},
                                            {"max_iter", std::to_string(params_.integer("max_iter"))},
                                            {"tol", param_text(params_.number("tol"))},
                                            {"random_state", std::to_string(s)}});
        km->fit_weighted(Xs, Tensor(), w != nullptr ? Tensor::from_vector(ws, {m}, X.device()) : Tensor());
        nlohmann::json st;
        km->save_state(st);
        const double inertia = static_cast<double>(lin::get_f32(st, "inertia", 1, name_)[0]);
        if (t == 0 || inertia < best * (1.0 - 1e-6)) {
          best = inertia;
          best_c = lin::get_f32(st, "cluster_centers", 2 * d_, name_);
          best_iter = lin::get_int(st, "n_iter", 0, name_);
        }
      }
      Tensor C = Tensor::from_vector(best_c, {2, d_}, X.device());
      Tensor D = sq_distances(Xs, row_sq_norms(Xs), C, row_sq_norms(C));
      std::vector<int64_t> lab = bl::argmin(D, 1).to(Device::cpu()).to_vector<int64_t>();
      std::vector<float> mind = bl::amin(D, {1}).to(Device::cpu()).to_vector<float>();
      Node l, r;
      for (int64_t i = 0; i < m; ++i) {
        Node& side = lab[i] == 0 ? l : r;
        side.rows.push_back(rows[i]);
        side.score += by_inertia ? static_cast<double>(mind[i]) * (w != nullptr ? static_cast<double>(ws[i]) : 1.0) : 1.0;
      }
      nodes[leaf].left = static_cast<int64_t>(nodes.size());
      nodes[leaf].right = nodes[leaf].left + 1;
      nodes[leaf].rows.clear();
      nodes.push_back(std::move(l));
      nodes.push_back(std::move(r));
      centers_.insert(centers_.end(), best_c.begin(), best_c.end());
      n_iter_ = std::max(n_iter_, best_iter);
      report_progress("bisecting_kmeans", b + 1, k - 1);
    }
    left_.clear();
    right_.clear();
    for (const Node& nd : nodes) {
      left_.push_back(nd.left);
      right_.push_back(nd.right);
    }
    index_leaves();
    // inertia: each row to the center of its leaf
    std::vector<int64_t> label(static_cast<size_t>(n), 0);
    for (size_t v = 0; v < nodes.size(); ++v)
      if (leaf_label_[v] >= 0)
        for (int64_t i : nodes[v].rows) label[i] = leaf_label_[v];
    Tensor Cc = Tensor::from_vector(cluster_centers_, {k_, d_}, X.device());
    std::vector<float> D = sq_distances(X, row_sq_norms(X), Cc, row_sq_norms(Cc)).to(Device::cpu()).to_vector<float>();
    double in = 0.0;
    for (int64_t i = 0; i < n; ++i)
      in += static_cast<double>(D[i * k_ + label[i]]) * (w != nullptr ? static_cast<double>((*w)[i]) : 1.0);
    inertia_ = static_cast<float>(in);
    fitted_ = true;
    return *this;
  }

 public:
  Tensor predict(const Tensor& X) const override {
    check_predict_input(X, d_);
    const int64_t m = X.dim(0), nn = static_cast<int64_t>(left_.size());
    Tensor C = Tensor::from_vector(centers_, {nn, d_}, X.device());
    std::vector<float> D = sq_distances(X, row_sq_norms(X), C, row_sq_norms(C)).to(Device::cpu()).to_vector<float>();
    std::vector<int64_t> out(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
      int64_t v = 0;
      while (left_[v] >= 0) v = D[i * nn + right_[v]] < D[i * nn + left_[v]] ? right_[v] : left_[v];
      out[i] = leaf_label_[v];
    }
    return Tensor::from_vector(out, {m}, X.device());
  }
  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    Tensor C = Tensor::from_vector(cluster_centers_, {k_, d_}, X.device());
    return bl::sqrt(sq_distances(X, row_sq_norms(X), C, row_sq_norms(C)));
  }
  double score(const Tensor& X, const Tensor&) const override {
    BL_CHECK(fitted_, name_, ": score before fit");
    lin::check_predict_X(name_, X, d_);
    Tensor C = Tensor::from_vector(cluster_centers_, {k_, d_}, X.device());
    return -bl::sum(bl::amin(sq_distances(X, row_sq_norms(X), C, row_sq_norms(C)), {1})).item();
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_clusters", k_}, {"n_iter", n_iter_}});
    state["tree_left"] = left_;
    state["tree_right"] = right_;
    lin::put_f32s(state, {{"tree_centers", centers_}, {"cluster_centers", cluster_centers_}, {"inertia", {inertia_}}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    const int64_t k = lin::get_int(state, "n_clusters", 1, name_);
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    for (const char* key : {"tree_left", "tree_right"})
      BL_CHECK(state.contains(key) && state[key].is_array() && static_cast<int64_t>(state[key].size()) == 2 * k - 1,
               name_, ": state field ", key, " is missing or not of 2 n_clusters - 1 entries");
    left_ = io::json_integers<int64_t>(state["tree_left"], name_ + ": model state: tree_left");
    right_ = io::json_integers<int64_t>(state["tree_right"], name_ + ": model state: tree_right");
    const int64_t nn = 2 * k - 1;
    // a valid tree: node v's children are new nodes after v, both or neither present
    for (int64_t v = 0; v < nn; ++v) {
      const bool ok = (left_[v] == -1 && right_[v] == -1) ||
                      (left_[v] > v && left_[v] < nn && right_[v] == left_[v] + 1 && right_[v] < nn);
      BL_CHECK(ok, name_, ": state field tree_left / tree_right: node ", v, " has invalid children");
    }
    centers_ = lin::get_f32(state, "tree_centers", nn * d_, name_);
    index_leaves();
    BL_CHECK(k_ == k, name_, ": state tree has ", k_, " leaves, n_clusters is ", k);
    // The leaves' centers in label order, as fit writes them; they must be the tree's.
    BL_CHECK(lin::get_f32(state, "cluster_centers", k * d_, name_) == cluster_centers_, name_,
             ": model state: cluster_centers differ from the centers of the tree's leaves");
    inertia_ = lin::get_f32(state, "inertia", 1, name_)[0];
    fitted_ = true;
  }

 private:
  // The leaf of largest score, the first in tree order on ties.
  static int64_t pick_leaf(const std::vector<Node>& nodes) {
    int64_t best = -1;
    std::vector<int64_t> stack{0};
    while (!stack.empty()) {
      int64_t v = stack.back();
      stack.pop_back();
      if (nodes[v].left >= 0) {
        stack.push_back(nodes[v].right);
        stack.push_back(nodes[v].left);
      } else if (best < 0 || nodes[v].score > nodes[best].score) {
        best = v;
      }
    }
    return best;
  }
  // Labels the leaves 0.. in tree order and gathers their centers.
  void index_leaves() {
    leaf_label_.assign(left_.size(), -1);
    cluster_centers_.clear();
    k_ = 0;
    std::vector<int64_t> stack{0};
    while (!stack.empty()) {
      int64_t v = stack.back();
      stack.pop_back();
      if (left_[v] >= 0) {
        stack.push_back(right_[v]);
        stack.push_back(left_[v]);
      } else {
        leaf_label_[v] = k_++;
        cluster_centers_.insert(cluster_centers_.end(), centers_.begin() + v * d_, centers_.begin() + (v + 1) * d_);
      }
    }
  }

  std::vector<int64_t> left_, right_, leaf_label_;
  std::vector<float> centers_, cluster_centers_;  // every node's center; the leaves' in label order
  float inertia_ = 0.0f;
  int64_t k_ = 0, d_ = 0, n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_bisecting_kmeans() { return std::make_unique<BisectingKMeans>(); }

}  // namespace bl::ml
