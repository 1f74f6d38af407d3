// norm.h: layer normalization and RMS normalization along the last axis of a (rows, n) array.
//
// Layer norm, for each row x[0..n) (the reference below is the specification):
//   mean = S(x) / float(n)                    S = the sum schedule of schedule.h (lane = lane + x)
//   var  = Q / float(n)                       Q = sum schedule with d = x - mean, lane = fma(d, d, lane)
//   den  = sqrt(var + eps)                    (one add, one correctly rounded sqrt)
//   t_i  = (x_i - mean) / den                 (one subtraction, one division)
//   y_i  = fma(t_i, gamma_i, beta_i)          with gamma and beta;
//          t_i * gamma_i                      with gamma only;  t_i + beta_i with beta only;  t_i with neither
//   rstd = 1 / den                            (optional output, for the backward pass)
// RMS norm, for each row:
//   ms   = SQ(x) / float(n)                   SQ = sum schedule with lane = fma(x, x, lane)
//   den  = sqrt(ms + eps)
//   y_i  = (x_i / den) * gamma_i              (a division then a multiplication; x_i / den without gamma)
//   rstd = 1 / den                            (optional output)
// Every stored NaN is canonical. Rows are independent (batch invariant). y may alias x.
#pragma once

#include <cstdint>

#include "kernels/launch.h"
#include "kernels/reduce.h"

namespace bl {

class ThreadPool;

// The output element of layer norm; gamma / beta absent are flagged by has_gamma / has_beta.
BL_HD float layer_norm_element(float x, float mean, float den, float gamma, float beta, bool has_gamma,
                               bool has_beta) {
  float t = div(sub(x, mean), den);
  float y = t;
  if (has_gamma && has_beta) y = fma(t, gamma, beta);
  else if (has_gamma) y = mul(t, gamma);
  else if (has_beta) y = add(t, beta);
  return canonicalize(y);
}

BL_HD float rms_norm_element(float x, float den, float gamma, bool has_gamma) {
  float t = div(x, den);
  return canonicalize(has_gamma ? mul(t, gamma) : t);
}

BL_HD float norm_denominator(float var, float eps) { return sqrt(add(var, eps)); }

// Reference layer norm. gamma, beta (length n), mean_out, rstd_out (length rows) may be null.
inline void layer_norm_reference(const float* x, int64_t rows, int64_t n, const float* gamma,
                                 const float* beta, float eps, float* y, float* mean_out,
                                 float* rstd_out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float mean = finish_mean(reference_reduce_one<StepAdd>(xr, n, 1, 0.0f), n);
    float var = finish_var(reference_reduce_one<StepCenteredSquare>(xr, n, 1, mean), n, 0);
    float den = norm_denominator(var, eps);
    for (int64_t i = 0; i < n; ++i)
      y[r * n + i] = layer_norm_element(xr[i], mean, den, gamma ? gamma[i] : 1.0f,
                                        beta ? beta[i] : 0.0f, gamma != nullptr, beta != nullptr);
    if (mean_out) mean_out[r] = mean;
    if (rstd_out) rstd_out[r] = canonicalize(div(1.0f, den));
  }
}

// Reference RMS norm. gamma (length n) and rstd_out (length rows) may be null.
inline void rms_norm_reference(const float* x, int64_t rows, int64_t n, const float* gamma, float eps,
                               float* y, float* rstd_out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float ms = finish_mean(reference_reduce_one<StepSquare>(xr, n, 1, 0.0f), n);
    float den = norm_denominator(ms, eps);
    for (int64_t i = 0; i < n; ++i)
      y[r * n + i] = rms_norm_element(xr[i], den, gamma ? gamma[i] : 1.0f, gamma != nullptr);
    if (rstd_out) rstd_out[r] = canonicalize(div(1.0f, den));
  }
}

// CPU versions (threaded; tasks depend on the shape only). Same arguments as the references.
void layer_norm_cpu(const float* x, int64_t rows, int64_t n, const float* gamma, const float* beta,
                    float eps, float* y, float* mean_out, float* rstd_out, ThreadPool& pool);
void rms_norm_cpu(const float* x, int64_t rows, int64_t n, const float* gamma, float eps, float* y,
                  float* rstd_out, ThreadPool& pool);

// CUDA versions: every pointer is a device pointer (optional ones may be null).
void layer_norm_cuda(const float* x, int64_t rows, int64_t n, const float* gamma, const float* beta,
                     float eps, float* y, float* mean_out, float* rstd_out,
                     const LaunchConfig& config = LaunchConfig());
void rms_norm_cuda(const float* x, int64_t rows, int64_t n, const float* gamma, float eps, float* y,
                   float* rstd_out, const LaunchConfig& config = LaunchConfig());

}  // namespace bl
