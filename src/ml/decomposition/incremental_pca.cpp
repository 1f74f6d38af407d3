// incremental_pca.cpp: incremental_pca (scikit-learn's IncrementalPCA), principal components
// updated batch by batch.
//
// X is read in batches of batch_size rows (none: 5 * n_features), cut as scikit-learn's
// gen_batches with min_batch_size = n_components (a full batch that would leave fewer rows than that
// is joined to the last one). Per batch, in binary64 on the host with every sum in row order: the
// running column mean and variance by the pairwise update (new sums and squared deviations from the
// batch mean, merged with the previous counts); the matrix M = the batch centered on its mean (first
// batch) or [singular_values * components; batch - batch mean; sqrt(n_seen n_batch / n_total)
// (previous mean - batch mean)] (later batches); its singular values and right vectors from the
// eigen-decomposition of the smaller Gram matrix (M^T M, or M M^T when M has fewer rows than
// columns) by symmetric_eigen64; each component's entry of largest magnitude positive (scikit-learn's
// svd_flip on the right vectors). explained_variance = s^2 / (n_total - 1), the ratio s^2 over the sum
// of the column variances times n_total, noise_variance the mean explained variance of the
// components dropped. Stored values rounded once to binary32. transform = (X - mean) components^T
// (contract GEMM on X's device), over sqrt(explained_variance) with whiten.
#include <algorithm>
#include <cmath>

#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/decomposition/dense64.h"
#include "ml/decomposition/optional_count.h"
#include "ml/decomposition/symmetric_eigen64.h"
#include "ml/linear/common.h"
#include "ml/registry.h"
#include "ml/size_limits.h"
#include "ml/unsupervised_fit.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

// Singular values (descending, min(m, d) of them) and right singular vectors ([k, d], k <= min(m, d))
// of the [m, d] row-major binary64 matrix a, through the eigen-decomposition of the smaller Gram
// matrix (sums in ascending index order). Each vector's entry of largest magnitude is positive.
void thin_svd64(const std::vector<double>& a, int64_t m, int64_t d, int64_t k, std::vector<double>& s,
                std::vector<double>& v, const char* who) {
  const int64_t r = std::min(m, d);
  s.assign(static_cast<size_t>(r), 0.0);
  v.assign(static_cast<size_t>(k * d), 0.0);
  if (d <= m) {
    SymmetricEigen64 e = symmetric_eigen64(dec::column_gram_lower(a, m, d), d, k, who);
    for (int64_t t = 0; t < r; ++t) s[t] = std::sqrt(std::max(e.values[t], 0.0));
    std::copy(e.vectors.begin(), e.vectors.begin() + k * d, v.begin());
    return;
  }
  SymmetricEigen64 e = symmetric_eigen64(dec::row_gram_lower(a, m, d), m, k, who);
  for (int64_t t = 0; t < r; ++t) s[t] = std::sqrt(std::max(e.values[t], 0.0));
  for (int64_t t = 0; t < k; ++t)
    if (s[t] != 0.0) dec::right_vector_from_left(&e.vectors[t * m], a, m, d, s[t], &v[t * d]);
  dec::flip_rows_by_largest(v, k, d);
}

class IncrementalPCA final : public lin::ParamEstimator {
 public:
  IncrementalPCA()
      : lin::ParamEstimator("incremental_pca", {{"batch_size", K::number_or_word, "none", 1.0, {"none"}},
                                                {"n_components", K::number_or_word, "none", 1.0, {"none"}},
                                                {"whiten", K::boolean, "false"}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_unsupervised_X(name_, X, y, 2);
    const int64_t n = X.dim(0), d = X.dim(1);
    const int64_t want = dec::optional_count(params_, name_, "n_components", 0);
    BL_CHECK(want <= d, name_, ": n_components=", want, " must be at most the feature count (n_features=", d, ")");
    const int64_t batch = dec::optional_count(params_, name_, "batch_size", 5 * d);
    check_square_matrix(std::min(n, batch), d, "incremental_pca Gram matrix");
    const std::vector<double> xh = dec::to_host64(X);
    // gen_batches(n, batch, min_batch_size=want): a full batch leaving fewer than want rows is skipped.
    std::vector<int64_t> starts;
    int64_t start = 0;
    for (int64_t b = 0; b < n / batch; ++b) {
      if (start + batch + want > n) continue;
      starts.push_back(start);
      start += batch;
    }
    if (start < n) starts.push_back(start);
    starts.push_back(n);
    mean64_.assign(static_cast<size_t>(d), 0.0);
    var64_.assign(static_cast<size_t>(d), 0.0);
    comp64_.clear();
    sv64_.clear();
    seen_ = 0;
    for (size_t b = 0; b + 1 < starts.size(); ++b) partial_fit(xh, starts[b], starts[b + 1], d, want);
    d_ = d;
    batch_ = batch;
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_X(X, d_);
    const Device dev = X.device();
    Tensor Z = bl::matmul(bl::sub(X, Tensor::from_vector(mean_, {d_}, dev)),
                          Tensor::from_vector(components_, {k_, d_}, dev), false, true);
    if (!params_.boolean("whiten")) return Z;
    std::vector<float> s(variance_.size());
    for (size_t t = 0; t < s.size(); ++t) s[t] = variance_[t] > 0.0f ? std::sqrt(variance_[t]) : 1.0f;
    return bl::div(Z, Tensor::from_vector(s, {k_}, dev));
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_components", k_}, {"n_samples_seen", seen_}, {"batch_size_used", batch_}});
    lin::put_f32s(state, {{"mean", mean_},
                          {"var", var_},
                          {"components", components_},
                          {"singular_values", singular_},
                          {"explained_variance", variance_},
                          {"explained_variance_ratio", ratio_},
                          {"noise_variance_value", {noise_}}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    k_ = lin::get_int(state, "n_components", 1, name_);
    BL_CHECK(k_ <= d_, name_, ": model state: n_components ", k_, " > n_features ", d_);
    seen_ = lin::get_int(state, "n_samples_seen", 2, name_);
    batch_ = lin::get_int(state, "batch_size_used", 1, name_);
    BL_CHECK(seen_ < (int64_t{1} << 40) && batch_ < (int64_t{1} << 40), name_,
             ": model state: n_samples_seen or batch_size_used is too large");
    mean_ = lin::get_f32(state, "mean", d_, name_);
    var_ = lin::get_f32(state, "var", d_, name_);
    components_ = lin::get_f32(state, "components", k_ * d_, name_);
    singular_ = lin::get_f32(state, "singular_values", k_, name_);
    variance_ = lin::get_f32(state, "explained_variance", k_, name_);
    ratio_ = lin::get_f32(state, "explained_variance_ratio", k_, name_);
    noise_ = lin::get_f32(state, "noise_variance_value", 1, name_)[0];
    fitted_ = true;
  }

 private:
  // One batch, rows [r0, r1) of x [n, d]: updates the binary64 mean, variance, components and
  // singular values and the binary32 stored values.
  void partial_fit(const std::vector<double>& x, int64_t r0, int64_t r1, int64_t d, int64_t want) {
    const int64_t nb = r1 - r0;
    const int64_t k = want > 0 ? want : (seen_ == 0 ? std::min(nb, d) : static_cast<int64_t>(sv64_.size()));
    BL_CHECK(want == 0 || k <= nb, name_, ": n_components=", k, " must be at most the rows of each batch (a batch of ", nb,
             " rows; raise batch_size)");
    // Batch sums and squared deviations from the batch mean (row order), merged with the running ones.
    std::vector<double> bsum(static_cast<size_t>(d), 0.0), bmean(static_cast<size_t>(d)), dev(static_cast<size_t>(d), 0.0),
        corr(static_cast<size_t>(d), 0.0);
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < d; ++j) bsum[j] += x[i * d + j];
    const double last = static_cast<double>(seen_), nbd = static_cast<double>(nb), total = last + nbd;
    for (int64_t j = 0; j < d; ++j) bmean[j] = bsum[j] / nbd;
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < d; ++j) {
        const double t = x[i * d + j] - bmean[j];
        corr[j] += t;
        dev[j] += t * t;
      }
    std::vector<double> new_mean(static_cast<size_t>(d)), new_var(static_cast<size_t>(d));
    double var_sum = 0.0;
    for (int64_t j = 0; j < d; ++j) {
      const double last_sum = mean64_[j] * last;
      const double unnorm = dev[j] - corr[j] * corr[j] / nbd;
      double upd = unnorm;
      if (seen_ > 0) {
        const double ratio = last / nbd, gap = last_sum / ratio - bsum[j];
        upd = var64_[j] * last + unnorm + ratio / total * gap * gap;
      }
      new_mean[j] = (last_sum + bsum[j]) / total;
      new_var[j] = upd / total;
      var_sum += new_var[j] * total;
    }
    // M: the stacked matrix whose thin SVD gives the updated components.
    const int64_t kp = seen_ == 0 ? 0 : static_cast<int64_t>(sv64_.size());
    const int64_t m = kp + nb + (seen_ == 0 ? 0 : 1);
    std::vector<double> a(static_cast<size_t>(m * d));
    for (int64_t t = 0; t < kp; ++t)
      for (int64_t j = 0; j < d; ++j) a[t * d + j] = sv64_[t] * comp64_[t * d + j];
    const std::vector<double>& centre = seen_ == 0 ? new_mean : bmean;
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t j = 0; j < d; ++j) a[(kp + i) * d + j] = x[(r0 + i) * d + j] - centre[j];
    if (seen_ > 0) {
      const double f = std::sqrt(last / total * nbd);
      for (int64_t j = 0; j < d; ++j) a[(m - 1) * d + j] = f * (mean64_[j] - bmean[j]);
    }
    std::vector<double> s, v;
    thin_svd64(a, m, d, k, s, v, "incremental_pca");
    const int64_t r = static_cast<int64_t>(s.size());
    seen_ += nb;
    mean64_ = new_mean;
    var64_ = new_var;
    comp64_ = v;
    sv64_.assign(s.begin(), s.begin() + k);
    k_ = k;
    const double denom = total - 1.0;
    mean_.assign(new_mean.begin(), new_mean.end());
    var_.assign(new_var.begin(), new_var.end());
    components_.assign(v.begin(), v.end());
    singular_.resize(static_cast<size_t>(k));
    variance_.resize(static_cast<size_t>(k));
    ratio_.resize(static_cast<size_t>(k));
    for (int64_t t = 0; t < k; ++t) {
      const double s2 = s[t] * s[t];
      singular_[t] = static_cast<float>(s[t]);
      variance_[t] = static_cast<float>(s2 / denom);
      ratio_[t] = static_cast<float>(var_sum > 0.0 ? s2 / var_sum : 0.0);
    }
    double noise = 0.0;
    if (k != nb && k != d && k < r) {
      for (int64_t t = k; t < r; ++t) noise += s[t] * s[t] / denom;
      noise /= static_cast<double>(r - k);
    }
    noise_ = static_cast<float>(noise);
  }

  std::vector<double> mean64_, var64_, comp64_, sv64_;
  std::vector<float> mean_, var_, components_, singular_, variance_, ratio_;
  float noise_ = 0.0f;
  int64_t d_ = 0, k_ = 0, seen_ = 0, batch_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_incremental_pca() { return std::make_unique<IncrementalPCA>(); }

}  // namespace bl::ml
