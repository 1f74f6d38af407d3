// checks_rows.cpp: row-wise ops through the kernel layer: softmax, log-softmax, layer norm,
// RMS norm, cumsum, sort and top-k (src/kernels/{softmax,norm,cumsum,sort}.h).
//
// Each check runs a batch of rows with special values (NaN, infinities, signed zeros) and one row
// longer than several reduction leaves. Every op runs through its dispatch (ops/dispatch.h) on the
// check's device, default launch shape, on the same bytes.
#include "kernels/cumsum.h"
#include "kernels/norm.h"
#include "kernels/softmax.h"
#include "kernels/sort.h"
#include "ops/dispatch.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"

namespace bl::verify {

namespace {

std::vector<float> softmax_rows(CheckContext& ctx, const std::vector<float>& host, int64_t rows,
                                int64_t n, bool log_form) {
  DeviceFloats x = to_device(ctx, host);
  DeviceFloats y = device_empty(ctx, rows * n);
  dispatch::softmax(core_device(ctx), x.data, rows, n, y.data, log_form);
  return to_host(y);
}

void check_softmax(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  const int64_t rows = ctx.size(9, 67), n = ctx.size(131, 1031), long_n = ctx.size(9001, 70001);
  std::vector<float> x = uniform_floats(ctx, 6001, rows * n, -30.0f, 30.0f, 523);
  std::vector<float> xl = uniform_floats(ctx, 6002, long_n, -80.0f, 80.0f, 0);
  out.add_f32("softmax", softmax_rows(ctx, x, rows, n, false));
  out.add_f32("log_softmax", softmax_rows(ctx, x, rows, n, true));
  out.add_f32("softmax_long_row", softmax_rows(ctx, xl, 1, long_n, false));
  out.add_f32("log_softmax_long_row", softmax_rows(ctx, xl, 1, long_n, true));
}

void norms(CheckContext& ctx, OutputWriter& out, const std::vector<float>& host,
           const std::vector<float>& gamma_h, const std::vector<float>& beta_h, int64_t rows,
           int64_t n, const std::string& tag) {
  const float eps = 1e-5f;
  DeviceFloats x = to_device(ctx, host), gamma = to_device(ctx, gamma_h), beta = to_device(ctx, beta_h);
  DeviceFloats y = device_empty(ctx, rows * n), mean = device_empty(ctx, rows), rstd = device_empty(ctx, rows);
  DeviceFloats y_rms = device_empty(ctx, rows * n), rstd_rms = device_empty(ctx, rows);
  DeviceFloats y_plain = device_empty(ctx, rows * n);
  const Device d = core_device(ctx);
  dispatch::layer_norm(d, x.data, rows, n, gamma.data, beta.data, eps, y.data, mean.data, rstd.data);
  dispatch::layer_norm(d, x.data, rows, n, nullptr, nullptr, eps, y_plain.data, nullptr, nullptr);
  dispatch::rms_norm(d, x.data, rows, n, gamma.data, eps, y_rms.data, rstd_rms.data);
  out.add_f32("layer_norm" + tag, to_host(y));
  out.add_f32("layer_norm_mean" + tag, to_host(mean));
  out.add_f32("layer_norm_rstd" + tag, to_host(rstd));
  out.add_f32("layer_norm_plain" + tag, to_host(y_plain));
  out.add_f32("rms_norm" + tag, to_host(y_rms));
  out.add_f32("rms_norm_rstd" + tag, to_host(rstd_rms));
}

void check_norm(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  const int64_t rows = ctx.size(7, 53), n = ctx.size(97, 769), long_n = ctx.size(5003, 20011);
  std::vector<float> x = uniform_floats(ctx, 6101, rows * n, -4.0f, 6.0f, 389);
  std::vector<float> g = normal_floats(ctx, 6102, n, 1.0f);
  std::vector<float> b = uniform_floats(ctx, 6103, n, -0.5f, 0.5f);
  norms(ctx, out, x, g, b, rows, n, "");
  std::vector<float> xl = uniform_floats(ctx, 6104, long_n, -100.0f, 300.0f);
  std::vector<float> gl = normal_floats(ctx, 6105, long_n, 1.0f);
  std::vector<float> bl_ = uniform_floats(ctx, 6106, long_n, -0.5f, 0.5f);
  norms(ctx, out, xl, gl, bl_, 1, long_n, "_long_row");
}

std::vector<float> cumsum_on(CheckContext& ctx, const std::vector<float>& host, ReduceShape shape) {
  DeviceFloats x = to_device(ctx, host);
  DeviceFloats y = device_empty(ctx, static_cast<int64_t>(host.size()));
  dispatch::cumsum(core_device(ctx), x.data, shape, y.data);
  return to_host(y);
}

void check_cumsum(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  const int64_t n1 = ctx.size(10007, 100003);
  ReduceShape s2{3, ctx.size(1021, 9001), 2};
  std::vector<float> x1 = uniform_floats(ctx, 6201, n1, -1.0f, 1.0f);
  std::vector<float> x2 = uniform_floats(ctx, 6202, s2.outer * s2.n * s2.inner, -10.0f, 10.0f, 2003);
  out.add_f32("cumsum_1d", cumsum_on(ctx, x1, ReduceShape{1, n1, 1}));
  out.add_f32("cumsum_axis", cumsum_on(ctx, x2, s2));
}

void check_sort_topk(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  const int64_t rows = ctx.size(5, 17), n = ctx.size(301, 2003), k = ctx.size(7, 50);
  std::vector<float> x = uniform_floats(ctx, 6301, rows * n, -4.0f, 4.0f, 97);
  // Many ties (values on a 1/8 grid) so the lowest-index rule and stability are exercised.
  for (size_t i = 1; i < x.size(); ++i)
    if (i % 3 == 0 && is_finite(x[i])) x[i] = mul(truncated_or_int_min(mul(x[i], 8.0f)), 0.125f);
  DeviceFloats dx = to_device(ctx, x);
  for (int variant = 0; variant < 3; ++variant) {
    const bool topk = variant == 2;
    const int64_t m = topk ? k : n;
    DeviceFloats values = device_empty(ctx, rows * m);
    DeviceI64 indices = device_empty_i64(ctx, rows * m);
    if (topk) dispatch::topk(core_device(ctx), dx.data, rows, n, k, values.data, indices.data);
    else dispatch::sort(core_device(ctx), dx.data, rows, n, variant == 1, values.data, indices.data);
    const char* name = variant == 0 ? "sort_ascending" : variant == 1 ? "sort_descending" : "topk";
    out.add_f32(std::string(name) + ".values", to_host(values));
    out.add_i64(std::string(name) + ".indices", to_host(indices));
  }
}

}  // namespace

void add_row_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"op.softmax", true, check_softmax});
  checks.push_back({"op.norm", true, check_norm});
  checks.push_back({"op.cumsum", true, check_cumsum});
  checks.push_back({"op.sort_topk", true, check_sort_topk});
}

}  // namespace bl::verify
