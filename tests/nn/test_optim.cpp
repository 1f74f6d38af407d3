// Optimizers and schedules against float64 references of their update rules.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "bitlearn/nn.h"
#include "bitlearn/ops.h"
#include "bitlearn/ops_optim.h"
#include "contract/arith.h"

namespace bl::nn {
namespace {

// Runs `steps` updates of opt on p (start values p0) with fixed gradients g_k = grads(k) and
// compares with the float64 reference state after each step.
using RefStep = std::function<void(std::vector<double>& p, const std::vector<double>& g, int step)>;

void compare(const char* name, const std::function<std::unique_ptr<Optimizer>(NamedVars)>& make,
             const RefStep& ref, Shape shape = {2, 3}, double tol = 2e-5) {
  SCOPED_TRACE(name);
  int64_t n = shape_numel(shape);
  std::vector<float> p0(n);
  for (int64_t i = 0; i < n; ++i) p0[i] = 0.5f - 0.1f * static_cast<float>(i);
  ag::Var p(Tensor::from_vector(p0, shape), true);
  auto opt = make({{"w", p}});
  std::vector<double> pd(p0.begin(), p0.end());
  for (int step = 0; step < 5; ++step) {
    std::vector<float> g(n);
    for (int64_t i = 0; i < n; ++i) g[i] = std::sin(0.7f * static_cast<float>(i + 3 * step)) * 0.3f;
    p.set_grad(Tensor::from_vector(g, shape));
    opt->step();
    ref(pd, std::vector<double>(g.begin(), g.end()), step + 1);
    std::vector<float> got = p.value().to_vector<float>();
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], pd[i], tol * (1 + std::fabs(pd[i]))) << "step " << step << " i " << i;
  }
  EXPECT_EQ(opt->steps(), 5);
}

// The fused Adam update gives the bits of the separate Tensor ops it replaces, for each decay kind,
// with NaN, infinities and signed zeros in the operands.
TEST(NnOptim, FusedAdamUpdateEqualsTheComposedOps) {
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3.5f, 2.25f};
  std::vector<float> pv, mv, vv, gv;
  for (int i = 0; i < 4099; ++i) {
    const float x = std::sin(0.37f * i) * 3.0f;
    pv.push_back(i % 97 == 0 ? specials[(i / 97) % 8] : x);
    mv.push_back(0.1f * std::cos(0.11f * i));
    vv.push_back(i % 89 == 0 ? INFINITY : 0.01f * (1.0f + std::sin(0.05f * i)));
    gv.push_back(i % 83 == 0 ? specials[(i / 83) % 8] : 0.5f * std::cos(0.7f * i));
  }
  const Shape shape = {static_cast<int64_t>(pv.size())};
  const Tensor p = Tensor::from_vector(pv, shape), m = Tensor::from_vector(mv, shape);
  const Tensor v = Tensor::from_vector(vv, shape), g = Tensor::from_vector(gv, shape);
  auto sc = [](float x) { return Tensor::scalar(x, DType::f32); };
  for (AdamDecayKind kind : {AdamDecayKind::none, AdamDecayKind::decoupled, AdamDecayKind::l2}) {
    AdamStepScalars st;
    st.beta1 = 0.9f, st.beta2 = 0.95f, st.eps = 1e-8f;
    st.step_size = bl::div(3e-4f, bl::sub(1.0f, 0.729f));
    st.bc2_sqrt = bl::sqrt(bl::sub(1.0f, 0.857375f));
    st.decay_kind = kind;
    st.decay = kind == AdamDecayKind::l2 ? 0.01f : bl::sub(1.0f, bl::mul(3e-4f, 0.1f));
    Tensor p1 = p, g1 = g;
    if (kind == AdamDecayKind::decoupled) p1 = bl::mul(p, sc(st.decay));
    if (kind == AdamDecayKind::l2) g1 = bl::add(g, bl::mul(p, sc(st.decay)));
    const Tensor m2 = bl::add(bl::mul(m, sc(st.beta1)), bl::mul(g1, sc(bl::sub(1.0f, st.beta1))));
    const Tensor v2 = bl::add(bl::mul(v, sc(st.beta2)), bl::mul(bl::square(g1), sc(bl::sub(1.0f, st.beta2))));
    const Tensor denom = bl::add(bl::div(bl::sqrt(v2), sc(st.bc2_sqrt)), sc(st.eps));
    const Tensor p2 = bl::sub(p1, bl::mul(bl::div(m2, denom), sc(st.step_size)));
    const std::array<Tensor, 3> fused = adam_update(p, m, v, g, st);
    EXPECT_EQ(fused[0].digest(), p2.digest()) << "p, decay kind " << static_cast<int>(kind);
    EXPECT_EQ(fused[1].digest(), m2.digest()) << "m, decay kind " << static_cast<int>(kind);
    EXPECT_EQ(fused[2].digest(), v2.digest()) << "v, decay kind " << static_cast<int>(kind);
  }
}

TEST(NnOptim, SgdMomentumNesterovWeightDecay) {
  std::vector<double> buf;
  compare("sgd nesterov", [](NamedVars v) { return std::make_unique<SGD>(v, 0.1f, 0.9f, true, 0.01f); },
          [&](std::vector<double>& p, const std::vector<double>& g0, int t) {
            if (buf.empty()) buf.assign(p.size(), 0.0);
            for (size_t i = 0; i < p.size(); ++i) {
              double g = g0[i] + 0.01 * p[i];
              buf[i] = t == 1 ? g : 0.9 * buf[i] + g;
              p[i] -= 0.1 * (g + 0.9 * buf[i]);
            }
          });
}

TEST(NnOptim, AdamAndAdamW) {
  for (bool decoupled : {false, true}) {
    std::vector<double> m, v;
    compare(decoupled ? "adamw" : "adam",
            [decoupled](NamedVars vars) { return std::make_unique<Adam>(vars, 0.01f, 0.9f, 0.999f, 1e-8f, 0.1f, decoupled); },
            [&](std::vector<double>& p, const std::vector<double>& g0, int t) {
              if (m.empty()) m.assign(p.size(), 0.0), v.assign(p.size(), 0.0);
              for (size_t i = 0; i < p.size(); ++i) {
                double g = g0[i];
                if (decoupled) p[i] *= 1 - 0.01 * 0.1;
                else g += 0.1 * p[i];
                m[i] = 0.9 * m[i] + 0.1 * g;
                v[i] = 0.999 * v[i] + 0.001 * g * g;
                double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.999, t));
                p[i] -= 0.01 * mh / (std::sqrt(vh) + 1e-8);
              }
            }, {2, 3}, 1e-4);
  }
}

TEST(NnOptim, RmspropAdagradLion) {
  std::vector<double> v;
  compare("rmsprop", [](NamedVars vars) { return std::make_unique<RMSprop>(vars, 0.01f, 0.9f, 1e-8f); },
          [&](std::vector<double>& p, const std::vector<double>& g, int) {
            if (v.empty()) v.assign(p.size(), 0.0);
            for (size_t i = 0; i < p.size(); ++i) {
              v[i] = 0.9 * v[i] + 0.1 * g[i] * g[i];
              p[i] -= 0.01 * g[i] / (std::sqrt(v[i]) + 1e-8);
            }
          }, {2, 3}, 1e-4);
  std::vector<double> s;
  compare("adagrad", [](NamedVars vars) { return std::make_unique<Adagrad>(vars, 0.1f); },
          [&](std::vector<double>& p, const std::vector<double>& g, int) {
            if (s.empty()) s.assign(p.size(), 0.0);
            for (size_t i = 0; i < p.size(); ++i) {
              s[i] += g[i] * g[i];
              p[i] -= 0.1 * g[i] / (std::sqrt(s[i]) + 1e-10);
            }
          }, {2, 3}, 1e-4);
  std::vector<double> m;
  compare("lion", [](NamedVars vars) { return std::make_unique<Lion>(vars, 0.01f, 0.9f, 0.99f, 0.1f); },
          [&](std::vector<double>& p, const std::vector<double>& g, int) {
            if (m.empty()) m.assign(p.size(), 0.0);
            for (size_t i = 0; i < p.size(); ++i) {
              double c = 0.9 * m[i] + 0.1 * g[i];
              double sg = c > 0 ? 1.0 : c < 0 ? -1.0 : 0.0;
              p[i] -= 0.01 * (sg + 0.1 * p[i]);
              m[i] = 0.99 * m[i] + 0.01 * g[i];
            }
          });
}

TEST(NnOptim, AdafactorAndLamb) {
  std::vector<double> r, c;
  compare("adafactor", [](NamedVars vars) { return std::make_unique<Adafactor>(vars, 0.01f); },
          [&](std::vector<double>& p, const std::vector<double>& g, int) {
            if (r.empty()) r.assign(2, 0.0), c.assign(3, 0.0);
            std::vector<double> rm(2, 0.0), cm(3, 0.0);
            for (int i = 0; i < 2; ++i)
              for (int j = 0; j < 3; ++j) {
                double g2 = g[i * 3 + j] * g[i * 3 + j] + 1e-30;
                rm[i] += g2 / 3;
                cm[j] += g2 / 2;
              }
            double rmean = 0;
            for (int i = 0; i < 2; ++i) r[i] = 0.999 * r[i] + 0.001 * rm[i], rmean += r[i] / 2;
            for (int j = 0; j < 3; ++j) c[j] = 0.999 * c[j] + 0.001 * cm[j];
            std::vector<double> u(6);
            double ss = 0;
            for (int i = 0; i < 2; ++i)
              for (int j = 0; j < 3; ++j) {
                u[i * 3 + j] = g[i * 3 + j] / std::sqrt(r[i] * c[j] / rmean);
                ss += u[i * 3 + j] * u[i * 3 + j] / 6;
              }
            double scale = std::max(1.0, std::sqrt(ss));
            for (int k = 0; k < 6; ++k) p[k] -= 0.01 * u[k] / scale;
          }, {2, 3}, 1e-4);
  std::vector<double> m, v;
  compare("lamb", [](NamedVars vars) { return std::make_unique<LAMB>(vars, 0.01f, 0.9f, 0.999f, 1e-6f, 0.01f); },
          [&](std::vector<double>& p, const std::vector<double>& g, int t) {
            if (m.empty()) m.assign(p.size(), 0.0), v.assign(p.size(), 0.0);
            std::vector<double> u(p.size());
            double pn = 0, un = 0;
            for (size_t i = 0; i < p.size(); ++i) {
              m[i] = 0.9 * m[i] + 0.1 * g[i];
              v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
              double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.999, t));
              u[i] = mh / (std::sqrt(vh) + 1e-6) + 0.01 * p[i];
              pn += p[i] * p[i];
              un += u[i] * u[i];
            }
            double ratio = (pn > 0 && un > 0) ? std::sqrt(pn) / std::sqrt(un) : 1.0;
            for (size_t i = 0; i < p.size(); ++i) p[i] -= 0.01 * ratio * u[i];
          }, {2, 3}, 1e-4);
}

TEST(NnOptim, ClipGradNormScalesByGlobalNorm) {
  ag::Var a(Tensor::from_vector(std::vector<float>{0, 0}, {2}), true);
  ag::Var b(Tensor::from_vector(std::vector<float>{0}, {1}), true);
  a.set_grad(Tensor::from_vector(std::vector<float>{3, 0}, {2}));
  b.set_grad(Tensor::from_vector(std::vector<float>{4}, {1}));
  Tensor norm = clip_grad_norm({{"a", a}, {"b", b}}, 1.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(norm.item()), 5.0f);
  EXPECT_NEAR(a.grad().to_vector<float>()[0], 0.6, 1e-6);
  EXPECT_NEAR(b.grad().to_vector<float>()[0], 0.8, 1e-6);
}

TEST(NnSchedule, ValuesMatchTheFormulas) {
  EXPECT_EQ(constant_lr(0.1f).lr(1000), 0.1f);
  LrSchedule st = step_lr(1.0f, 10, 0.5f);
  EXPECT_EQ(st.lr(9), 1.0f);
  EXPECT_EQ(st.lr(10), 0.5f);
  EXPECT_EQ(st.lr(35), 0.125f);
  LrSchedule lin = linear_lr(1.0f, 4, 14);
  EXPECT_EQ(lin.lr(0), 0.25f);
  EXPECT_EQ(lin.lr(3), 1.0f);
  EXPECT_NEAR(lin.lr(9), 0.5, 1e-7);
  EXPECT_EQ(lin.lr(14), 0.0f);
  LrSchedule cs = cosine_lr(1.0f, 0, 100, 0.1f);
  for (int s : {0, 10, 50, 77, 99})
    EXPECT_NEAR(cs.lr(s), 0.1 + 0.45 * (1 + std::cos(M_PI * s / 100.0)), 1e-6) << s;
}

TEST(NnInit, InitializersArePhiloxFunctionsWithTheRightMoments) {
  Tensor a = init::normal({4096}, 0.0f, 2.0f, 1, 0);
  Tensor b = init::normal({4096}, 0.0f, 2.0f, 1, 0);
  EXPECT_EQ(a.digest(), b.digest());
  EXPECT_NE(a.digest(), init::normal({4096}, 0.0f, 2.0f, 1, 1).digest());
  EXPECT_NEAR(std::sqrt(bl::var(a).item()), 2.0, 0.1);
  Tensor t = init::truncated_normal({4096}, 0.0f, 1.0f, -1.0f, 1.0f, 2, 0);
  EXPECT_LE(bl::amax(t).item(), 1.0);
  EXPECT_GE(bl::amin(t).item(), -1.0);
  Tensor k = init::kaiming_uniform({4096}, 50, std::sqrt(2.0f), 3, 0);
  double bound = std::sqrt(2.0) * std::sqrt(3.0 / 50);
  EXPECT_LE(bl::amax(bl::abs(k)).item(), bound);
  EXPECT_GT(bl::amax(bl::abs(k)).item(), 0.95 * bound);
  Tensor x = init::xavier_normal({4096}, 30, 70, 1.0f, 4, 0);
  EXPECT_NEAR(std::sqrt(bl::var(x).item()), std::sqrt(2.0 / 100), 0.01);
}

}  // namespace
}  // namespace bl::nn
