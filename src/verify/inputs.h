// inputs.h: the fixed generated inputs of the verification checks.
//
// Every input is a pure function of (kVerifySeed, stream, index) through the contract's Philox
// (src/contract/rng.h), so all machines build the same bytes. Each generator consults the
// context's negative-control hook: the first input a perturbed check generates has bit 23 (the
// lowest exponent bit, so the value doubles or halves) of its element 0 flipped. Element 0 of every
// float input is therefore a finite nonzero normal number, never a special value.
#pragma once

#include <cstdint>
#include <vector>

#include "verify/check.h"

namespace bl::verify {

// The one seed of every verification input.
constexpr uint64_t kVerifySeed = 0x6269746C6561726EULL;  // "bitlearn" in ASCII

// The special values mixed into float inputs: signed zeros, infinities, NaNs with other payloads,
// subnormals, the extremes of the normal range, and a few values at function edges.
const std::vector<float>& special_values();

// n floats uniform in [lo, hi), with special_values() cycled into every `special_every`-th position
// (positions special_every-1, 2*special_every-1, ...; 0 = no specials).
std::vector<float> uniform_floats(CheckContext& ctx, uint64_t stream, int64_t n, float lo, float hi,
                                  int64_t special_every = 0);

// n standard normals times scale (contract Box-Muller), for weights.
std::vector<float> normal_floats(CheckContext& ctx, uint64_t stream, int64_t n, float scale);

// n floats whose bit patterns are uniform over all 2^32 (every binade, NaNs with any payload,
// subnormals), with element 0 forced to 1.5f (a normal value for the negative control).
std::vector<float> random_bit_floats(CheckContext& ctx, uint64_t stream, int64_t n);

// n integers uniform in [0, bound), by the exact rule floor(u32 * bound / 2^32).
// Not perturbed (perturbation goes to float data).
std::vector<int64_t> uniform_indices(uint64_t stream, int64_t n, int64_t bound);

// x truncated toward zero as a float, for inputs that must be integers: in the int32 range the
// truncation, else (NaN, infinities, |x| >= 2^31) -2^31. The out-of-range rule is fixed here, so
// the inputs are the same on every CPU (a plain float-to-int conversion is undefined there and
// gives -2^31 on x86-64 but saturates on AArch64); the suite's expected hashes were made with it.
float truncated_or_int_min(float x);

// Applies the perturbation to v when the context asks for it (flips bit 23 of v[0]).
void maybe_perturb(CheckContext& ctx, std::vector<float>& v);

}  // namespace bl::verify
