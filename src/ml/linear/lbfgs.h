// lbfgs.h: a limited-memory BFGS minimizer on the host in the contract's binary32 operations (fixed
// order), for the smooth objectives of the linear family (huber_regressor, the Tweedie family).
//
// Two-loop recursion with `history` pairs (pairs with s.y <= 0 are skipped), first step
// min(1, 1 / ||g||_2) along -g, later steps 1; Armijo backtracking (c1 = 1e-4, halving, at most 60
// times); when the first trial step is accepted, the step doubles (at most 30 times) while the
// objective keeps falling and the Armijo condition holds. Stops when the projected max |g| <= gtol, a line search finds no decrease (binary32
// resolution reached), or after max_iter iterations.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bl::ml {

// f(x), with the gradient written into g (resized to x's size by the callee).
using LbfgsObjective = std::function<float(const std::vector<float>& x, std::vector<float>& g)>;

struct LbfgsOptions {
  int64_t max_iter = 100;
  float gtol = 1e-4f;
  int history = 10;
  std::string stage = "L-BFGS";  // progress label
  // Optional lower bound on one coordinate (projected steps; -1 = none).
  int64_t bounded_index = -1;
  float lower_bound = 0.0f;
};

struct LbfgsResult {
  std::vector<float> x;
  float f = 0.0f;
  int64_t n_iter = 0;
};

// Minimizes f from x0.
LbfgsResult lbfgs_minimize(const LbfgsObjective& f, std::vector<float> x0, const LbfgsOptions& opt);

// The curvature pairs of L-BFGS, oldest first: s = x_new - x, y = g_new - g and rho = 1 / (s . y).
struct LbfgsHistory {
  std::vector<std::vector<float>> s, y;
  std::vector<float> rho;
  bool empty() const { return s.empty(); }
  void clear();
};

// Adds the pair of the step x -> xn (gradients g -> gn) when s . y > 0, dropping the oldest pair
// when `limit` pairs are kept already (limit <= 0 keeps none). Differences and dot in index order.
void lbfgs_push_pair(LbfgsHistory& h, const std::vector<float>& x, const std::vector<float>& xn,
                     const std::vector<float>& g, const std::vector<float>& gn, int limit);

// The two-loop recursion: -H g for the inverse-Hessian estimate H of the pairs (newest to oldest,
// initial scaling gamma = s.y / y.y of the newest pair, oldest to newest); -g without pairs.
std::vector<float> lbfgs_direction(const std::vector<float>& g, const LbfgsHistory& h);

}  // namespace bl::ml
