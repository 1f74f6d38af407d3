// rng.h: the contract's random numbers.
//
// Counter-based generation with Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers:
// as easy as 1, 2, 3", SC 2011): a value is a pure function of (seed, stream, element index), so
// every backend, thread count and launch shape produces the same bits. Integer -> float conversions
// are exact, and normals come from Box-Muller with the contract's log, sqrt, sin and cos.
//
// Layout (docs/contract.md, "Random numbers"):
//   key     k[0] = low 32 bits of seed,   k[1] = high 32 bits of seed
//   counter c[0] = low 32 bits of block,  c[1] = high 32 bits of block,
//           c[2] = low 32 bits of stream, c[3] = high 32 bits of stream
//   Element i of a generated tensor lives in block i / 4 and uses output word i % 4 of that block
//   (uniforms), or the word pair (0,1) or (2,3) of that block (normals, see normal_element).
//   Element indices 0 .. 2^64-1 thus use blocks 0 .. 2^62-1; philox_block reaches all 2^64 blocks.
//
// Philox4x32-R round, with M0 = 0xD2511F53 and M1 = 0xCD9E8D57:
//   (hi0, lo0) = M0 * c[0], (hi1, lo1) = M1 * c[2]      (32x32 -> 64-bit products)
//   c = (hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0)
// Between rounds the key is bumped by the Weyl constants: k[0] += 0x9E3779B9, k[1] += 0xBB67AE85.
// Ten rounds; the result equals the Random123 reference (known-answer tests in tests/contract/).
#pragma once

#include "contract/arith.h"
#include "contract/math.h"

namespace bl {

constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;

// Four 32-bit output (or counter) words of one Philox block.
struct PhiloxBlock {
  uint32_t w[4];
};

// High and low 32-bit halves of the 64-bit product a * b.
BL_HD void philox_mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

// One Philox4x32 round on counter c with round key (k0, k1).
BL_HD PhiloxBlock philox_round(PhiloxBlock c, uint32_t k0, uint32_t k1) {
  uint32_t hi0, lo0, hi1, lo1;
  philox_mulhilo(kPhiloxM0, c.w[0], &hi0, &lo0);
  philox_mulhilo(kPhiloxM1, c.w[2], &hi1, &lo1);
  PhiloxBlock r;
  r.w[0] = hi1 ^ c.w[1] ^ k0;
  r.w[1] = lo1;
  r.w[2] = hi0 ^ c.w[3] ^ k1;
  r.w[3] = lo0;
  return r;
}

// Philox4x32 with a chosen number of rounds. The contract uses 10 (philox4x32_10); other counts
// exist for the known-answer tests of the 7-round variant and for the tests' sabotage arm.
BL_HD PhiloxBlock philox4x32_rounds(PhiloxBlock counter, uint32_t k0, uint32_t k1, int rounds) {
  PhiloxBlock c = counter;
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) {
      k0 += kPhiloxW0;  // unsigned: wraps modulo 2^32 as the algorithm requires
      k1 += kPhiloxW1;
    }
    c = philox_round(c, k0, k1);
  }
  return c;
}

// Philox4x32-10 of a raw 128-bit counter and 64-bit key (words as in Random123).
BL_HD PhiloxBlock philox4x32_10(PhiloxBlock counter, uint32_t k0, uint32_t k1) {
  return philox4x32_rounds(counter, k0, k1, kPhiloxRounds);
}

// The four words of block `block` of stream `stream` under `seed` (layout at the top of this file).
BL_HD PhiloxBlock philox_block(uint64_t seed, uint64_t stream, uint64_t block) {
  PhiloxBlock c;
  c.w[0] = static_cast<uint32_t>(block);
  c.w[1] = static_cast<uint32_t>(block >> 32);
  c.w[2] = static_cast<uint32_t>(stream);
  c.w[3] = static_cast<uint32_t>(stream >> 32);
  return philox4x32_10(c, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// The random 32-bit word of element i: word i % 4 of block i / 4.
BL_HD uint32_t random_u32_element(uint64_t seed, uint64_t stream, uint64_t i) {
  PhiloxBlock b = philox_block(seed, stream, i >> 2);
  // Selects instead of a variable index keep the block in registers on GPUs.
  uint32_t low = (i & 1u) ? b.w[1] : b.w[0];
  uint32_t high = (i & 1u) ? b.w[3] : b.w[2];
  return (i & 2u) ? high : low;
}

// ---------------------------------------------------------------------------------------------
// Exact conversions. Each uses the top 24 bits of the word, j = x >> 8 in [0, 2^24), which is
// exactly representable in binary32; scaling by 2^-24 is exact too, so no rounding happens.
// ---------------------------------------------------------------------------------------------

// Uniform in [0, 1): j * 2^-24. Values 0, 2^-24, ..., 1 - 2^-24.
BL_HD float uniform_co(uint32_t x) {
  return mul(static_cast<float>(x >> 8), 0x1p-24f);
}

// Uniform in (0, 1]: (j + 1) * 2^-24. Values 2^-24, ..., 1. Never 0, so log() of it is finite.
BL_HD float uniform_oc(uint32_t x) {
  return mul(static_cast<float>((x >> 8) + 1u), 0x1p-24f);
}

// The largest binary32 value below a finite y.
BL_HD float next_below(float y) {
  uint32_t u = bits_of(y);
  if ((u & 0x7FFFFFFFu) == 0u) return float_of(0x80000001u);  // below +-0: -2^-149
  return (u >> 31) ? float_of(u + 1u) : float_of(u - 1u);
}

// Uniform in [a, b): r = fma(u, b - a, a) with u = uniform_co(x) and b - a rounded once; when
// rounding lands on b or above, r is the largest float below b. Requires a < b with b - a finite;
// otherwise returns the canonical NaN (host APIs validate their arguments before calling this).
BL_HD float uniform_ab(uint32_t x, float a, float b) {
  if (!(a < b)) return canonical_nan();
  float width = sub(b, a);
  if (!is_finite(width)) return canonical_nan();
  float r = fma(uniform_co(x), width, a);
  return r >= b ? next_below(b) : r;
}

// ---------------------------------------------------------------------------------------------
// Normals by Box-Muller.
//   u1 = uniform_oc(x1) in (0, 1], u2 = uniform_co(x2) in [0, 1)
//   r     = sqrt(-2 * log(u1))          (-2 * log(u1) is exact scaling of one rounded log)
//   theta = kTwoPiF * u2                (one rounding; kTwoPiF = 0x40C90FDB, 2*pi rounded to binary32)
//   z0 = r * cos(theta), z1 = r * sin(theta)   (each one rounding)
// log, sqrt, sin, cos are the contract's (contract/math.h, contract/arith.h). No NaN can arise:
// u1 > 0 keeps log finite and u1 <= 1 keeps -2 log(u1) >= 0.
// ---------------------------------------------------------------------------------------------

constexpr uint32_t kTwoPiBits = 0x40C90FDBu;

// Two independent standard normals from two random words.
BL_HD void box_muller(uint32_t x1, uint32_t x2, float* z0, float* z1) {
  float u1 = uniform_oc(x1);
  float u2 = uniform_co(x2);
  float r = sqrt(mul(-2.0f, log(u1)));
  float theta = mul(float_of(kTwoPiBits), u2);
  *z0 = mul(r, cos(theta));
  *z1 = mul(r, sin(theta));
}

// Standard normal of element i. Block b = i / 4; elements 4b and 4b+1 are (z0, z1) of
// box_muller(w[0], w[1]); elements 4b+2 and 4b+3 are (z0, z1) of box_muller(w[2], w[3]).
BL_HD float normal_element(uint64_t seed, uint64_t stream, uint64_t i) {
  PhiloxBlock b = philox_block(seed, stream, i >> 2);
  bool second_pair = (i & 2u) != 0;
  float z0, z1;
  box_muller(second_pair ? b.w[2] : b.w[0], second_pair ? b.w[3] : b.w[1], &z0, &z1);
  return (i & 1u) ? z1 : z0;
}

// The four standard normals of block b (elements 4b .. 4b+3) from one Philox call and two
// Box-Muller transforms: equal to normal_element of each, at half the cost per element.
BL_HD void normal_block(uint64_t seed, uint64_t stream, uint64_t block, float* out4) {
  PhiloxBlock b = philox_block(seed, stream, block);
  box_muller(b.w[0], b.w[1], &out4[0], &out4[1]);
  box_muller(b.w[2], b.w[3], &out4[2], &out4[3]);
}

// Normal with the given mean and standard deviation: mean + stddev * z, as a multiply then an add
// (two roundings).
BL_HD float normal_element(uint64_t seed, uint64_t stream, uint64_t i, float mean, float stddev) {
  return canonicalize(add(mean, mul(stddev, normal_element(seed, stream, i))));
}

// Uniform in [0, 1) of element i: uniform_co of word i % 4 of block i / 4.
BL_HD float uniform_element(uint64_t seed, uint64_t stream, uint64_t i) {
  return uniform_co(random_u32_element(seed, stream, i));
}

// The four uniforms in [0, 1) of block b (elements 4b .. 4b+3), equal to uniform_element of each.
BL_HD void uniform_block(uint64_t seed, uint64_t stream, uint64_t block, float* out4) {
  PhiloxBlock b = philox_block(seed, stream, block);
  for (int j = 0; j < 4; ++j) out4[j] = uniform_co(b.w[j]);
}

// Uniform in [a, b) of element i: uniform_ab of word i % 4 of block i / 4.
BL_HD float uniform_element(uint64_t seed, uint64_t stream, uint64_t i, float a, float b) {
  return uniform_ab(random_u32_element(seed, stream, i), a, b);
}

}  // namespace bl
