// optics.cpp: optics, ordering points to identify the clustering structure (scikit-learn's OPTICS,
// metric euclidean), and the host helpers of density_clustering.h. Everything runs on the host in
// binary64 (the distances of density_clustering.h), in the fixed order below, so neither X's
// device nor the thread count reaches the result.
//
// 1. Core distances: the distance of each row to its min_samples-th nearest row, the row itself
//    counted (so min_samples = 2 gives the nearest other row); +inf where it exceeds max_eps; then
//    rounded to 15 decimals (rint(x * 1e15) / 1e15, as scikit-learn rounds its float64 values).
//    min_samples <= 1 is a fraction of the rows: max(2, floor(min_samples * n)).
// 2. The ordering. All reachabilities start at +inf, predecessors at -1. n times: the unprocessed
//    row with the smallest reachability, the lowest index on ties, is processed next; when its core
//    distance c is finite, each unprocessed row j within max_eps (distance <= max_eps) gets
//    r = round15(max(dist(i, j), c)) and takes it, with predecessor i, when r is strictly below its
//    reachability. These are scikit-learn's rules, so with the same distances the ordering,
//    reachability_ and predecessor_ are the same, ties included.
// 3. Labels.
//    dbscan: eps (none: max_eps, which it may not exceed); walking the ordering, a row with
//      reachability > eps and core distance <= eps starts the next cluster; rows with reachability
//      > eps and core distance > eps are noise (-1); the others take the current cluster.
//    xi: the steep-area method on the reachability plot (reachabilities in the ordering, +inf
//      appended), with scikit-learn's corrections: a point is steep downward when r[k] / r[k+1] >=
//      1 / (1 - xi), steep upward when <= 1 - xi (a 0 / 0 or inf / inf ratio is neither); steep
//      areas are extended while at most min_samples consecutive non-steep points continue in the
//      same direction; the steep down areas are filtered by the maximum in between; each steep up
//      area closes clusters with the steep down areas still open (Definition 11, criteria 1 to 4,
//      the ends moved as scikit-learn moves them), optionally shortened by the predecessor
//      correction, kept when they hold at least min_cluster_size points (none: min_samples;
//      <= 1: a fraction as min_samples). Clusters are listed smaller first; walking that list a
//      cluster whose points are all unlabeled takes the next label. cluster_hierarchy_ holds the
//      (start, end) positions in the ordering.
// predict (an extension; scikit-learn's OPTICS has none): the label of the nearest training row
// (squared distances in binary64, the lowest index on ties), so the fit labels on the training
// rows unless two rows coincide.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace density_detail {

namespace {
constexpr int64_t kBlock = 512;  // distance tasks: blocks of rows
}  // namespace

HostRows host_rows(const Tensor& X) {
  HostRows r;
  r.n = X.dim(0);
  r.d = X.dim(1);
  r.x = X.to(Device::cpu()).contiguous().to_vector<float>();
  r.xd.assign(r.x.begin(), r.x.end());
  const int64_t blocks = (r.n + 3) / 4;
  r.panel.resize(static_cast<size_t>(blocks * r.d * 4));
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t f = 0; f < r.d; ++f)
      for (int64_t u = 0; u < 4; ++u) r.panel[(b * r.d + f) * 4 + u] = r.xd[std::min(r.n - 1, 4 * b + u) * r.d + f];
  return r;
}

void distances_from(const HostRows& r, int64_t i, std::vector<double>& out, const std::vector<char>* skip) {
  out.resize(static_cast<size_t>(r.n));
  const float* a = r.row(i);
  // Blocks of at least 2^16 / d rows, so that a task outweighs waking a thread.
  const int64_t block = (std::max<int64_t>(kBlock, (int64_t{1} << 16) / std::max<int64_t>(1, r.d)) + 3) / 4 * 4;
  default_pool().parallel_for((r.n + block - 1) / block, [&](int64_t b) {
    const int64_t e = std::min(r.n, (b + 1) * block);
    int64_t j = b * block;  // block is a multiple of 4
    for (; j + 4 <= e; j += 4) {
      if (skip && (*skip)[j] && (*skip)[j + 1] && (*skip)[j + 2] && (*skip)[j + 3]) continue;
      double v[4];
      if (!r.panel.empty()) {
        sq_distance_panel(r.xd.data() + i * r.d, r.panel.data() + (j / 4) * r.d * 4, r.d, v);
      } else {
        const float* rows[4] = {r.row(j), r.row(j + 1), r.row(j + 2), r.row(j + 3)};
        sq_distance4(a, rows, r.d, v);
      }
      for (int u = 0; u < 4; ++u) out[j + u] = std::sqrt(v[u]);
    }
    for (; j < e; ++j)
      if (!skip || !(*skip)[j]) out[j] = std::sqrt(sq_distance(a, r.row(j), r.d));
  });
}

std::vector<double> kth_neighbor_distances(const HostRows& r, int64_t k) {
  std::vector<double> out(static_cast<size_t>(r.n));
  default_pool().parallel_for((r.n + kBlock - 1) / kBlock, [&](int64_t b) {
    std::vector<double> row(static_cast<size_t>(r.n));
    const int64_t e = std::min(r.n, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < e; ++i) {
      int64_t j = 0;
      for (; j + 4 <= r.n; j += 4) {
        if (!r.panel.empty()) {
          sq_distance_panel(r.xd.data() + i * r.d, r.panel.data() + (j / 4) * r.d * 4, r.d, row.data() + j);
        } else {
          const float* rows[4] = {r.row(j), r.row(j + 1), r.row(j + 2), r.row(j + 3)};
          sq_distance4(r.row(i), rows, r.d, row.data() + j);
        }
      }
      for (; j < r.n; ++j) row[j] = sq_distance(r.row(i), r.row(j), r.d);
      std::nth_element(row.begin(), row.begin() + (k - 1), row.end());
      out[i] = std::sqrt(row[k - 1]);
    }
  });
  return out;
}

std::vector<int64_t> nearest_row_labels(const HostRows& train, const std::vector<int64_t>& labels, const Tensor& X) {
  const HostRows q = host_rows(X);
  std::vector<int64_t> out(static_cast<size_t>(q.n));
  default_pool().parallel_for(q.n, [&](int64_t i) {
    const float* a = q.row(i);
    out[i] = labels[nearest_index(train.n, [&](int64_t j) { return sq_distance(a, train.row(j), train.d); }).first];
  });
  return out;
}

Tensor NearestLabelClusterer::predict(const Tensor& X) const {
  check_predict_input(X, rows_.d);
  return Tensor::from_vector(nearest_row_labels(rows_, labels_, X), {X.dim(0)}, X.device());
}

void NearestLabelClusterer::save_labelled_rows(nlohmann::json& state) const {
  lin::put_ints(state, {{"n_features", rows_.d}, {"n_samples", rows_.n}});
  state["labels"] = labels_;
  lin::put_f32(state, "train_rows", rows_.x);
}

void NearestLabelClusterer::load_labels(const nlohmann::json& state, int64_t min_n, int64_t& n, int64_t& d) {
  d = lin::get_int(state, "n_features", 1, name_);
  n = lin::get_int(state, "n_samples", min_n, name_);
  BL_CHECK(n <= (int64_t{1} << 40) / d, name_, ": model state: n_samples x n_features is too large");
  labels_ = ints_from_state(state, "labels", n, -1, n, name_);
}

void NearestLabelClusterer::load_train_rows(const nlohmann::json& state, int64_t n, int64_t d) {
  rows_.n = n;
  rows_.d = d;
  rows_.x = lin::get_f32(state, "train_rows", n * d, name_);
}

double round_15_decimals(double x) { return std::nearbyint(x * 1e15) / 1e15; }

std::string f64_to_hex(const std::vector<double>& v) {
  std::vector<int64_t> bits(v.size());
  if (!v.empty()) std::memcpy(bits.data(), v.data(), v.size() * sizeof(double));
  return i64_to_hex(bits);
}

std::vector<double> f64_from_state(const nlohmann::json& state, const std::string& key, int64_t size,
                                   const std::string& est) {
  BL_CHECK(state.contains(key) && state[key].is_string(), est, ": model state: ", key, " must be a hex string");
  std::vector<int64_t> bits = i64_from_hex(state[key].get<std::string>(), key);
  BL_CHECK(static_cast<int64_t>(bits.size()) == size, est, ": model state: ", key, " must have ", size, " values");
  std::vector<double> v(bits.size());
  if (!bits.empty()) std::memcpy(v.data(), bits.data(), bits.size() * sizeof(double));
  return v;
}

std::vector<int64_t> ints_from_state(const nlohmann::json& state, const std::string& key, int64_t size, int64_t lo,
                                     int64_t hi, const std::string& est) {
  BL_CHECK(state.contains(key) && state[key].is_array() &&
               (size < 0 || static_cast<int64_t>(state[key].size()) == size),
           est, ": model state: ", key, " must be an array of ", size < 0 ? std::string("") : std::to_string(size),
           size < 0 ? "" : " ", "integers");
  std::vector<int64_t> v;
  for (const auto& x : state[key]) {
    BL_CHECK(x.is_number_integer(), est, ": model state: ", key, " must hold integers");
    const int64_t t = x.get<int64_t>();
    BL_CHECK(t >= lo && t < hi, est, ": model state: ", key, " value ", t, " is out of range [", lo, ", ", hi, ")");
    v.push_back(t);
  }
  return v;
}

int64_t size_or_fraction(double value, int64_t n, const std::string& est, const std::string& key,
                         const std::string& text) {
  int64_t s = 0;
  if (value <= 1.0) {
    s = std::max<int64_t>(2, static_cast<int64_t>(std::floor(value * static_cast<double>(n))));
  } else {
    BL_CHECK(value == std::floor(value) && value < 9.0e15, est, ": parameter ", key, "=", text,
             ": expected an integer >= 2 or a fraction in (0, 1]");
    s = static_cast<int64_t>(value);
  }
  BL_CHECK(s <= n, est, ": ", key, "=", text, " must be no greater than the number of samples (", n, ")");
  return s;
}

}  // namespace density_detail

namespace {

using K = lin::ParamSpec::Kind;
namespace dd = density_detail;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The steep-area search of step 3 (xi): the last steep point of the area that starts at `start`,
// where at most min_samples consecutive points may be neither steep nor against the direction.
int64_t extend_region(const std::vector<char>& steep, const std::vector<char>& against, int64_t start,
                      int64_t min_samples) {
  const int64_t n = static_cast<int64_t>(steep.size());
  int64_t other = 0, end = start;
  for (int64_t k = start; k < n; ++k) {
    if (steep[k]) {
      other = 0;
      end = k;
    } else if (!against[k]) {
      if (++other > min_samples) break;
    } else {
      return end;
    }
  }
  return end;
}

struct SteepDown {
  int64_t start, end;
  double mib;
};

// The predecessor correction (Schubert and Gertz's Algorithm 2) of cluster [s, e] of the plot:
// false when the cluster vanishes.
bool correct_predecessor(const std::vector<double>& r, const std::vector<int64_t>& pred_plot,
                         const std::vector<int64_t>& ordering, int64_t& s, int64_t& e) {
  while (s < e) {
    if (r[s] > r[e]) return true;
    const int64_t p = pred_plot[e];
    for (int64_t k = s; k < e; ++k)
      if (p == ordering[k]) return true;
    --e;
  }
  return false;
}

// The xi clusters as (start, end) positions in the ordering, smaller ones first (step 3).
std::vector<int64_t> xi_clusters(const std::vector<double>& reach, const std::vector<int64_t>& pred,
                                 const std::vector<int64_t>& ordering, double xi, int64_t min_samples,
                                 int64_t min_cluster_size, bool correction) {
  const int64_t n = static_cast<int64_t>(ordering.size());
  std::vector<double> r(static_cast<size_t>(n + 1), kInf);
  std::vector<int64_t> pred_plot(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    r[k] = reach[ordering[k]];
    pred_plot[k] = pred[ordering[k]];
  }
  const double xc = 1.0 - xi, down_limit = 1.0 / xc;
  std::vector<char> up_steep(n), down_steep(n), down(n), up(n);
  for (int64_t k = 0; k < n; ++k) {
    const double ratio = r[k] / r[k + 1];  // NaN for inf / inf: no comparison holds
    up_steep[k] = ratio <= xc;
    down_steep[k] = ratio >= down_limit;
    down[k] = ratio > 1.0;
    up[k] = ratio < 1.0;
  }
  std::vector<SteepDown> sdas;
  std::vector<int64_t> clusters;
  int64_t index = 0;
  double mib = 0.0;
  auto filter = [&]() {
    if (std::isinf(mib)) {
      sdas.clear();
      return;
    }
    std::vector<SteepDown> kept;
    for (SteepDown s : sdas)
      if (mib <= r[s.start] * xc) {
        s.mib = std::max(s.mib, mib);
        kept.push_back(s);
      }
    sdas.swap(kept);
  };
  for (int64_t si = 0; si < n; ++si) {
    if (!(up_steep[si] || down_steep[si]) || si < index) continue;
    for (int64_t k = index; k <= si; ++k) mib = std::max(mib, r[k]);
    filter();
    if (down_steep[si]) {
      const int64_t end = extend_region(down_steep, up, si, min_samples);
      sdas.push_back({si, end, 0.0});
      index = end + 1;
      mib = r[index];
      continue;
    }
    const int64_t u_start = si, u_end = extend_region(up_steep, down, si, min_samples);
    index = u_end + 1;
    mib = r[index];
    std::vector<int64_t> found;
    for (const SteepDown& D : sdas) {
      int64_t cs = D.start, ce = u_end;
      if (r[ce + 1] * xc < D.mib) continue;
      const double d_max = r[D.start];
      if (d_max * xc >= r[ce + 1]) {
        while (r[cs + 1] > r[ce + 1] && cs < D.end) ++cs;
      } else if (r[ce + 1] * xc >= d_max) {
        while (ce > u_start && r[ce - 1] > d_max) --ce;
      }
      if (correction && !correct_predecessor(r, pred_plot, ordering, cs, ce)) continue;
      if (ce - cs + 1 < min_cluster_size || cs > D.end || ce < u_start) continue;
      found.push_back(cs);
      found.push_back(ce);
    }
    for (size_t k = found.size(); k >= 2; k -= 2) {  // smaller (later) clusters first
      clusters.push_back(found[k - 2]);
      clusters.push_back(found[k - 1]);
    }
  }
  return clusters;
}

class Optics final : public dd::NearestLabelClusterer {
 public:
  Optics()
      : dd::NearestLabelClusterer("optics", {{"cluster_method", K::choice, "xi", 0, {"xi", "dbscan"}},
                                             {"eps", K::number_or_word, "none", 0.0, {"none"}},
                                             {"max_eps", K::number_or_word, "inf", 0.0, {"inf"}},
                                             {"metric", K::choice, "euclidean", 0, {"euclidean", "minkowski"}},
                                             {"min_cluster_size", K::number_or_word, "none", 0.0, {"none"}, true},
                                             {"min_samples", K::number, "5", 0.0, {}, true},
                                             {"predecessor_correction", K::boolean, "true"},
                                             {"xi", K::number, "0.05", 0.0}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const double xi = params_.number("xi");
    BL_CHECK(xi <= 1.0, name_, ": parameter xi=", params_.text("xi"), ": expected a number in [0, 1]");
    const std::string& me_text = params_.text("max_eps");
    const double max_eps = me_text == "inf" ? kInf : params_.number("max_eps");
    const bool dbscan = params_.text("cluster_method") == "dbscan";
    double eps = max_eps;
    if (dbscan && params_.text("eps") != "none") {
      eps = params_.number("eps");
      BL_CHECK(eps <= max_eps, name_, ": eps=", params_.text("eps"), " must not exceed max_eps=", me_text);
    }
    rows_ = dd::host_rows(X);
    const int64_t n = rows_.n;
    const int64_t min_samples =
        dd::size_or_fraction(params_.number("min_samples"), n, name_, "min_samples", params_.text("min_samples"));
    // Step 1.
    core_ = dd::kth_neighbor_distances(rows_, min_samples);
    for (double& c : core_) c = dd::round_15_decimals(c > max_eps ? kInf : c);
    // Step 2.
    reach_.assign(static_cast<size_t>(n), kInf);
    pred_.assign(static_cast<size_t>(n), -1);
    ordering_.clear();
    std::vector<char> done(static_cast<size_t>(n), 0);
    std::vector<double> dist;
    for (int64_t k = 0; k < n; ++k) {
      int64_t p = -1;
      for (int64_t j = 0; j < n; ++j)
        if (!done[j] && (p < 0 || reach_[j] < reach_[p])) p = j;
      done[p] = 1;
      ordering_.push_back(p);
      if (core_[p] != kInf) {
        dd::distances_from(rows_, p, dist, &done);
        for (int64_t j = 0; j < n; ++j) {
          if (done[j] || !(dist[j] <= max_eps)) continue;
          const double v = dd::round_15_decimals(std::max(dist[j], core_[p]));
          if (v < reach_[j]) {
            reach_[j] = v;
            pred_[j] = p;
          }
        }
      }
      report_progress("optics ordering", k + 1, n);
    }
    // Step 3.
    labels_.assign(static_cast<size_t>(n), -1);
    hierarchy_.clear();
    if (dbscan) {
      int64_t label = -1;
      for (int64_t p : ordering_) {
        const bool far = reach_[p] > eps, near_core = core_[p] <= eps;
        if (far && near_core) ++label;
        labels_[p] = far && !near_core ? -1 : label;
      }
    } else {
      const std::string& mcs_text = params_.text("min_cluster_size");
      const int64_t mcs = mcs_text == "none" ? min_samples
                                             : dd::size_or_fraction(params_.number("min_cluster_size"), n, name_,
                                                                    "min_cluster_size", mcs_text);
      hierarchy_ = xi_clusters(reach_, pred_, ordering_, xi, min_samples, mcs, params_.boolean("predecessor_correction"));
      std::vector<int64_t> plot(static_cast<size_t>(n), -1);
      int64_t label = 0;
      for (size_t c = 0; c < hierarchy_.size(); c += 2) {
        const int64_t s = hierarchy_[c], e = hierarchy_[c + 1];
        if (std::all_of(plot.begin() + s, plot.begin() + e + 1, [](int64_t v) { return v == -1; })) {
          std::fill(plot.begin() + s, plot.begin() + e + 1, label);
          ++label;
        }
      }
      for (int64_t k = 0; k < n; ++k) labels_[ordering_[k]] = plot[k];
    }
    fitted_ = true;
    return *this;
  }

  void save_state(nlohmann::json& state) const override {
    save_labelled_rows(state);
    state["ordering"] = ordering_;
    state["predecessor"] = pred_;
    state["cluster_hierarchy"] = hierarchy_;
    state["core_distances_f64"] = dd::f64_to_hex(core_);
    state["reachability_f64"] = dd::f64_to_hex(reach_);
  }

  void load_state(const nlohmann::json& state) override {
    int64_t n = 0, d = 0;
    load_labels(state, 1, n, d);
    ordering_ = dd::ints_from_state(state, "ordering", n, 0, n, name_);
    pred_ = dd::ints_from_state(state, "predecessor", n, -1, n, name_);
    hierarchy_ = dd::ints_from_state(state, "cluster_hierarchy", -1, 0, n, name_);
    BL_CHECK(hierarchy_.size() % 2 == 0, name_, ": model state: cluster_hierarchy must hold (start, end) pairs");
    core_ = dd::f64_from_state(state, "core_distances_f64", n, name_);
    reach_ = dd::f64_from_state(state, "reachability_f64", n, name_);
    load_train_rows(state, n, d);
    fitted_ = true;
  }

 private:
  std::vector<double> core_, reach_;
  std::vector<int64_t> ordering_, pred_, hierarchy_;
};

}  // namespace

std::unique_ptr<Estimator> make_optics() { return std::make_unique<Optics>(); }

}  // namespace bl::ml
