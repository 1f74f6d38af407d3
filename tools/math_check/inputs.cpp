// Special values, thresholds and pow pairs for the checker and the sweep.
#include "inputs.h"

#include <cmath>
#include <cstring>

#include "oracle.h"

namespace mathcheck {

namespace {

float from_bits(uint32_t b) { return bl::float_of(b); }

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Class of the correctly rounded result, for locating thresholds.
int result_class(bl::MathFn fn, float x) {
  const float r = exact_value(fn, x, 0.0f, false).rounded;
  const uint32_t b = bl::bits_of(r);
  if (std::isnan(r)) return 0;
  if (b == 0x7F800000u) return 1;
  if (b == 0xFF800000u) return 2;
  if (b == 0u) return 3;
  if (b == 0x80000000u) return 4;
  if ((b & 0x7F800000u) == 0) return (b >> 31) ? 6 : 5;  // subnormal
  if (b == bl::bits_of(x)) return 7;
  if (r == 1.0f) return 8;
  if (r == -1.0f) return 9;
  return 10;
}

void add_thresholds(bl::MathFn fn, std::vector<Special>& out) {
  // Coarse walk over each sign's finite bit patterns, then bisection on each class change.
  const uint32_t kSteps = 4096;
  for (uint32_t sign : {0u, 0x80000000u}) {
    const uint32_t top = 0x7F800000u;
    uint32_t prev = 0;
    int prev_class = result_class(fn, from_bits(sign | prev));
    for (uint32_t s = 1; s <= kSteps; ++s) {
      uint32_t cur = static_cast<uint32_t>(static_cast<uint64_t>(top) * s / kSteps);
      int cur_class = result_class(fn, from_bits(sign | cur));
      if (cur_class != prev_class) {
        uint32_t lo = prev, hi = cur;  // class(lo) == prev_class != class(hi)
        while (hi - lo > 1) {
          uint32_t mid = lo + (hi - lo) / 2;
          if (result_class(fn, from_bits(sign | mid)) == prev_class) lo = mid; else hi = mid;
        }
        out.push_back({from_bits(sign | lo), 0.0f, "threshold (last before change)"});
        out.push_back({from_bits(sign | hi), 0.0f, "threshold (first after change)"});
      }
      prev = cur;
      prev_class = cur_class;
    }
  }
}

std::vector<Special> basic_specials() {
  std::vector<Special> v = {
      {0.0f, 0, "+0"},
      {-0.0f, 0, "-0"},
      {from_bits(0x7F800000u), 0, "+inf"},
      {from_bits(0xFF800000u), 0, "-inf"},
      {from_bits(0x7FC00000u), 0, "canonical NaN"},
      {from_bits(0xFFC00000u), 0, "negative quiet NaN"},
      {from_bits(0x7F800001u), 0, "signaling NaN"},
      {from_bits(0xFFFFFFFFu), 0, "NaN all ones"},
      {from_bits(0x00000001u), 0, "smallest subnormal"},
      {from_bits(0x80000001u), 0, "-smallest subnormal"},
      {from_bits(0x007FFFFFu), 0, "largest subnormal"},
      {from_bits(0x807FFFFFu), 0, "-largest subnormal"},
      {from_bits(0x00800000u), 0, "smallest normal"},
      {from_bits(0x80800000u), 0, "-smallest normal"},
      {from_bits(0x7F7FFFFFu), 0, "largest normal"},
      {from_bits(0xFF7FFFFFu), 0, "-largest normal"},
      {1.0f, 0, "1"},
      {-1.0f, 0, "-1"},
      {from_bits(0x3F800001u), 0, "1 + ulp"},
      {from_bits(0x3F7FFFFFu), 0, "1 - ulp/2"},
  };
  for (int i = -40; i <= 40; ++i) v.push_back({static_cast<float>(i), 0, "integer"});
  for (int i = -20; i < 20; ++i) v.push_back({static_cast<float>(i) + 0.5f, 0, "half"});
  for (float big : {100.0f, 1000.0f, 1e6f, 16777216.0f, 16777218.0f, 1e10f, 1e20f, 1e30f})
    for (float s : {1.0f, -1.0f}) v.push_back({s * big, 0, "integer"});
  for (int k = -149; k <= 127; k += 4)
    for (float s : {1.0f, -1.0f}) v.push_back({s * std::ldexp(1.0f, k), 0, "power of two"});
  // Nearest floats to k*pi/2 (sin/cos argument reduction).
  for (int k = 1; k <= 64; ++k)
    for (float s : {1.0f, -1.0f})
      v.push_back({s * static_cast<float>(k * 1.57079632679489661923), 0, "near k*pi/2"});
  return v;
}

}  // namespace

std::vector<Special> unary_specials(bl::MathFn fn) {
  std::vector<Special> v = basic_specials();
  add_thresholds(fn, v);
  return v;
}

std::vector<Special> pow_specials() {
  const float vals[] = {0.0f, -0.0f, from_bits(0x7F800000u), from_bits(0xFF800000u),
                        from_bits(0x7FC00000u), from_bits(0xFFC00001u), 1.0f, -1.0f, 0.5f, -0.5f,
                        2.0f, -2.0f, 3.0f, -3.0f, 2.5f, -2.5f, from_bits(0x00000001u),
                        from_bits(0x80000001u), from_bits(0x007FFFFFu), from_bits(0x7F7FFFFFu),
                        from_bits(0xFF7FFFFFu), from_bits(0x3F800001u), from_bits(0x3F7FFFFFu),
                        from_bits(0xBF800001u), 0.1f, 10.0f, 1e10f, -1e10f, 127.0f, 128.0f,
                        149.0f, -149.0f, -150.0f, 1.0f / 3.0f, 16777215.0f, 16777216.0f, -16777215.0f};
  std::vector<Special> v;
  for (float x : vals)
    for (float y : vals) v.push_back({x, y, "grid"});
  return v;
}

void pow_pair(uint64_t i, uint64_t seed, float* x, float* y) {
  uint64_t s = seed * 0x100000001B3ull + i * 0x9E3779B97F4A7C15ull;
  const uint64_t a = splitmix(s), b = splitmix(s);
  const double ua = static_cast<double>(a >> 11) * 0x1p-53;  // [0, 1)
  const double ub = static_cast<double>(b >> 11) * 0x1p-53;
  switch (i % 5) {
    case 0:  // any bit patterns
      *x = from_bits(static_cast<uint32_t>(a));
      *y = from_bits(static_cast<uint32_t>(b));
      return;
    case 1:  // moderate positive base, moderate exponent
      *x = static_cast<float>(std::ldexp(1.0 + ua, static_cast<int>(a % 41) - 20));
      *y = static_cast<float>((ub - 0.5) * 80.0);
      return;
    case 2: {  // base near 1, large exponent
      const int k = 1 + static_cast<int>(a % 24);
      const double d = std::ldexp(ua - 0.5, -k);
      *x = static_cast<float>(1.0 + d);
      *y = static_cast<float>(std::ldexp(ub - 0.5, static_cast<int>(b % 31)));
      return;
    }
    case 3: {  // negative base, integer exponent
      *x = -from_bits(static_cast<uint32_t>(a) & 0x7F7FFFFFu);
      *y = static_cast<float>(static_cast<int>(b % 401) - 200);
      return;
    }
    default: {  // result near overflow or underflow: y ~ t / log2(x)
      const double base = std::ldexp(1.0 + ua, static_cast<int>(a % 21) - 10);
      const double t = -155.0 + ub * 285.0;
      const double l2 = std::log2(base);
      *x = static_cast<float>(base);
      *y = l2 == 0.0 ? static_cast<float>(t) : static_cast<float>(t / l2);
      return;
    }
  }
}

}  // namespace mathcheck
