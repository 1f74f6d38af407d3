// Gradient checks of the elementwise, reduction, softmax and matmul rules against float64
// finite differences.
#include <cmath>

#include <gtest/gtest-spi.h>

#include "autograd/gradcheck.h"

namespace bl::gradcheck {
namespace {

using Fn1 = double (*)(double);

void unary_case(const char* name, ag::Var (*op)(const ag::Var&), Fn1 ref, double lo_shift = 0.0,
                double scale = 2.0) {
  GradInput in{{3, 5}, {}, scale};
  Values v = random_values(15, 11, scale);
  for (auto& x : v) x += lo_shift;
  in.values = v;
  expect_gradients(name, {in}, [op](const std::vector<ag::Var>& x) { return op(x[0]); },
                   [ref](const std::vector<Values>& x) {
                     Values o;
                     for (double a : x[0]) o.push_back(ref(a));
                     return o;
                   });
}

TEST(AutogradGradcheck, UnaryOps) {
  unary_case("relu", ag::relu, [](double x) { return x > 0 ? x : 0.0; });
  unary_case("tanh", ag::tanh, [](double x) { return std::tanh(x); });
  unary_case("sigmoid", ag::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); });
  unary_case("gelu", ag::gelu, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
  unary_case("silu", ag::silu, [](double x) { return x / (1 + std::exp(-x)); });
  unary_case("exp", ag::exp, [](double x) { return std::exp(x); });
  unary_case("log", ag::log, [](double x) { return std::log(x); }, 3.0);
  unary_case("square", ag::square, [](double x) { return x * x; });
  unary_case("sqrt", ag::sqrt, [](double x) { return std::sqrt(x); }, 3.0);
  unary_case("rsqrt", ag::rsqrt, [](double x) { return 1 / std::sqrt(x); }, 3.0);
  unary_case("abs", ag::abs, [](double x) { return std::fabs(x); });
  unary_case("neg", ag::neg, [](double x) { return -x; });
}

// Binary op of a [2, 3, 4] with b [3, 1] (broadcast on two axes).
void binary_case(const char* name, ag::Var (*op)(const ag::Var&, const ag::Var&),
                 double (*ref)(double, double), double b_shift = 0.0) {
  Values bv = random_values(3, 5, 1.0);
  for (auto& x : bv) x += b_shift;
  expect_gradients(name, {{{2, 3, 4}}, {{3, 1}, bv}},
                   [op](const std::vector<ag::Var>& x) { return op(x[0], x[1]); },
                   [ref](const std::vector<Values>& x) {
                     Values o;
                     for (int i = 0; i < 2; ++i)
                       for (int j = 0; j < 3; ++j)
                         for (int k = 0; k < 4; ++k) o.push_back(ref(x[0][(i * 3 + j) * 4 + k], x[1][j]));
                     return o;
                   });
}

TEST(AutogradGradcheck, BroadcastBinaryOps) {
  binary_case("add", ag::add, [](double a, double b) { return a + b; });
  binary_case("sub", ag::sub, [](double a, double b) { return a - b; });
  binary_case("mul", ag::mul, [](double a, double b) { return a * b; });
  binary_case("div", ag::div, [](double a, double b) { return a / b; }, 3.0);
}

TEST(AutogradGradcheck, MatmulAllTransposes) {
  const int64_t m = 3, k = 5, n = 4;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      Shape sa = ta ? Shape{k, m} : Shape{m, k};
      Shape sb = tb ? Shape{n, k} : Shape{k, n};
      expect_gradients(
          "matmul ta=" + std::to_string(ta) + " tb=" + std::to_string(tb), {{sa}, {sb}},
          [ta, tb](const std::vector<ag::Var>& x) { return ag::matmul(x[0], x[1], ta, tb); },
          [ta, tb](const std::vector<Values>& x) {
            Values o(m * n, 0.0);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j)
                for (int64_t p = 0; p < k; ++p) {
                  double a = ta ? x[0][p * m + i] : x[0][i * k + p];
                  double b = tb ? x[1][j * k + p] : x[1][p * n + j];
                  o[i * n + j] += a * b;
                }
            return o;
          });
    }
  expect_gradients("bmm", {{{2, 3, 4}}, {{2, 5, 4}}},
                   [](const std::vector<ag::Var>& x) { return ag::bmm(x[0], x[1], false, true); },
                   [](const std::vector<Values>& x) {
                     Values o(2 * 3 * 5, 0.0);
                     for (int b = 0; b < 2; ++b)
                       for (int i = 0; i < 3; ++i)
                         for (int j = 0; j < 5; ++j)
                           for (int p = 0; p < 4; ++p)
                             o[(b * 3 + i) * 5 + j] += x[0][(b * 3 + i) * 4 + p] * x[1][(b * 5 + j) * 4 + p];
                     return o;
                   });
}

TEST(AutogradGradcheck, ReductionsAndSoftmax) {
  expect_gradients("sum dim 1", {{{3, 4, 2}}},
                   [](const std::vector<ag::Var>& x) { return ag::sum(x[0], {1}); },
                   [](const std::vector<Values>& x) {
                     Values o(6, 0.0);
                     for (int i = 0; i < 3; ++i)
                       for (int j = 0; j < 4; ++j)
                         for (int k = 0; k < 2; ++k) o[i * 2 + k] += x[0][(i * 4 + j) * 2 + k];
                     return o;
                   });
  expect_gradients("mean dims 0,2 keepdim", {{{3, 4, 2}}},
                   [](const std::vector<ag::Var>& x) { return ag::mean(x[0], {0, 2}, true); },
                   [](const std::vector<Values>& x) {
                     Values o(4, 0.0);
                     for (int i = 0; i < 3; ++i)
                       for (int j = 0; j < 4; ++j)
                         for (int k = 0; k < 2; ++k) o[j] += x[0][(i * 4 + j) * 2 + k] / 6.0;
                     return o;
                   });
  auto softmax_ref = [](const Values& x, int rows, int cols, bool log) {
    Values o;
    for (int r = 0; r < rows; ++r) {
      double mx = -1e300, s = 0;
      for (int c = 0; c < cols; ++c) mx = std::max(mx, x[r * cols + c]);
      for (int c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - mx);
      for (int c = 0; c < cols; ++c)
        o.push_back(log ? x[r * cols + c] - mx - std::log(s) : std::exp(x[r * cols + c] - mx) / s);
    }
    return o;
  };
  expect_gradients("softmax", {{{4, 6}, {}, 3.0}},
                   [](const std::vector<ag::Var>& x) { return ag::softmax(x[0], -1); },
                   [&](const std::vector<Values>& x) { return softmax_ref(x[0], 4, 6, false); });
  expect_gradients("log_softmax", {{{4, 6}, {}, 3.0}},
                   [](const std::vector<ag::Var>& x) { return ag::log_softmax(x[0], 1); },
                   [&](const std::vector<Values>& x) { return softmax_ref(x[0], 4, 6, true); });
  expect_gradients("amax dim 1", {{{3, 5}}},
                   [](const std::vector<ag::Var>& x) { return ag::amax(x[0], 1); },
                   [](const std::vector<Values>& x) {
                     Values o;
                     for (int i = 0; i < 3; ++i) {
                       double m = -1e300;
                       for (int j = 0; j < 5; ++j) m = std::max(m, x[0][i * 5 + j]);
                       o.push_back(m);
                     }
                     return o;
                   });
}

TEST(AutogradGradcheck, ShapeOps) {
  expect_gradients("permute+slice+concat", {{{2, 3, 4}}, {{2, 3, 1}}},
                   [](const std::vector<ag::Var>& x) {
                     ag::Var p = ag::permute(x[0], {2, 0, 1});      // [4, 2, 3]
                     ag::Var s = ag::slice(p, 0, 1, 3);              // [2, 2, 3]
                     ag::Var c = ag::concat({x[0], x[1]}, 2);        // [2, 3, 5]
                     return ag::concat({ag::reshape(s, {12}), ag::reshape(c, {30})}, 0);
                   },
                   [](const std::vector<Values>& x) {
                     Values o;
                     for (int a = 1; a < 3; ++a)
                       for (int b = 0; b < 2; ++b)
                         for (int c = 0; c < 3; ++c) o.push_back(x[0][(b * 3 + c) * 4 + a]);
                     for (int b = 0; b < 2; ++b)
                       for (int c = 0; c < 3; ++c) {
                         for (int a = 0; a < 4; ++a) o.push_back(x[0][(b * 3 + c) * 4 + a]);
                         o.push_back(x[1][b * 3 + c]);
                       }
                     return o;
                   });
  std::vector<int64_t> ids_v = {2, 0, 2, 3, 2};
  Tensor ids = Tensor::from_vector(ids_v, {5});
  expect_gradients("embedding (repeated ids)", {{{4, 3}}},
                   [ids](const std::vector<ag::Var>& x) { return ag::embedding(x[0], ids); },
                   [ids_v](const std::vector<Values>& x) {
                     Values o;
                     for (int64_t id : ids_v)
                       for (int d = 0; d < 3; ++d) o.push_back(x[0][id * 3 + d]);
                     return o;
                   });
}

TEST(AutogradGradcheck, SharedInputAccumulatesInFixedOrder) {
  // x feeds three consumers; the gradient is the sum of the three contributions.
  expect_gradients("x*x + tanh(x) - x", {{{7}}},
                   [](const std::vector<ag::Var>& x) {
                     return ag::sub(ag::add(ag::mul(x[0], x[0]), ag::tanh(x[0])), x[0]);
                   },
                   [](const std::vector<Values>& x) {
                     Values o;
                     for (double a : x[0]) o.push_back(a * a + std::tanh(a) - a);
                     return o;
                   });
}

}  // namespace
}  // namespace bl::gradcheck

namespace bl::gradcheck {
namespace {

// A tanh whose backward rule is wrong (1 - y instead of 1 - y^2): the check must catch it.
void check_broken_tanh_rule() {
  expect_gradients("broken tanh", {{{6}}},
                   [](const std::vector<ag::Var>& x) {
                     Tensor y = bl::tanh(x[0].value());
                     return ag::record("broken_tanh", y, {x[0]}, [y](const Tensor& g) {
                       Tensor one = Tensor::scalar(1.0);
                       return std::vector<Tensor>{bl::mul(g, bl::sub(one, y))};
                     });
                   },
                   [](const std::vector<Values>& x) {
                     Values o;
                     for (double a : x[0]) o.push_back(std::tanh(a));
                     return o;
                   });
}

TEST(AutogradGradcheck, SabotageArmCatchesAWrongBackwardRule) {
  EXPECT_NONFATAL_FAILURE(check_broken_tanh_rule(), "vs finite difference");
}

}  // namespace
}  // namespace bl::gradcheck
