// test_lbfgs.cpp: the shared L-BFGS pieces (lbfgs_direction, lbfgs_push_pair): steepest descent
// without pairs, the secant condition H y = s for one exact pair, pair selection and the limit.
#include <gtest/gtest.h>

#include <vector>

#include "ml/linear/lbfgs.h"

namespace bl::ml {
namespace {

using Vec = std::vector<float>;

TEST(Lbfgs, DirectionWithoutPairsIsMinusGradient) {
  LbfgsHistory h;
  EXPECT_EQ(lbfgs_direction({1.5f, -2.0f, 0.0f}, h), (Vec{-1.5f, 2.0f, -0.0f}));
}

TEST(Lbfgs, OnePairSatisfiesTheSecantCondition) {
  // s = (1, 0, 1), y = (2, 0, 2): s.y = 4, so every step below is exact and -H y must be -s.
  LbfgsHistory h;
  lbfgs_push_pair(h, {0.0f, 0.0f, 0.0f}, {1.0f, 0.0f, 1.0f}, {0.0f, 0.0f, 0.0f}, {2.0f, 0.0f, 2.0f}, 10);
  ASSERT_EQ(h.s.size(), 1u);
  EXPECT_EQ(h.rho[0], 0.25f);
  Vec d = lbfgs_direction({2.0f, 0.0f, 2.0f}, h);
  EXPECT_EQ(d[0], -1.0f);
  EXPECT_EQ(d[2], -1.0f);
  EXPECT_EQ(d[1], 0.0f);
}

TEST(Lbfgs, PushSkipsNonPositiveCurvatureAndKeepsTheNewestPairs) {
  LbfgsHistory h;
  lbfgs_push_pair(h, {0.0f}, {1.0f}, {0.0f}, {-1.0f}, 2);  // s.y < 0: skipped
  lbfgs_push_pair(h, {0.0f}, {1.0f}, {0.0f}, {0.0f}, 2);   // s.y = 0: skipped
  EXPECT_TRUE(h.empty());
  for (float k : {1.0f, 2.0f, 3.0f}) lbfgs_push_pair(h, {0.0f}, {k}, {0.0f}, {1.0f}, 2);
  ASSERT_EQ(h.s.size(), 2u);
  EXPECT_EQ(h.s[0][0], 2.0f);  // the oldest (k = 1) was dropped
  EXPECT_EQ(h.s[1][0], 3.0f);
  LbfgsHistory none;
  lbfgs_push_pair(none, {0.0f}, {1.0f}, {0.0f}, {1.0f}, 0);
  EXPECT_TRUE(none.empty());
  h.clear();
  EXPECT_TRUE(h.empty() && h.y.empty() && h.rho.empty());
}

}  // namespace
}  // namespace bl::ml
