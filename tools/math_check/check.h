// check.h: the accuracy run for one function: evaluate ours (the reference map) and the oracle
// over many inputs on several threads, and summarize.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inputs.h"
#include "kernels/math_map.h"

namespace mathcheck {

struct SpecialResult {
  Special input;
  uint32_t ours = 0;
  uint32_t expected = 0;
  double err_ulps = 0;
  bool ok = false;  // ours == expected bit for bit (any NaN counts as equal to a NaN when canonical)
};

struct CheckOptions {
  bool exhaustive = false;     // all 2^32 inputs (unary functions only)
  uint64_t sample = 1u << 24;  // spread inputs (or pairs for pow) when not exhaustive
  int threads = 1;
  bool force_mpfr = false;     // oracle from MPFR for every input (slow; validates the fast path)
  uint64_t pow_seed = 1;
  // Sabotage arm: moves every 4096th sampled result by 2 ulps and gives NaN results the x86
  // default NaN 0xFFC00000, so that a correct checker must report failure.
  bool sabotage = false;
};

struct FnReport {
  bl::MathFn fn{};
  uint64_t inputs = 0;             // evaluated inputs, specials included
  double max_err_ulps = 0;         // over finite, non-NaN cases
  float worst_x = 0, worst_y = 0;  // input with the largest error (lowest index among equals)
  uint32_t worst_ours = 0, worst_expected = 0;
  uint64_t not_correctly_rounded = 0;  // ours != correctly rounded result
  uint64_t not_faithful = 0;           // error >= 1 ulp (or a wrong NaN / infinity)
  uint64_t wrong_zero_sign = 0;        // +0 where -0 is expected or the reverse
  uint64_t nan_mismatch = 0;           // NaN where a number is expected or the reverse
  uint64_t noncanonical_nan = 0;       // NaN results whose bits are not 0x7FC00000
  uint64_t mpfr_evaluations = 0;
  double wall_seconds = 0;
  std::vector<SpecialResult> specials;

  bool passed() const {
    return not_faithful == 0 && wrong_zero_sign == 0 && nan_mismatch == 0 && noncanonical_nan == 0;
  }
};

// Runs the accuracy check of fn under opts.
FnReport check_function(bl::MathFn fn, const CheckOptions& opts);

// Validates the oracle itself: the correctly rounded result from the float64 fast path and from
// MPFR alone must agree on opts.sample spread inputs (pairs for pow) and the special values.
// Prints each disagreement (at most 10) and returns their count.
uint64_t oracle_self_check(bl::MathFn fn, const CheckOptions& opts);

}  // namespace mathcheck
