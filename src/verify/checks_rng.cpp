// checks_rng.cpp: the contract's random streams (rng.uniform, rng.uniform_ab, rng.normal).
//
// Each check fills one long array from Philox (seed, stream) and hashes it. The negative control
// flips bit 0 of the seed. On CUDA the same element rule runs in src/verify/cuda/rng_fill.cu.
#include "core/thread_pool.h"
#include "verify/check.h"
#include "verify/device_data.h"
#include "verify/inputs.h"
#include "verify/rng_fill.h"

namespace bl::verify {

namespace {

// Elements per CPU task: a function of n only.
constexpr int64_t kFillChunk = 1 << 16;

std::vector<float> fill(CheckContext& ctx, RngKind kind, uint64_t stream, float a, float b, int64_t n) {
  uint64_t seed = kVerifySeed;
  if (ctx.take_perturbation()) seed ^= 1u;
  if (!ctx.on_cuda()) {
    std::vector<float> v(static_cast<size_t>(n));
    int64_t tasks = (n + kFillChunk - 1) / kFillChunk;
    default_pool().parallel_for(tasks, [&](int64_t t) {
      int64_t end = (t + 1) * kFillChunk < n ? (t + 1) * kFillChunk : n;
      for (int64_t i = t * kFillChunk; i < end; ++i)
        v[i] = rng_fill_element(kind, seed, stream, static_cast<uint64_t>(i), a, b);
    });
    return v;
  }
#if defined(BITLEARN_HAS_CUDA)
  select_device(ctx);
  DeviceFloats d = device_empty(ctx, n);
  rng_fill_cuda(kind, seed, stream, a, b, d.data, n);
  return to_host(d);
#else
  throw SkipCheck{"this build has no CUDA"};
#endif
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
