// The AVX-512 reduction leaves, compiled against the plain C++ intrinsics of avx512_emulation.h,
// against the scalar leaf (leaf_reduce, the reference's lane order) bit for bit. Runs on any
// machine; on an AVX-512 CPU the reduction conformance tests run the real instructions as well.
#include "avx512_emulation.h"

#define BL_AVX512_EMULATION 1
#define leaf_sum_avx512 leaf_sum_avx512_emulated
#define leaf_abs_sum_avx512 leaf_abs_sum_avx512_emulated
#define leaf_square_sum_avx512 leaf_square_sum_avx512_emulated
#define leaf_centered_square_sum_avx512 leaf_centered_square_sum_avx512_emulated
#define leaf_max_avx512 leaf_max_avx512_emulated
#define leaf_min_avx512 leaf_min_avx512_emulated
#include "kernels/cpu/reduce_avx512.cpp"
#undef leaf_sum_avx512
#undef leaf_abs_sum_avx512
#undef leaf_square_sum_avx512
#undef leaf_centered_square_sum_avx512
#undef leaf_max_avx512
#undef leaf_min_avx512
#undef BL_AVX512_EMULATION

#include <gtest/gtest.h>

#include <vector>

#include "contract/rng.h"

namespace {

using bl::cpu::scalar_contiguous_leaf;

std::vector<float> leaf_values(size_t n, uint64_t seed, bool with_nan) {
  std::vector<float> v(n);
  const float specials[] = {0.0f, -0.0f, 1e-40f, -3e-39f, 3.0e38f, -2.9e38f, bl::float_of(0x7F800000u),
                            bl::float_of(0xFF800000u)};
  for (size_t i = 0; i < n; ++i) {
    const uint32_t r = bl::random_u32_element(seed, 3, i);
    if (r % 50 == 0)
      v[i] = specials[(r >> 8) % (sizeof specials / sizeof specials[0])];
    else
      v[i] = (static_cast<float>(r >> 8) * 0x1p-24f - 0.5f) * ((r & 0x80) ? 1e3f : 1e-3f);
  }
  if (with_nan && n > 0) v[n / 2] = bl::float_of(0x7FC00042u);
  return v;
}

// Every leaf length from 1 to kReduceLeaf (tails of every size after whole 32-lane rows), finite
// inputs and inputs with a NaN; returns the number of lengths where a leaf differs.
int leaf_mismatches() {
  using bl::cpu::ContiguousLeafFn;
  struct Pair {
    ContiguousLeafFn emulated, scalar;
  };
  const Pair pairs[] = {
      {&bl::cpu::leaf_sum_avx512_emulated, &scalar_contiguous_leaf<bl::StepAdd>},
      {&bl::cpu::leaf_abs_sum_avx512_emulated, &scalar_contiguous_leaf<bl::StepAddAbs>},
      {&bl::cpu::leaf_square_sum_avx512_emulated, &scalar_contiguous_leaf<bl::StepSquare>},
      {&bl::cpu::leaf_centered_square_sum_avx512_emulated, &scalar_contiguous_leaf<bl::StepCenteredSquare>},
      {&bl::cpu::leaf_max_avx512_emulated, &scalar_contiguous_leaf<bl::StepMax>},
      {&bl::cpu::leaf_min_avx512_emulated, &scalar_contiguous_leaf<bl::StepMin>},
  };
  int bad = 0;
  uint64_t seed = 10;
  for (int64_t len = 1; len <= bl::kReduceLeaf; len += (len < 80 ? 1 : 37)) {
    for (bool with_nan : {false, true}) {
      const std::vector<float> x = leaf_values(static_cast<size_t>(len), seed++, with_nan);
      for (const Pair& p : pairs) {
        const float c = 0.375f;
        if (bl::bits_of(p.emulated(x.data(), len, c)) != bl::bits_of(p.scalar(x.data(), len, c))) ++bad;
      }
    }
  }
  return bad;
}

TEST(Avx512Emulated, ReductionLeavesMatchScalarLeaves) {
  g_avx512_emulation_unfused = false;
  EXPECT_EQ(leaf_mismatches(), 0);
}

// Sabotage arm: unfused squares must be caught by the same comparison.
TEST(Avx512Emulated, SabotageUnfusedSquareLeavesAreCaught) {
  g_avx512_emulation_unfused = true;
  const int bad = leaf_mismatches();
  g_avx512_emulation_unfused = false;
  EXPECT_GT(bad, 0);
}

}  // namespace
