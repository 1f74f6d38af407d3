// dense64.cpp: the binary64 host routines of dense64.h (fixed order, one thread).
#include "ml/decomposition/dense64.h"

#include <algorithm>
#include <cmath>

#include "bitlearn/ops.h"
#include "contract/rng.h"
#include "ml/decomposition/symmetric_eigen64.h"

namespace bl::ml::dec {

std::vector<double> to_host64(const Tensor& t) {
  std::vector<float> f = t.to(Device::cpu()).contiguous().to_vector<float>();
  return std::vector<double>(f.begin(), f.end());
}

Tensor to_tensor32(const std::vector<double>& v, const Shape& shape, Device dev) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = static_cast<float>(v[i]);
  return Tensor::from_vector(f, shape, dev);
}

void orthonormalize_columns(std::vector<double>& a, int64_t n, int64_t l) {
  std::vector<double> c(a.size());  // column-major copy: the same operations on contiguous columns
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < l; ++j) c[j * n + i] = a[i * l + j];
  for (int64_t j = 0; j < l; ++j) {
    double* cj = &c[j * n];
    double before = 0.0;
    for (int64_t i = 0; i < n; ++i) before += cj[i] * cj[i];
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t p = 0; p < j; ++p) {
        const double* cp = &c[p * n];
        double dot = 0.0;
        for (int64_t i = 0; i < n; ++i) dot += cp[i] * cj[i];
        for (int64_t i = 0; i < n; ++i) cj[i] -= dot * cp[i];
      }
    }
    double after = 0.0;
    for (int64_t i = 0; i < n; ++i) after += cj[i] * cj[i];
    const double norm = std::sqrt(after);
    const bool deficient = !(after > 0.0) || norm <= 1e-10 * std::sqrt(before);
    for (int64_t i = 0; i < n; ++i) cj[i] = deficient ? 0.0 : cj[i] / norm;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < l; ++j) a[i * l + j] = c[j * n + i];
}

namespace {

// out [r, c] = L B for B [k, c] row-major and L [r, k] read as L(i, t) = a[i * row_stride + t * sum_stride]:
// each entry summed over t in ascending order from +0.
std::vector<double> strided_product64(const std::vector<double>& a, int64_t row_stride, int64_t sum_stride,
                                      const std::vector<double>& b, int64_t r, int64_t k, int64_t c) {
  std::vector<double> out(static_cast<size_t>(r * c), 0.0);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t t = 0; t < k; ++t) {
      const double v = a[i * row_stride + t * sum_stride];
      for (int64_t j = 0; j < c; ++j) out[i * c + j] += v * b[t * c + j];
    }
  return out;
}

}  // namespace

std::vector<double> mul64(const std::vector<double>& a, const std::vector<double>& b, int64_t r, int64_t k, int64_t c) {
  return strided_product64(a, k, 1, b, r, k, c);
}

std::vector<double> mul64_tn(const std::vector<double>& a, const std::vector<double>& b, int64_t k, int64_t r, int64_t c) {
  return strided_product64(a, 1, r, b, r, k, c);
}

std::vector<double> transposed(const std::vector<double>& a, int64_t r, int64_t c) {
  std::vector<double> t(a.size());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) t[j * r + i] = a[i * c + j];
  return t;
}

std::vector<float> rounded32(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

std::vector<double> column_means(const std::vector<double>& a, int64_t n, int64_t d) {
  std::vector<double> mean(static_cast<size_t>(d), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) mean[j] += a[i * d + j];
  for (int64_t j = 0; j < d; ++j) mean[j] /= static_cast<double>(n);
  return mean;
}

std::vector<double> row_means(const std::vector<double>& a, int64_t n, int64_t d) {
  std::vector<double> mean(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) mean[i] += a[i * d + j];
    mean[i] /= static_cast<double>(d);
  }
  return mean;
}

double mean64(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

void center_lower(std::vector<double>& m, int64_t n, const std::vector<double>& row_means,
                  const std::vector<double>& col_means, double grand) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) m[i * n + j] = ((m[i * n + j] - col_means[j]) - row_means[i]) + grand;
}

std::vector<double> column_variances(const std::vector<double>& a, int64_t n, int64_t d) {
  const std::vector<double> mean = column_means(a, n, d);
  std::vector<double> var(static_cast<size_t>(d), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const double c = a[i * d + j] - mean[j];
      var[j] += c * c;
    }
  for (int64_t j = 0; j < d; ++j) var[j] /= static_cast<double>(n);
  return var;
}

std::vector<double> column_gram_lower(const std::vector<double>& a, int64_t n, int64_t d) {
  std::vector<double> g(static_cast<size_t>(d * d), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const double* row = &a[static_cast<size_t>(i * d)];
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = 0; q <= p; ++q) g[p * d + q] += row[p] * row[q];
  }
  return g;
}

std::vector<double> row_gram_lower(const std::vector<double>& a, int64_t k, int64_t d) {
  std::vector<double> g(static_cast<size_t>(k * k), 0.0);
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c <= r; ++c) {
      double s = 0.0;
      for (int64_t j = 0; j < d; ++j) s += a[r * d + j] * a[c * d + j];
      g[r * k + c] = s;
    }
  return g;
}

void right_vector_from_left(const double* u, const std::vector<double>& b, int64_t l, int64_t d, double s, double* v) {
  for (int64_t i = 0; i < l; ++i)
    for (int64_t c = 0; c < d; ++c) v[c] += u[i] * b[i * d + c];
  for (int64_t c = 0; c < d; ++c) v[c] /= s;
}

void flip_rows_by_largest(std::vector<double>& v, int64_t k, int64_t d) {
  for (int64_t t = 0; t < k; ++t) {
    double* row = &v[t * d];
    int64_t best = 0;
    for (int64_t j = 1; j < d; ++j)
      if (std::fabs(row[j]) > std::fabs(row[best])) best = j;
    if (row[best] < 0.0)
      for (int64_t j = 0; j < d; ++j) row[j] = -row[j];
  }
}

void randomized_svd(const Tensor& X, int64_t k, int64_t l, int64_t n_iter, uint64_t seed,
                    std::vector<double>& values, std::vector<double>& vectors) {
  constexpr uint64_t kSketchStream = 1;
  const int64_t n = X.dim(0), d = X.dim(1);
  const Device dev = X.device();
  std::vector<float> omega(static_cast<size_t>(d * l));
  for (size_t i = 0; i < omega.size(); ++i) omega[i] = normal_element(seed, kSketchStream, static_cast<uint64_t>(i));
  std::vector<double> q = to_host64(bl::matmul(X, Tensor::from_vector(omega, {d, l}, dev)));
  orthonormalize_columns(q, n, l);
  for (int64_t it = 0; it < n_iter; ++it) {
    std::vector<double> z = to_host64(bl::matmul(X, to_tensor32(q, {n, l}, dev), true, false));
    orthonormalize_columns(z, d, l);
    q = to_host64(bl::matmul(X, to_tensor32(z, {d, l}, dev)));
    orthonormalize_columns(q, n, l);
  }
  std::vector<double> b = to_host64(bl::matmul(to_tensor32(q, {n, l}, dev), X, true, false));
  std::vector<double> m = row_gram_lower(b, l, d);
  for (int64_t i = 0; i < l; ++i)
    for (int64_t j = 0; j < i; ++j) m[j * l + i] = m[i * l + j];
  SymmetricEigen64 e = symmetric_eigen64(m, l, k, "randomized_svd");
  values.clear();
  vectors.assign(static_cast<size_t>(k * d), 0.0);
  for (int64_t t = 0; t < k; ++t) {
    const double s = std::sqrt(std::max(e.values[t], 0.0));
    values.push_back(s);
    if (s > 0.0) right_vector_from_left(&e.vectors[t * l], b, l, d, s, &vectors[t * d]);
  }
}

}  // namespace bl::ml::dec
