// checks_math.cpp: sweeps of every contract math function (math.<name>).
//
// Each unary sweep evaluates the function on one fixed sample: half uniform over the function's
// interesting range (with the special values every 61st element), half with bit patterns uniform
// over all 2^32 (every binade, subnormals, NaN payloads), then every special value once.
// math.pow runs on pairs: uniform bases and exponents (some integral), random bit pairs, and the
// full cross product of the special values. Both run kernels/math_map.h's map through its dispatch
// (ops/dispatch.h) on the check's device.
#include "kernels/math_map.h"
#include "ops/dispatch.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"

namespace bl::verify {

namespace {

// The uniform range of each function's sample: where its rounding is hardest and its branches are.
struct SweepRange {
  MathFn fn;
  float lo;
  float hi;
};

const SweepRange kRanges[] = {
    {MathFn::exp, -110.0f, 95.0f},     {MathFn::expm1, -20.0f, 95.0f},
    {MathFn::log, 0.0f, 4.0f},         {MathFn::log1p, -1.0f, 4.0f},
    {MathFn::log2, 0.0f, 4.0f},        {MathFn::tanh, -12.0f, 12.0f},
    {MathFn::sigmoid, -40.0f, 40.0f},  {MathFn::silu, -40.0f, 40.0f},
    {MathFn::softplus, -40.0f, 40.0f}, {MathFn::gelu_tanh, -12.0f, 12.0f},
    {MathFn::sin, -1.0e4f, 1.0e4f},    {MathFn::cos, -1.0e4f, 1.0e4f},
    {MathFn::erf, -6.0f, 6.0f},        {MathFn::gelu, -12.0f, 12.0f},
    {MathFn::pow, 0.0f, 8.0f},         {MathFn::rsqrt, 0.0f, 100.0f},
};

SweepRange range_of(MathFn fn) {
  for (const SweepRange& r : kRanges)
    if (r.fn == fn) return r;
  return SweepRange{fn, -1.0f, 1.0f};
}

std::vector<float> concat(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Runs the map on the context's device.
std::vector<float> run_map(CheckContext& ctx, MathFn fn, const std::vector<float>& x,
                           const std::vector<float>* y) {
  const int64_t n = static_cast<int64_t>(x.size());
  select_device(ctx);
  DeviceFloats dx = to_device(ctx, x);
  DeviceFloats dout = device_empty(ctx, n);
  if (y != nullptr) {
    DeviceFloats dy = to_device(ctx, *y);
    dispatch::math_map(core_device(ctx), fn, dx.data, dy.data, dout.data, n);
  } else {
    dispatch::math_map(core_device(ctx), fn, dx.data, dout.data, n);
  }
  return to_host(dout);
}

void sweep_unary(CheckContext& ctx, OutputWriter& out, MathFn fn) {
  const int64_t n = ctx.size(1 << 13, 1 << 20);
  const uint64_t stream = 1000 + static_cast<uint64_t>(fn);
  SweepRange r = range_of(fn);
  std::vector<float> x = uniform_floats(ctx, stream, n / 2, r.lo, r.hi, 61);
  x = concat(x, random_bit_floats(ctx, stream + 100, n / 2));
  x = concat(x, special_values());
  out.add_f32(math_fn_name(fn), run_map(ctx, fn, x, nullptr));
}

void sweep_pow(CheckContext& ctx, OutputWriter& out) {
  const int64_t n = ctx.size(1 << 13, 1 << 20);
  const uint64_t stream = 1000 + static_cast<uint64_t>(MathFn::pow);
  // Uniform bases and exponents; every 4th exponent rounded to an integer (odd/even rules).
  std::vector<float> x = uniform_floats(ctx, stream, n / 2, 0.0f, 8.0f, 61);
  std::vector<float> y = uniform_floats(ctx, stream + 1, n / 2, -40.0f, 40.0f, 67);
  std::vector<float> neg_base = uniform_floats(ctx, stream + 2, n / 2, -8.0f, 0.0f, 0);
  for (int64_t i = 0; i < n / 2; ++i) {
    if (i % 4 == 3 && is_finite(y[i])) y[i] = truncated_or_int_min(y[i]);
    if (i % 8 == 5) x[i] = neg_base[i];  // negative bases: NaN unless y is an integer
  }
  x = concat(x, random_bit_floats(ctx, stream + 100, n / 2));
  y = concat(y, random_bit_floats(ctx, stream + 101, n / 2));
  for (float a : special_values())
    for (float b : special_values()) {
      x.push_back(a);
      y.push_back(b);
    }
  out.add_f32("pow", run_map(ctx, MathFn::pow, x, &y));
}

template <MathFn kFn>
void math_check(CheckContext& ctx, OutputWriter& out) {
  if (kFn == MathFn::pow)
    sweep_pow(ctx, out);
  else
    sweep_unary(ctx, out, kFn);
}

}  // namespace

void add_math_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"math.exp", true, math_check<MathFn::exp>});
  checks.push_back({"math.expm1", true, math_check<MathFn::expm1>});
  checks.push_back({"math.log", true, math_check<MathFn::log>});
  checks.push_back({"math.log1p", true, math_check<MathFn::log1p>});
  checks.push_back({"math.log2", true, math_check<MathFn::log2>});
  checks.push_back({"math.tanh", true, math_check<MathFn::tanh>});
  checks.push_back({"math.sigmoid", true, math_check<MathFn::sigmoid>});
  checks.push_back({"math.silu", true, math_check<MathFn::silu>});
  checks.push_back({"math.softplus", true, math_check<MathFn::softplus>});
  checks.push_back({"math.gelu_tanh", true, math_check<MathFn::gelu_tanh>});
  checks.push_back({"math.sin", true, math_check<MathFn::sin>});
  checks.push_back({"math.cos", true, math_check<MathFn::cos>});
  checks.push_back({"math.erf", true, math_check<MathFn::erf>});
  checks.push_back({"math.gelu", true, math_check<MathFn::gelu>});
  checks.push_back({"math.pow", true, math_check<MathFn::pow>});
  checks.push_back({"math.rsqrt", true, math_check<MathFn::rsqrt>});
}

}  // namespace bl::verify
