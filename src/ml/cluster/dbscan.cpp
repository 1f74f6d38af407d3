// dbscan.cpp: dbscan, density-based clustering (scikit-learn's DBSCAN, metric euclidean).
//
// Neighborhoods (dbscan_neighbors.h): j is a neighbor of i when P_ij <= eps^2, P_ij being the
// exact-path squared distance sum_f (x_if - x_jf)^2 (Tensor ops on X's device: sub, square, then a
// sum over the d features in the contract's reduction schedule), eps^2 formed as eps * eps in
// binary64 and rounded once to binary32 (so a pair exactly eps apart is a neighbor, as
// scikit-learn's dist <= eps). Neighbor lists are in ascending index order.
// They are found in two steps, neither of which can change a list:
//   1. Prefilter. Query rows [s, s + 256) against rows [s, n) (P is symmetric, so each unordered
//      pair is looked at once), in tiles of 256 x 2048 rows (2048 x 8192 on a GPU): the contract
//      GEMM product x_i.x_j (bl::matmul on X's device; |x|^2 from row_sq_norms of distances.h),
//      then on the host, in binary32, the contract GEMM distance
//      D_ij = (-2 x_i.x_j + |x_i|^2) + |x_j|^2 (the operations of sq_distances; its final relu
//      only raises values, so leaving it out drops no more pairs) and the bound
//      B_ij = K xb_i + (K xb_j + E), where xb is |x|^2 with values >= 2^125 replaced by +inf.
//      A pair is dropped only when D_ij > B_ij (so a NaN keeps it). One pool task per query row;
//      each writes only its row, so the thread count does not reach the result.
//   2. For the kept pairs of a tile (i ascending, then j ascending), P_ij by the same ops on the
//      gathered rows ([m, d] differences reduced along d: the schedule depends only on d, so the
//      bits are those of the all-pairs [a, n, d] form), in batches of at most 2^22 / d pairs
//      padded with their last pair to a power of two. When a block's tiles are done, its rows in
//      ascending order take their neighbors j >= i and hand themselves to each neighbor j > i; a
//      row's neighbors below it all came from the rows before it, so each list comes out
//      ascending.
// The bound. u = 2^-24, g = gamma_{d+3} = (d+3)u / (1 - (d+3)u), mu = 2^-149 (gradual underflow:
// a product or fma rounded into the subnormal range errs by at most mu/2, a sum landing there is
// exact). N_i = |x_i|^2 and S_ij = sum_f (x_if - x_jf)^2 exactly, in real numbers.
//   (a) Exact path: every term goes through one subtraction, one square and at most d - 1
//       additions of nonnegative values, so P_ij >= (1 - gamma_{d+2}) S_ij - d mu. Hence
//       P_ij <= eps^2 gives S_ij <= eps^2 (1 + 2g) + 2 d mu. (P is finite there: a sum of
//       nonnegative terms that overflowed would be +inf.)
//   (b) GEMM path, both computed norms < 2^125: nothing overflows (every partial dot product is
//       below 2^126, the two sums below 2^128). The norms carry at most d roundings each
//       (|xx_i - N_i| <= gamma_d N_i + d mu), the dot product at most d fma roundings
//       (|xc - x_i.x_j| <= gamma_d |x_i| |x_j| + d mu <= gamma_d (N_i + N_j) / 2 + d mu), -2 xc is
//       exact, and the two additions add at most u (1 + u) |-2 xc + xx_i| + u |sum| <=
//       4u (1 + gamma_d) (N_i + N_j) + d mu. So D_ij <= S_ij + 2g (N_i + N_j) + 5 d mu.
//   (c) With (a), and N <= (1 + 2 gamma_d) xx + 2 d mu from (b), a pair with P_ij <= eps^2 has
//       D_ij <= eps^2 + m_ij, m_ij = 2g (eps^2 + (1 + 2g)(xx_i + xx_j)) + 8 d mu.
//   (d) K = 8g and E = eps^2 (1 + 8g) + d 2^-140 are rounded up to binary32 (4x the factors 2g
//       of (c), 64x its absolute term); the three binary32 roundings of B lose at most a factor (1 - u)^3
//       and mu, so B_ij >= eps^2 + m_ij whenever g <= 1/8 (else K = E = +inf: no pair is dropped).
//       A norm >= 2^125 gives B_ij = +inf, E = +inf (eps^2 overflowed) likewise.
//   So a pair with P_ij <= eps^2 always reaches step 2, and the lists are those of the all-pairs
//   rule (neighborhoods_all_pairs, the reference kept for the tests).
// Core points: a neighborhood (the point itself included) of at least min_samples rows.
// Labels, as scikit-learn's dbscan_inner: points are visited in ascending index; an unlabeled
// core point starts cluster 0, 1, 2, ...; the cluster grows depth-first with a stack, every core
// point pushing its unlabeled neighbors in ascending order; a point keeps the first label it gets
// (so a border point reachable from two clusters goes to the one started first). The rest is
// noise, -1.
// predict (an extension; scikit-learn's DBSCAN has none): a row takes the label of its nearest
// core sample (lowest index on ties) when that one is within eps, else -1. On the training rows
// this is the fit labels for core and noise points; a border point takes its nearest core point's
// cluster. The same prefilter (rows of X in tiles against the core samples) keeps every core
// sample with P <= eps^2, hence the smallest P and all its ties whenever that is <= eps^2; among
// the kept ones with P <= eps^2 the smallest P wins, the lowest index on ties.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "bitlearn/ml/progress.h"
#include "bitlearn/ops.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/cluster/dbscan_neighbors.h"
#include "ml/cluster/distances.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace dbscan_detail {

namespace {

constexpr int64_t kBlockElems = int64_t{1} << 24;  // [a, b, d] blocks of the all-pairs reference
constexpr int64_t kExactElems = int64_t{1} << 22;  // [m, d] batches of candidate pairs

// Squared distances [a, b] of the rows of A [a, d] to the rows of B [b, d] (exact path).
Tensor sq_diff_distances(const Tensor& A, const Tensor& B) {
  const int64_t a = A.dim(0), b = B.dim(0), d = A.dim(1);
  return bl::sum(bl::square(bl::sub(A.contiguous().reshape({a, 1, d}), B.reshape({1, b, d}))), {2});
}

int64_t block_rows(int64_t b, int64_t d) { return std::max<int64_t>(1, kBlockElems / std::max<int64_t>(1, b * d)); }

// x rounded up to binary32 (+inf beyond the range, NaN stays NaN).
float round_up(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) < x) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

// The prefilter's per-row values on the host (the file header, step 1 and (d)): the norms xx of
// row_sq_norms, kx = K * xb and kxe = kx + E (binary32 operations).
struct Prefilter {
  std::vector<float> xx, kx, kxe;
};

Prefilter make_prefilter(const Tensor& X, float eps2, double margin_scale) {
  const double d = static_cast<double>(X.dim(1)), ku = (d + 3.0) * std::ldexp(1.0, -24);
  const float inf = std::numeric_limits<float>::infinity(), huge = std::ldexp(1.0f, 125);
  float k = inf, e = inf;
  if (ku <= 0.125) {
    const double g = ku / (1.0 - ku);
    k = round_up(margin_scale * 8.0 * g);
    e = round_up(static_cast<double>(eps2) + margin_scale * (8.0 * g * eps2 + d * std::ldexp(1.0, -140)));
  }
  Prefilter p;
  p.xx = row_sq_norms(X).to(Device::cpu()).contiguous().to_vector<float>();
  p.kx.resize(p.xx.size());
  p.kxe.resize(p.xx.size());
  for (size_t i = 0; i < p.xx.size(); ++i) {
    p.kx[i] = k * (p.xx[i] < huge ? p.xx[i] : inf);
    p.kxe[i] = p.kx[i] + e;
  }
  return p;
}

// Appends to cand the columns c in [c0, b) of a row of far flags (0 / 1 bytes) that are 0.
void append_kept(const uint8_t* row, int64_t b, int64_t c0, std::vector<int64_t>& cand) {
  constexpr uint64_t kAllFar = 0x0101010101010101ULL;
  int64_t c = c0;
  for (; c < b && (c & 7); ++c)
    if (!row[c]) cand.push_back(c);
  for (; c + 8 <= b; c += 8) {
    uint64_t w;
    std::memcpy(&w, row + c, 8);
    if (w == kAllFar) continue;
    for (int64_t t = 0; t < 8; ++t)
      if (!row[c + t]) cand.push_back(c + t);
  }
  for (; c < b; ++c)
    if (!row[c]) cand.push_back(c);
}

// P of the pairs (ia[k] of A, ib[k] of B) on A's device, in batches of [m, d] differences. A
// batch is padded (with its last pair) to a power of two rows, so that few shapes recur.
std::vector<float> exact_pair_sq_distances(const Tensor& A, const std::vector<int64_t>& ia, const Tensor& B,
                                           const std::vector<int64_t>& ib) {
  const int64_t total = static_cast<int64_t>(ia.size()), d = A.dim(1);
  int64_t batch = 1;
  while (batch * 2 * d <= kExactElems) batch *= 2;
  const Device dev = A.device();
  std::vector<float> out;
  out.reserve(ia.size());
  std::vector<int64_t> a, b;
  for (int64_t k0 = 0; k0 < total; k0 += batch) {
    const int64_t m = std::min(total, k0 + batch) - k0;
    int64_t mp = 1;
    while (mp < m) mp *= 2;
    a.assign(ia.begin() + k0, ia.begin() + k0 + m);
    b.assign(ib.begin() + k0, ib.begin() + k0 + m);
    a.resize(static_cast<size_t>(mp), a.back());
    b.resize(static_cast<size_t>(mp), b.back());
    Tensor P = bl::sum(bl::square(bl::sub(bl::index_select(A, 0, Tensor::from_vector(a, {mp}, dev)),
                                          bl::index_select(B, 0, Tensor::from_vector(b, {mp}, dev)))),
                       {1});
    std::vector<float> p = P.to(Device::cpu()).contiguous().to_vector<float>();
    out.insert(out.end(), p.begin(), p.begin() + m);
  }
  return out;
}

// The pairs of query rows [qs, qe) of Q and rows [rs, re) of R that the prefilter keeps, with
// j >= i when `upper` (Q and R the same rows), into ci / cj in ascending i, then j. The GEMM
// product x_i.x_j is a Tensor op on the device; D_ij = (-2 x_i.x_j + xx_i) + xx_j (the operations
// of sq_distances, without its relu, which only raises values: without it no more pairs are
// dropped) and the test D_ij > kx_i + kxe_j run on the host, one pool task per query row (each
// writes only its own row, so the thread count does not matter).
void kept_pairs(const Tensor& Q, const Prefilter& pq, int64_t qs, int64_t qe, const Tensor& R, const Prefilter& pr,
                int64_t rs, int64_t re, bool upper, std::vector<int64_t>& ci, std::vector<int64_t>& cj) {
  const int64_t a = qe - qs, b = re - rs;
  Tensor xc = bl::matmul(Q.slice(0, qs, qe), R.slice(0, rs, re), false, true).to(Device::cpu()).contiguous();
  const float* g = xc.data<float>();
  std::vector<uint8_t> far(static_cast<size_t>(a * b));
  std::vector<std::vector<int64_t>> cols(static_cast<size_t>(a));
  const float* rxx = pr.xx.data() + rs;
  const float* rkxe = pr.kxe.data() + rs;
  default_pool().parallel_for(a, [&](int64_t r) {
    const int64_t c0 = upper ? std::min(b, std::max<int64_t>(0, qs + r - rs)) : 0;
    const float xi = pq.xx[qs + r], ki = pq.kx[qs + r];
    const float* gr = g + r * b;
    const float* jxx = rxx;
    const float* jkxe = rkxe;
    uint8_t* fr = far.data() + r * b;
    const int64_t end = b;  // locals: the stores below may not alias the loop's bounds
    for (int64_t c = c0; c < end; ++c) {
      const float dij = (-2.0f * gr[c] + xi) + jxx[c];
      fr[c] = dij > ki + jkxe[c];
    }
    append_kept(fr, end, c0, cols[r]);
  });
  ci.clear();
  cj.clear();
  for (int64_t r = 0; r < a; ++r)
    for (int64_t c : cols[r]) {
      ci.push_back(qs + r);
      cj.push_back(rs + c);
    }
}

}  // namespace

Tiles tiles_for(Device device) {
  const int64_t elems = tile_bytes_hint(device) / static_cast<int64_t>(sizeof(float));
  Tiles t{256, 2048};
  while (t.rows * 2 * t.cols * 2 <= elems) {
    t.rows *= 2;
    t.cols *= 2;
  }
  return t;
}

Lists neighborhoods(const Tensor& X, float eps2, int64_t max_pairs, const std::string& context,
                    double margin_scale, Tiles tiles) {
  if (tiles.rows == 0) tiles = tiles_for(X.device());
  BL_CHECK(tiles.rows > 0 && tiles.cols % tiles.rows == 0, "dbscan tiles: cols must be a multiple of rows");
  const int64_t n = X.dim(0), tr = tiles.rows, tc = tiles.cols;
  Tensor Xc = X.contiguous();
  const Prefilter pf = make_prefilter(Xc, eps2, margin_scale);
  Lists lists(static_cast<size_t>(n));
  int64_t total = 0;
  std::vector<int64_t> ci, cj;
  for (int64_t s = 0; s < n; s += tr) {
    const int64_t e = std::min(n, s + tr);
    // Neighbors j >= i of the block's rows, over column tiles in ascending order.
    Lists up(static_cast<size_t>(e - s));
    for (int64_t t = s / tc * tc; t < n; t += tc) {
      kept_pairs(Xc, pf, s, e, Xc, pf, t, std::min(n, t + tc), true, ci, cj);
      std::vector<float> p = exact_pair_sq_distances(Xc, ci, Xc, cj);
      for (size_t k = 0; k < p.size(); ++k)
        if (p[k] <= eps2) up[ci[k] - s].push_back(cj[k]);
    }
    // Row i already holds its neighbors below i (from the rows before it); it gets j >= i now and
    // hands itself to every neighbor j > i.
    for (int64_t i = s; i < e; ++i)
      for (int64_t j : up[i - s]) {
        lists[i].push_back(j);
        ++total;
        if (j != i) {
          lists[j].push_back(i);
          ++total;
        }
      }
    BL_CHECK(total <= max_pairs, context, " gives more than ", max_pairs, " neighbor pairs on ", n,
             " rows (the neighborhoods are too large to hold); use a smaller eps or fewer rows");
    report_progress("dbscan neighborhoods", e, n);
  }
  return lists;
}

Lists neighborhoods_all_pairs(const Tensor& X, float eps2) {
  const int64_t n = X.dim(0), d = X.dim(1);
  Tensor Xc = X.contiguous(), limit = Tensor::scalar(static_cast<double>(eps2), DType::f32, X.device());
  Lists lists(static_cast<size_t>(n));
  const int64_t rows = block_rows(n, d);
  for (int64_t s = 0; s < n; s += rows) {
    const int64_t e = std::min(n, s + rows);
    Tensor mask = bl::cast(bl::le(sq_diff_distances(Xc.slice(0, s, e), Xc), limit), DType::i32);
    std::vector<int32_t> m = mask.to(Device::cpu()).contiguous().to_vector<int32_t>();
    for (int64_t i = 0; i < e - s; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (m[i * n + j]) lists[s + i].push_back(j);
  }
  return lists;
}

std::vector<int64_t> nearest_within(const Tensor& Q, const Tensor& C, float eps2, double margin_scale,
                                    Tiles tiles) {
  if (tiles.rows == 0) tiles = tiles_for(Q.device());
  BL_CHECK(tiles.rows > 0 && tiles.cols % tiles.rows == 0, "dbscan tiles: cols must be a multiple of rows");
  const int64_t m = Q.dim(0), c = C.dim(0), tr = tiles.rows, tc = tiles.cols;
  Tensor Qc = Q.contiguous(), Cc = C.contiguous();
  const Prefilter pq = make_prefilter(Qc, eps2, margin_scale), pc = make_prefilter(Cc, eps2, margin_scale);
  std::vector<int64_t> out(static_cast<size_t>(m), -1), ci, cj;
  std::vector<float> best(static_cast<size_t>(m));
  for (int64_t s = 0; s < m; s += tr) {
    const int64_t e = std::min(m, s + tr);
    for (int64_t t = 0; t < c; t += tc) {
      kept_pairs(Qc, pq, s, e, Cc, pc, t, std::min(c, t + tc), false, ci, cj);
      std::vector<float> p = exact_pair_sq_distances(Qc, ci, Cc, cj);
      // The first smallest P of each row (j ascending over the tiles), kept when <= eps2.
      for (size_t k = 0; k < p.size(); ++k)
        if (p[k] <= eps2 && (out[ci[k]] < 0 || p[k] < best[ci[k]])) {
          out[ci[k]] = cj[k];
          best[ci[k]] = p[k];
        }
    }
  }
  return out;
}

std::vector<int64_t> nearest_within_all_pairs(const Tensor& Q, const Tensor& C, float eps2) {
  const int64_t m = Q.dim(0), c = C.dim(0), d = C.dim(1);
  std::vector<int64_t> out(static_cast<size_t>(m), -1);
  const int64_t rows = block_rows(c, d);
  for (int64_t s = 0; s < m; s += rows) {
    const int64_t e = std::min(m, s + rows);
    Tensor D = sq_diff_distances(Q.slice(0, s, e), C);
    std::vector<int64_t> arg = bl::argmin(D, 1).to(Device::cpu()).contiguous().to_vector<int64_t>();
    std::vector<float> dmin = bl::amin(D, {1}).to(Device::cpu()).contiguous().to_vector<float>();
    for (int64_t i = 0; i < e - s; ++i)
      if (dmin[i] <= eps2) out[s + i] = arg[i];
  }
  return out;
}

}  // namespace dbscan_detail

namespace {

using K = lin::ParamSpec::Kind;

constexpr int64_t kMaxPairs = int64_t{1} << 27;

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
    Tensor Xc = X.contiguous();
    const dbscan_detail::Lists nbr =
        dbscan_detail::neighborhoods(Xc, eps2, kMaxPairs, name_ + ": eps=" + params_.text("eps"));
    std::vector<char> core(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) core[i] = static_cast<int64_t>(nbr[i].size()) >= min_samples;
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
            for (int64_t j : nbr[i])
              if (labels_[j] == -1) stack.push_back(j);
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
    check_predict_input(X, d_);
    const int64_t m = X.dim(0), c = static_cast<int64_t>(core_.size());
    std::vector<int64_t> out(static_cast<size_t>(m), -1);
    if (c > 0) {
      const Device dev = X.device();
      Tensor C = Tensor::from_vector(components_, {c, d_}, dev);
      std::vector<int64_t> near = dbscan_detail::nearest_within(X, C, eps2_);
      for (int64_t i = 0; i < m; ++i)
        if (near[i] >= 0) out[i] = labels_[core_[near[i]]];
    }
    return Tensor::from_vector(out, {m}, X.device());
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_samples", n_}});
    state["labels"] = labels_;
    state["core_sample_indices"] = core_;
    lin::put_f32s(state, {{"components", components_}, {"eps_squared", {eps2_}}});
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
