// The AVX-512 GEMM tile and skinny GEMM columns, compiled against the plain C++ intrinsics of
// avx512_emulation.h, against the contract's spelled-out order (memcmp). Runs on any x86-64 or
// AArch64 machine, so the kernels' panels, masks and leaf folds are checked where no AVX-512 CPU
// is at hand; on an AVX-512 CPU the conformance tests run the real instructions as well.
//
// The kernel sources are included under other function names (the library keeps its own), with
// the contract helpers private to this file as in the kernel objects.
#include "avx512_emulation.h"

#define BL_AVX512_EMULATION 1
#define matmul_tile_avx512 matmul_tile_avx512_emulated
#define columns_avx512 columns_avx512_emulated
#include "kernels/cpu/matmul_avx512.cpp"
#include "kernels/cpu/skinny_matmul_avx512.cpp"
#undef matmul_tile_avx512
#undef columns_avx512
#undef BL_AVX512_EMULATION

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contract/rng.h"

namespace {

using bl::matmul_detail::kMatmulTileCols;
using bl::matmul_detail::kMatmulTileRowsAvx512;

// Values with every sign, exponent extremes, subnormals, zeros of both signs, infinities and NaNs
// (one in 64), so the folds see every kind of float.
std::vector<float> special_values(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  const float specials[] = {0.0f, -0.0f, 1e-40f, -3e-39f, 3.4e38f, -2.5e38f, 1e-30f,
                            bl::float_of(0x7F800000u), bl::float_of(0xFF800000u),
                            bl::float_of(0x7FC01234u)};
  for (size_t i = 0; i < n; ++i) {
    const uint32_t r = bl::random_u32_element(seed, 7, i);
    if (r % 64 == 0)
      v[i] = specials[(r >> 8) % (sizeof specials / sizeof specials[0])];
    else
      v[i] = (static_cast<float>(r >> 8) * 0x1p-24f - 0.5f) * ((r & 0x80) ? 8.0f : 0.25f);
  }
  return v;
}

// The tile's contract: C[r][j] (r < rows, j < cols) = fma chain over the leaf from +0 in ascending
// k, folded as C = partial (first leaf) or C + partial, canonical NaN after the last leaf; nothing
// else of C is written.
void reference_tile(const float* pa, const float* pb, int64_t kc, float* c, int64_t ldc, int rows,
                    int cols, bool first_leaf, bool last_leaf) {
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < cols; ++j) {
      const float* panel = pb + (j / kMatmulTileCols) * kc * kMatmulTileCols;
      float acc = 0.0f;
      for (int64_t k = 0; k < kc; ++k)
        acc = bl::fma(pa[k * kMatmulTileRowsAvx512 + r], panel[k * kMatmulTileCols + j % kMatmulTileCols], acc);
      const float v = first_leaf ? acc : bl::add(c[r * ldc + j], acc);
      c[r * ldc + j] = last_leaf ? bl::canonicalize(v) : v;
    }
  }
}

// Bitwise equality of C after the tile; before the last leaf a NaN in C is an intermediate that
// the last leaf canonicalizes (the payload of NaN + NaN depends on operand order, as in the AVX2
// kernel), so there any NaN matches any NaN.
bool same_tile_output(const std::vector<float>& want, const std::vector<float>& got, bool last_leaf) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (bl::bits_of(want[i]) == bl::bits_of(got[i])) continue;
    if (!last_leaf && bl::is_nan(want[i]) && bl::is_nan(got[i])) continue;
    return false;
  }
  return true;
}

// Runs the emulated tile on every (rows, cols) from 1 x 1 to 12 x 32 for a few leaf lengths and
// leaf positions; returns how many cases differed from reference_tile (bitwise, C as a whole).
int tile_mismatches() {
  int bad = 0;
  uint64_t seed = 1;
  for (int64_t kc : {1, 5, 256}) {
    for (int rows = 1; rows <= kMatmulTileRowsAvx512; ++rows) {
      for (int cols = 1; cols <= 2 * kMatmulTileCols; ++cols) {
        const int64_t ldc = 37;  // wider than the tile: the columns past `cols` must stay intact
        const std::vector<float> pa = special_values(static_cast<size_t>(kc * kMatmulTileRowsAvx512), seed++);
        // Two panels are allocated only when the tile spans two: the kernel must not read a
        // second panel for cols <= 16 (the sanitizer builds would see it).
        const int panels = cols > kMatmulTileCols ? 2 : 1;
        const std::vector<float> pb = special_values(static_cast<size_t>(panels * kc * kMatmulTileCols), seed++);
        const std::vector<float> c0 = special_values(static_cast<size_t>(kMatmulTileRowsAvx512 * ldc), seed++);
        for (int leaf = 0; leaf < 4; ++leaf) {
          const bool first = (leaf & 1) != 0, last = (leaf & 2) != 0;
          std::vector<float> want = c0, got = c0;
          reference_tile(pa.data(), pb.data(), kc, want.data(), ldc, rows, cols, first, last);
          bl::matmul_detail::matmul_tile_avx512_emulated(pa.data(), pb.data(), kc, got.data(), ldc,
                                                         rows, cols, first, last);
          if (!same_tile_output(want, got, last)) ++bad;
        }
      }
    }
  }
  return bad;
}

TEST(Avx512Emulated, GemmTileMatchesContractOrderOnEveryEdgeShape) {
  g_avx512_emulation_unfused = false;
  EXPECT_EQ(tile_mismatches(), 0);
}

// Sabotage arm: the same kernel with a multiply and an add in place of each fused multiply-add
// must be caught.
TEST(Avx512Emulated, SabotageUnfusedGemmTileIsCaught) {
  g_avx512_emulation_unfused = true;
  const int bad = tile_mismatches();
  g_avx512_emulation_unfused = false;
  EXPECT_GT(bad, 0);
}

// The skinny columns (16 lanes, n1 - n0 a multiple of 16) against matmul_reference_element.
int skinny_mismatches() {
  int bad = 0;
  uint64_t seed = 500;
  for (int64_t m : {1, 3, 16}) {
    for (int64_t k : {0, 1, 255, 257, 600}) {
      const int64_t n = 48;
      const std::vector<float> a = special_values(static_cast<size_t>(m * k), seed++);
      const std::vector<float> b = special_values(static_cast<size_t>(k * n), seed++);
      std::vector<float> got(static_cast<size_t>(m * n), 7.0f);
      bl::skinny_detail::columns_avx512_emulated(a.data(), b.data(), got.data(), m, n, k, 16, 48);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const float want = j < 16 ? 7.0f
                                    : bl::matmul_reference_element(a.data() + i * k, k, false, b.data(),
                                                                   n, false, k, 0, j);
          if (bl::bits_of(want) != bl::bits_of(got[i * n + j])) {
            ++bad;
            break;
          }
        }
      }
    }
  }
  return bad;
}

TEST(Avx512Emulated, SkinnyColumnsMatchReference) {
  g_avx512_emulation_unfused = false;
  EXPECT_EQ(skinny_mismatches(), 0);
}

TEST(Avx512Emulated, SabotageUnfusedSkinnyColumnsAreCaught) {
  g_avx512_emulation_unfused = true;
  const int bad = skinny_mismatches();
  g_avx512_emulation_unfused = false;
  EXPECT_GT(bad, 0);
}

}  // namespace
