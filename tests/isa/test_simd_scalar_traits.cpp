// The generic sum-schedule leaves of simd/reduce_leaf.h instantiated with the one-lane traits of
// vec_scalar.h, against the scalar leaf (leaf_reduce, the reference's lane order) bit for bit: the
// generic code's lane assignment, tail and fold are checked on any machine, apart from the
// per-ISA traits (which the conformance tests check under every BITLEARN_ISA variant).
#include <gtest/gtest.h>

#include <vector>

#include "contract/rng.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/cpu/simd/reduce_leaf.h"
#include "kernels/cpu/simd/vec_scalar.h"

namespace bl::cpu::scalar_traits_test {
BL_DEFINE_REDUCE_LEAVES(generic, ::bl::simd::Scalar)
}  // namespace bl::cpu::scalar_traits_test

namespace {

std::vector<float> traits_leaf_values(size_t n, uint64_t seed, bool with_nan) {
  std::vector<float> v(n);
  const float specials[] = {0.0f, -0.0f, 1e-40f, -3e-39f, 3.0e38f, -2.9e38f, bl::float_of(0x7F800000u),
                            bl::float_of(0xFF800000u)};
  for (size_t i = 0; i < n; ++i) {
    const uint32_t r = bl::random_u32_element(seed, 5, i);
    if (r % 50 == 0)
      v[i] = specials[(r >> 8) % (sizeof specials / sizeof specials[0])];
    else
      v[i] = (static_cast<float>(r >> 8) * 0x1p-24f - 0.5f) * ((r & 0x80) ? 1e3f : 1e-3f);
  }
  if (with_nan && n > 0) v[n / 2] = bl::float_of(0x7FC00042u);
  return v;
}

TEST(SimdScalarTraits, GenericReductionLeavesMatchScalarLeaves) {
  namespace t = bl::cpu::scalar_traits_test;
  using bl::cpu::ContiguousLeafFn;
  using bl::cpu::scalar_contiguous_leaf;
  struct Pair {
    ContiguousLeafFn generic, scalar;
  };
  const Pair pairs[] = {
      {&t::leaf_sum_generic, &scalar_contiguous_leaf<bl::StepAdd>},
      {&t::leaf_abs_sum_generic, &scalar_contiguous_leaf<bl::StepAddAbs>},
      {&t::leaf_square_sum_generic, &scalar_contiguous_leaf<bl::StepSquare>},
      {&t::leaf_centered_square_sum_generic, &scalar_contiguous_leaf<bl::StepCenteredSquare>},
      {&t::leaf_max_generic, &scalar_contiguous_leaf<bl::StepMax>},
      {&t::leaf_min_generic, &scalar_contiguous_leaf<bl::StepMin>},
  };
  int bad = 0;
  uint64_t seed = 20;
  for (int64_t len = 1; len <= bl::kReduceLeaf; len += (len < 80 ? 1 : 37)) {
    for (bool with_nan : {false, true}) {
      const std::vector<float> x = traits_leaf_values(static_cast<size_t>(len), seed++, with_nan);
      for (const Pair& p : pairs)
        if (bl::bits_of(p.generic(x.data(), len, 0.375f)) != bl::bits_of(p.scalar(x.data(), len, 0.375f))) ++bad;
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
