// mean_shift.cpp: mean_shift, flat-kernel mean shift (scikit-learn's MeanShift). Everything runs on
// the host in binary64 in the fixed orders below, so the result does not depend on X's device or
// the thread count (the pool splits independent rows or seeds, each writing its own slot).
//
// Distances: the squared distance of two points is sum_f (a_f - b_f)^2 in binary64 (float32 values
// converted exactly), in feature order from +0; "within the bandwidth h" is that sum <= h * h.
// 1. Bandwidth. Given, or estimated as scikit-learn's estimate_bandwidth (quantile 0.3): with
//    k = max(1, floor(n * 0.3)) (the product in binary64), the mean over the rows, summed in row
//    order, of the distance sqrt(.) to the row's k-th nearest row, the row itself counted.
// 2. Seeds. bin_seeding=false: every row in order. bin_seeding=true (scikit-learn's get_bin_seeds):
//    each row binned to round_half_even(x / h) per feature (binary32 operations when h is given, as
//    NumPy does with a Python float; binary64 when h was estimated), bins kept in order of first
//    occurrence when they hold >= min_bin_freq rows, seed = bin * h in the same precision; when
//    every row has its own bin the rows are the seeds.
// 3. Each seed m climbs independently: the rows within h of m (ascending row order) are summed in
//    binary64 and m becomes the sum / count per feature; the climb stops when
//    sqrt(sum_f (m_f - m_old_f)^2) <= 1e-3 h or after max_iter shifts (max_iter + 1 means), or
//    when no row lies within h (the seed is then dropped). n_iter = the most shifts of any seed.
// 4. Post-processing as scikit-learn: each end point rounded to binary32 is a center; equal centers
//    are one (its position of first occurrence, its last count). Centers sorted by (count,
//    coordinates) descending, the coordinates compared lexicographically. In that order a center
//    not yet removed removes every other center within h of it. labels: the nearest kept center
//    (lowest index on ties); with cluster_all=false a row whose distance exceeds h gets -1.
// predict: the nearest center (lowest index on ties), as scikit-learn's.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/density_clustering.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

namespace dd = density_detail;

// Index of the nearest of the k rows of C [k, d] to q (lowest index on ties) and its squared distance.
template <class T>
std::pair<int64_t, double> nearest(const T* q, const std::vector<float>& C, int64_t k, int64_t d) {
  return dd::nearest_index(k, [&](int64_t c) { return dd::sq_distance(q, C.data() + c * d, d); });
}

double estimate_bandwidth(const std::vector<float>& x, int64_t n, int64_t d) {
  int64_t k = static_cast<int64_t>(static_cast<double>(n) * 0.3);
  if (k < 1) k = 1;
  std::vector<double> kth(static_cast<size_t>(n));
  default_pool().parallel_for(n, [&](int64_t i) {
    std::vector<double> r(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) r[j] = dd::sq_distance(x.data() + i * d, x.data() + j * d, d);
    std::nth_element(r.begin(), r.begin() + (k - 1), r.end());
    kth[i] = std::sqrt(r[k - 1]);
  });
  double s = 0.0;
  for (double v : kth) s += v;
  return s / static_cast<double>(n);
}

// Round half to even of a binary64 value (an integer-valued result).
double round_even(double v) { return std::nearbyint(v); }

class MeanShift final : public lin::ParamEstimator {
 public:
  MeanShift()
      : lin::ParamEstimator("mean_shift", {{"bandwidth", K::number_or_word, "none", 0.0, {"none"}, true},
                                           {"bin_seeding", K::boolean, "false"},
                                           {"cluster_all", K::boolean, "true"},
                                           {"max_iter", K::integer, "300", 0},
                                           {"min_bin_freq", K::integer, "1", 1}}) {}

  Estimator& fit(const Tensor& X, const Tensor&) override {
    check_X(name_, X);
    const int64_t n = X.dim(0), d = X.dim(1);
    BL_CHECK(n <= (int64_t{1} << 20), name_, ": ", n, " rows exceed the limit of 2^20 (every row seeds a climb)");
    const std::vector<float> x = X.to(Device::cpu()).contiguous().to_vector<float>();
    const bool given = params_.text("bandwidth") != "none";
    const double h = given ? params_.number("bandwidth") : estimate_bandwidth(x, n, d);
    BL_CHECK(h > 0.0, name_, ": the estimated bandwidth is 0 (every row's nearest neighbors coincide); set bandwidth");
    const double h2 = h * h, stop = 1e-3 * h;
    const int64_t max_iter = params_.integer("max_iter");

    // Seeds (step 2).
    std::vector<double> seeds;
    int64_t s_count = n;
    if (params_.boolean("bin_seeding")) {
      const int64_t min_freq = params_.integer("min_bin_freq");
      const float hf = static_cast<float>(h);
      std::map<std::vector<float>, int64_t> index;
      std::vector<std::vector<float>> bins;
      std::vector<int64_t> freq;
      for (int64_t i = 0; i < n; ++i) {
        std::vector<float> b(static_cast<size_t>(d));
        for (int64_t f = 0; f < d; ++f) {
          const float v = x[i * d + f];
          b[f] = given ? static_cast<float>(round_even(static_cast<double>(v / hf)))
                       : static_cast<float>(round_even(static_cast<double>(v) / h));
        }
        auto [it, fresh] = index.emplace(b, static_cast<int64_t>(bins.size()));
        if (fresh) {
          bins.push_back(b);
          freq.push_back(0);
        }
        ++freq[it->second];
      }
      std::vector<double> bs;
      int64_t kept = 0;
      for (size_t k = 0; k < bins.size(); ++k) {
        if (freq[k] < min_freq) continue;
        ++kept;
        for (float q : bins[k])
          bs.push_back(given ? static_cast<double>(q * hf) : static_cast<double>(q) * h);
      }
      if (kept != n) {
        seeds = std::move(bs);
        s_count = kept;
      }
    }
    if (static_cast<int64_t>(seeds.size()) != s_count * d) seeds.assign(x.begin(), x.end());

    // Climbs (step 3).
    std::vector<double> ends(static_cast<size_t>(s_count * d));
    std::vector<int64_t> counts(static_cast<size_t>(s_count)), iters(static_cast<size_t>(s_count));
    default_pool().parallel_for(s_count, [&](int64_t s) {
      std::vector<double> m(seeds.begin() + s * d, seeds.begin() + (s + 1) * d), sum(static_cast<size_t>(d));
      int64_t it = 0, count = 0;
      for (;;) {
        std::fill(sum.begin(), sum.end(), 0.0);
        int64_t c = 0;
        for (int64_t j = 0; j < n; ++j) {
          const float* r = x.data() + j * d;
          if (dd::sq_distance(m.data(), r, d) <= h2) {
            for (int64_t f = 0; f < d; ++f) sum[f] += static_cast<double>(r[f]);
            ++c;
          }
        }
        count = c;
        if (c == 0) break;
        double shift = 0.0;
        for (int64_t f = 0; f < d; ++f) {
          const double v = sum[f] / static_cast<double>(c), t = v - m[f];
          shift += t * t;
          m[f] = v;
        }
        if (std::sqrt(shift) <= stop || it == max_iter) break;
        ++it;
      }
      std::copy(m.begin(), m.end(), ends.begin() + s * d);
      counts[s] = count;
      iters[s] = it;
    });
    n_iter_ = 0;
    for (int64_t v : iters) n_iter_ = std::max(n_iter_, v);

    // Centers (step 4).
    std::map<std::vector<float>, size_t> where;
    std::vector<std::pair<std::vector<float>, int64_t>> cand;
    for (int64_t s = 0; s < s_count; ++s) {
      if (counts[s] == 0) continue;
      std::vector<float> c(static_cast<size_t>(d));
      for (int64_t f = 0; f < d; ++f) c[f] = static_cast<float>(ends[s * d + f]);
      auto [it, fresh] = where.emplace(c, cand.size());
      if (fresh) cand.push_back({c, counts[s]});
      else cand[it->second].second = counts[s];
    }
    BL_CHECK(!cand.empty(), name_, ": no row lies within bandwidth=", h,
             " of any seed; use another seeding or a larger bandwidth");
    std::stable_sort(cand.begin(), cand.end(), [](const auto& a, const auto& b) {
      if (a.second != b.second) return a.second > b.second;
      return b.first < a.first;
    });
    const int64_t c_all = static_cast<int64_t>(cand.size());
    std::vector<char> unique(static_cast<size_t>(c_all), 1);
    for (int64_t i = 0; i < c_all; ++i) {
      if (!unique[i]) continue;
      for (int64_t j = 0; j < c_all; ++j)
        if (dd::sq_distance(cand[i].first.data(), cand[j].first.data(), d) <= h2) unique[j] = 0;
      unique[i] = 1;
    }
    centers_.clear();
    for (int64_t i = 0; i < c_all; ++i)
      if (unique[i]) centers_.insert(centers_.end(), cand[i].first.begin(), cand[i].first.end());
    k_ = static_cast<int64_t>(centers_.size()) / d;
    d_ = d;
    const bool all = params_.boolean("cluster_all");
    labels_.assign(static_cast<size_t>(n), 0);
    default_pool().parallel_for(n, [&](int64_t i) {
      auto [arg, best] = nearest(x.data() + i * d, centers_, k_, d);
      labels_[i] = (all || std::sqrt(best) <= h) ? arg : -1;
    });
    bandwidth_ = h;
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    check_predict_input(X, d_);
    const int64_t m = X.dim(0);
    std::vector<float> q = X.to(Device::cpu()).contiguous().to_vector<float>();
    std::vector<int64_t> out(static_cast<size_t>(m));
    default_pool().parallel_for(m, [&](int64_t i) { out[i] = nearest(q.data() + i * d_, centers_, k_, d_).first; });
    return Tensor::from_vector(out, {m}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_clusters", k_}, {"n_iter", n_iter_},
                          {"n_samples", static_cast<int64_t>(labels_.size())}});
    state["labels"] = labels_;
    lin::put_f32(state, "cluster_centers", centers_);
    int64_t bits;
    std::memcpy(&bits, &bandwidth_, sizeof bits);
    state["bandwidth_f64"] = i64_to_hex({bits});
  }

  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    k_ = lin::get_int(state, "n_clusters", 1, name_);
    BL_CHECK(k_ <= (int64_t{1} << 40) / d_, name_, ": model state: n_clusters x n_features is too large");
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    centers_ = lin::get_f32(state, "cluster_centers", k_ * d_, name_);
    BL_CHECK(state.contains("labels") && state["labels"].is_array(), name_, ": model state: labels must be an array");
    labels_.clear();
    for (const auto& v : state["labels"]) {
      BL_CHECK(v.is_number_integer() && v.get<int64_t>() >= -1 && v.get<int64_t>() < k_, name_,
               ": model state: labels must hold integers in [-1, ", k_, ")");
      labels_.push_back(v.get<int64_t>());
    }
    const int64_t n = lin::get_int(state, "n_samples", 1, name_);
    BL_CHECK(static_cast<int64_t>(labels_.size()) == n, name_, ": model state: labels has ", labels_.size(),
             " entries, n_samples is ", n);
    BL_CHECK(state.contains("bandwidth_f64") && state["bandwidth_f64"].is_string(), name_,
             ": model state: bandwidth_f64 must be a hex string");
    std::vector<int64_t> bits = i64_from_hex(state["bandwidth_f64"].get<std::string>(), "bandwidth_f64");
    BL_CHECK(bits.size() == 1, name_, ": model state: bandwidth_f64 must hold one value");
    std::memcpy(&bandwidth_, bits.data(), sizeof bandwidth_);
    fitted_ = true;
  }

 private:
  std::vector<float> centers_;
  std::vector<int64_t> labels_;
  double bandwidth_ = 0.0;
  int64_t d_ = 0, k_ = 0, n_iter_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_mean_shift() { return std::make_unique<MeanShift>(); }

}  // namespace bl::ml
