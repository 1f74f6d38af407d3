// init.cpp: Philox initializers (contract/rng.h), bounds in binary32 contract arithmetic.
#include "bitlearn/nn/init.h"

#include <algorithm>

#include "contract/arith.h"
#include "contract/math.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::nn::init {

namespace {

Tensor make(const Shape& shape) { return Tensor::empty(shape, DType::f32, Device::cpu()); }

// p[i] = element(i) for i in [0, n), in blocks on the default pool: every element is a pure
// function of its index, so the bits do not depend on the thread count.
template <typename Element>
void fill(float* p, int64_t n, const Element& element) {
  constexpr int64_t kBlock = 1 << 16;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  auto run = [&](int64_t b) {
    const int64_t end = std::min(n, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i) p[i] = element(static_cast<uint64_t>(i));
  };
  if (blocks <= 1) {
    for (int64_t b = 0; b < blocks; ++b) run(b);
    return;
  }
  default_pool().parallel_for(blocks, run);
}

float fan_ratio_sqrt(float numerator, int64_t denominator) {
  BL_CHECK(denominator > 0, "init: fan must be > 0, got ", denominator);
  return bl::sqrt(bl::div(numerator, static_cast<float>(denominator)));
}

}  // namespace

Tensor uniform(const Shape& shape, float a, float b, uint64_t seed, uint64_t stream) {
  BL_CHECK(a < b, "init::uniform: need a < b, got [", a, ", ", b, ")");
  Tensor t = make(shape);
  float* p = t.data<float>();
  int64_t n = t.numel();
  fill(p, n, [&](uint64_t i) { return uniform_element(seed, stream, i, a, b); });
  return t;
}

Tensor normal(const Shape& shape, float mean, float stddev, uint64_t seed, uint64_t stream) {
  BL_CHECK(stddev >= 0.0f, "init::normal: stddev must be >= 0, got ", stddev);
  Tensor t = make(shape);
  float* p = t.data<float>();
  int64_t n = t.numel();
  fill(p, n, [&](uint64_t i) { return normal_element(seed, stream, i, mean, stddev); });
  return t;
}

Tensor truncated_normal(const Shape& shape, float mean, float stddev, float a, float b,
                        uint64_t seed, uint64_t stream) {
  BL_CHECK(a < b, "init::truncated_normal: need a < b, got [", a, ", ", b, "]");
  Tensor t = make(shape);
  float* p = t.data<float>();
  int64_t n = t.numel();
  fill(p, n, [&](uint64_t i) {
    float z = 0.0f;
    bool inside = false;
    for (uint64_t k = 0; k < 32 && !inside; ++k) {
      z = normal_element(seed, stream + (k << 40), i);
      inside = z >= a && z <= b;
    }
    if (!inside) z = bl::min(bl::max(z, a), b);
    return bl::add(mean, bl::mul(stddev, z));
  });
  return t;
}

Tensor xavier_uniform(const Shape& shape, int64_t fan_in, int64_t fan_out, float gain,
                      uint64_t seed, uint64_t stream) {
  float bound = bl::mul(gain, fan_ratio_sqrt(6.0f, fan_in + fan_out));
  return uniform(shape, bl::neg(bound), bound, seed, stream);
}

Tensor xavier_normal(const Shape& shape, int64_t fan_in, int64_t fan_out, float gain,
                     uint64_t seed, uint64_t stream) {
  return normal(shape, 0.0f, bl::mul(gain, fan_ratio_sqrt(2.0f, fan_in + fan_out)), seed, stream);
}

Tensor kaiming_uniform(const Shape& shape, int64_t fan_in, float gain, uint64_t seed, uint64_t stream) {
  float bound = bl::mul(gain, fan_ratio_sqrt(3.0f, fan_in));
  return uniform(shape, bl::neg(bound), bound, seed, stream);
}

Tensor kaiming_normal(const Shape& shape, int64_t fan_in, float gain, uint64_t seed, uint64_t stream) {
  return normal(shape, 0.0f, bl::mul(gain, fan_ratio_sqrt(1.0f, fan_in)), seed, stream);
}

}  // namespace bl::nn::init
