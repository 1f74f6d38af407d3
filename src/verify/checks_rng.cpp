// checks_rng.cpp: the contract's random streams (rng.uniform, rng.uniform_ab, rng.normal).
//
// Each check fills one long array from Philox (seed, stream) and hashes it. The negative control
// flips bit 0 of the seed. The fill is the rng_fill op (kernels/rng_fill.h) on the check's device.
#include "kernels/rng_fill.h"
#include "ops/dispatch.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"

namespace bl::verify {

namespace {

std::vector<float> fill(CheckContext& ctx, RngKind kind, uint64_t stream, float a, float b, int64_t n) {
  uint64_t seed = kVerifySeed;
  if (ctx.take_perturbation()) seed ^= 1u;
  select_device(ctx);
  DeviceFloats d = device_empty(ctx, n);
  dispatch::rng_fill(core_device(ctx), kind, seed, stream, a, b, d.data, n);
  return to_host(d);
}

void check_uniform(CheckContext& ctx, OutputWriter& out) {
  out.add_f32("uniform01", fill(ctx, RngKind::uniform01, 7, 0.0f, 1.0f, ctx.size(1 << 14, 1 << 22)));
}

void check_uniform_ab(CheckContext& ctx, OutputWriter& out) {
  // A range whose width rounds, so the clamp below b matters.
  out.add_f32("uniform_ab", fill(ctx, RngKind::uniform_ab, 8, -3.0f, 1.0000001f, ctx.size(1 << 14, 1 << 21)));
}

void check_normal(CheckContext& ctx, OutputWriter& out) {
  out.add_f32("normal", fill(ctx, RngKind::normal, 9, 0.0f, 1.0f, ctx.size(1 << 14, 1 << 21)));
}

}  // namespace

void add_rng_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"rng.uniform", true, check_uniform});
  checks.push_back({"rng.uniform_ab", true, check_uniform_ab});
  checks.push_back({"rng.normal", true, check_normal});
}

}  // namespace bl::verify
