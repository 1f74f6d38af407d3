#include "verify/inputs.h"

#include "contract/rng.h"
#include "core/error.h"

namespace bl::verify {

const std::vector<float>& special_values() {
  static const std::vector<float> values = {
      0.0f, -0.0f,
      float_of(0x7F800000u), float_of(0xFF800000u),  // +-inf
      float_of(0x7FC00000u), float_of(0xFFC00000u),  // canonical NaN and the x86 default NaN
      float_of(0x7FA00001u), float_of(0xFFFFFFFFu),  // signalling NaN, NaN with all payload bits
      float_of(0x00000001u), float_of(0x80000001u),  // smallest subnormals
      float_of(0x007FFFFFu), float_of(0x807FFFFFu),  // largest subnormals
      float_of(0x00800000u), float_of(0x80800000u),  // smallest normals
      float_of(0x7F7FFFFFu), float_of(0xFF7FFFFFu),  // largest finite
      1.0f, -1.0f, 0.5f, 2.0f,
      88.7228394f, -103.972084f, 89.0f, -104.0f,  // exp overflow / underflow edges
      1e-30f, -1e-30f, 1e30f, -1e30f,
      0.693147182f, 3.14159274f, -3.14159274f, 1.57079637f,
      1e8f, -1e8f, 16777216.0f, 1e-7f};
  return values;
}

void maybe_perturb(CheckContext& ctx, std::vector<float>& v) {
  if (v.empty() || !ctx.take_perturbation()) return;
  v[0] = float_of(bits_of(v[0]) ^ 0x00800000u);
}

std::vector<float> uniform_floats(CheckContext& ctx, uint64_t stream, int64_t n, float lo, float hi,
                                  int64_t special_every) {
  BL_CHECK(n >= 0 && lo < hi, "verify inputs: uniform_floats needs n >= 0 and lo < hi");
  const std::vector<float>& specials = special_values();
  std::vector<float> v(static_cast<size_t>(n));
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (special_every > 0 && i % special_every == special_every - 1) {
      v[i] = specials[static_cast<size_t>(s % static_cast<int64_t>(specials.size()))];
      ++s;
    } else {
      v[i] = uniform_element(kVerifySeed, stream, static_cast<uint64_t>(i), lo, hi);
    }
  }
  // Element 0 must be a nonzero normal so the negative control changes its value.
  if (n > 0 && (v[0] == 0.0f || !is_finite(v[0]) || abs(v[0]) < 1.17549435e-38f)) v[0] = 0.75f;
  maybe_perturb(ctx, v);
  return v;
}

std::vector<float> normal_floats(CheckContext& ctx, uint64_t stream, int64_t n, float scale) {
  BL_CHECK(n >= 0, "verify inputs: normal_floats needs n >= 0");
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[i] = mul(scale, normal_element(kVerifySeed, stream, static_cast<uint64_t>(i)));
  if (n > 0 && (v[0] == 0.0f || abs(v[0]) < 1.17549435e-38f)) v[0] = mul(scale, 0.75f);
  maybe_perturb(ctx, v);
  return v;
}

std::vector<float> random_bit_floats(CheckContext& ctx, uint64_t stream, int64_t n) {
  BL_CHECK(n >= 0, "verify inputs: random_bit_floats needs n >= 0");
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[i] = float_of(random_u32_element(kVerifySeed, stream, static_cast<uint64_t>(i)));
  if (n > 0) v[0] = 1.5f;
  maybe_perturb(ctx, v);
  return v;
}

std::vector<int64_t> uniform_indices(uint64_t stream, int64_t n, int64_t bound) {
  BL_CHECK(n >= 0 && bound >= 1 && bound <= (int64_t{1} << 31),
           "verify inputs: uniform_indices needs n >= 0 and 1 <= bound <= 2^31");
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint64_t u = random_u32_element(kVerifySeed, stream, static_cast<uint64_t>(i));
    v[i] = static_cast<int64_t>((u * static_cast<uint64_t>(bound)) >> 32);
  }
  return v;
}

float truncated_or_int_min(float x) {
  // 2^31 as a float is exact; every float in (-2^31 - 1, 2^31) truncates into the int32 range.
  if (!(x > -2147483648.0f - 1.0f && x < 2147483648.0f)) return -2147483648.0f;
  return static_cast<float>(static_cast<int32_t>(x));
}

}  // namespace bl::verify
