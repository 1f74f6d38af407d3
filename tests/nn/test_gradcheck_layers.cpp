// Gradient checks of convolution, pooling, normalization, losses and recurrent layers against
// float64 finite differences.
#include <cmath>

#include "autograd/gradcheck.h"
#include "bitlearn/nn.h"

namespace bl::gradcheck {
namespace {

// NHWC convolution in double: x [N, H, W, C], w [OC, KH, KW, C/G], b [OC].
Values conv_ref(const Values& x, const Values& w, const Values* b, int64_t n, int64_t h, int64_t wd,
                int64_t c, int64_t oc, const nn::Window2d& win, int64_t groups) {
  int64_t oh = win.out_h(h), ow = win.out_w(wd), cg = c / groups, ocg = oc / groups;
  Values o;
  for (int64_t bn = 0; bn < n; ++bn)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx)
        for (int64_t f = 0; f < oc; ++f) {
          double s = b ? (*b)[f] : 0.0;
          int64_t g = f / ocg;
          for (int64_t ky = 0; ky < win.kernel_h; ++ky)
            for (int64_t kx = 0; kx < win.kernel_w; ++kx) {
              int64_t iy = y * win.stride_h - win.pad_h + ky * win.dilation_h;
              int64_t ix = xx * win.stride_w - win.pad_w + kx * win.dilation_w;
              if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
              for (int64_t ci = 0; ci < cg; ++ci)
                s += x[((bn * h + iy) * wd + ix) * c + g * cg + ci] *
                     w[((f * win.kernel_h + ky) * win.kernel_w + kx) * cg + ci];
            }
          o.push_back(s);
        }
  return o;
}

TEST(NnGradcheck, Conv2dStridePaddingDilationGroups) {
  struct Case { int64_t k, s, p, d, g; };
  for (Case cs : {Case{3, 1, 1, 1, 1}, Case{3, 1, 0, 1, 1}, Case{5, 1, 2, 1, 1}, Case{3, 2, 1, 1, 2},
                  Case{2, 1, 0, 2, 1}, Case{3, 1, 1, 1, 4}, Case{2, 2, 0, 1, 1}}) {
    const int64_t n = 2, h = 5, w = 4, c = 4, oc = 4;
    nn::Window2d win{cs.k, cs.k, cs.s, cs.s, cs.p, cs.p, cs.d, cs.d};
    int64_t g = cs.g;
    expect_gradients(
        "conv k" + std::to_string(cs.k) + " s" + std::to_string(cs.s) + " p" + std::to_string(cs.p) +
            " d" + std::to_string(cs.d) + " g" + std::to_string(cs.g),
        {{{n, h, w, c}}, {{oc, cs.k, cs.k, c / g}}, {{oc}}},
        [win, g](const std::vector<ag::Var>& x) { return nn::conv2d(x[0], x[1], x[2], win, g); },
        [=](const std::vector<Values>& x) { return conv_ref(x[0], x[1], &x[2], n, h, w, c, oc, win, g); });
  }
}

TEST(NnGradcheck, Conv1dLayer) {
  nn::InitStream init(3);
  nn::Conv2dOptions o;
  o.kernel = 3;
  o.padding = 1;
  o.stride = 2;
  auto conv = std::make_shared<nn::Conv1d>(2, 3, o, init);
  std::vector<float> wf = conv->weight.value().to_vector<float>();
  std::vector<float> bf = conv->bias.value().to_vector<float>();
  Values w(wf.begin(), wf.end()), b(bf.begin(), bf.end());
  nn::Window2d win{1, 3, 1, 2, 0, 1, 1, 1};
  expect_gradients("conv1d", {{{2, 7, 2}}}, [conv](const std::vector<ag::Var>& x) { return conv->forward(x[0]); },
                   [=](const std::vector<Values>& x) { return conv_ref(x[0], w, &b, 2, 1, 7, 2, 3, win, 1); });
}

Values pool_ref(const Values& x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t k, int64_t s, int64_t p,
                bool is_max) {
  nn::Window2d win{k, k, s, s, p, p, 1, 1};
  Values o;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < win.out_h(h); ++y)
      for (int64_t xx = 0; xx < win.out_w(w); ++xx)
        for (int64_t ch = 0; ch < c; ++ch) {
          double acc = is_max ? -INFINITY : 0.0;
          for (int64_t ky = 0; ky < k; ++ky)
            for (int64_t kx = 0; kx < k; ++kx) {
              int64_t iy = y * s - p + ky, ix = xx * s - p + kx;
              double v = (iy < 0 || iy >= h || ix < 0 || ix >= w) ? (is_max ? -INFINITY : 0.0)
                                                                   : x[((b * h + iy) * w + ix) * c + ch];
              acc = is_max ? std::max(acc, v) : acc + v / static_cast<double>(k * k);
            }
          o.push_back(acc);
        }
  return o;
}

TEST(NnGradcheck, Pooling) {
  auto mp = std::make_shared<nn::MaxPool2d>(3, 2, 1);
  expect_gradients("maxpool k3 s2 p1", {{{2, 5, 6, 3}}}, [mp](const std::vector<ag::Var>& x) { return mp->forward(x[0]); },
                   [](const std::vector<Values>& x) { return pool_ref(x[0], 2, 5, 6, 3, 3, 2, 1, true); });
  auto mp2 = std::make_shared<nn::MaxPool2d>(2);
  expect_gradients("maxpool k2 (tiling path)", {{{2, 4, 6, 3}}},
                   [mp2](const std::vector<ag::Var>& x) { return mp2->forward(x[0]); },
                   [](const std::vector<Values>& x) { return pool_ref(x[0], 2, 4, 6, 3, 2, 2, 0, true); });
  auto ap3 = std::make_shared<nn::AvgPool2d>(3, 2, 1);
  expect_gradients("avgpool k3 s2 p1", {{{2, 5, 6, 3}}},
                   [ap3](const std::vector<ag::Var>& x) { return ap3->forward(x[0]); },
                   [](const std::vector<Values>& x) { return pool_ref(x[0], 2, 5, 6, 3, 3, 2, 1, false); });
  auto ap = std::make_shared<nn::AvgPool2d>(2);
  expect_gradients("avgpool k2", {{{2, 4, 6, 3}}}, [ap](const std::vector<ag::Var>& x) { return ap->forward(x[0]); },
                   [](const std::vector<Values>& x) { return pool_ref(x[0], 2, 4, 6, 3, 2, 2, 0, false); });
}

TEST(NnGradcheck, Normalizations) {
  auto bn = std::make_shared<nn::BatchNorm>(3);
  expect_gradients("batchnorm train", {{{6, 3}}}, [bn](const std::vector<ag::Var>& x) { return bn->forward(x[0]); },
                   [](const std::vector<Values>& x) {
                     Values o(18);
                     for (int c = 0; c < 3; ++c) {
                       double m = 0, v = 0;
                       for (int i = 0; i < 6; ++i) m += x[0][i * 3 + c] / 6;
                       for (int i = 0; i < 6; ++i) v += (x[0][i * 3 + c] - m) * (x[0][i * 3 + c] - m) / 6;
                       for (int i = 0; i < 6; ++i) o[i * 3 + c] = (x[0][i * 3 + c] - m) / std::sqrt(v + 1e-5);
                     }
                     return o;
                   });
  auto ln = std::make_shared<nn::LayerNorm>(5);
  expect_gradients("layernorm", {{{3, 5}}}, [ln](const std::vector<ag::Var>& x) { return ln->forward(x[0]); },
                   [](const std::vector<Values>& x) {
                     Values o;
                     for (int r = 0; r < 3; ++r) {
                       double m = 0, v = 0;
                       for (int c = 0; c < 5; ++c) m += x[0][r * 5 + c] / 5;
                       for (int c = 0; c < 5; ++c) v += (x[0][r * 5 + c] - m) * (x[0][r * 5 + c] - m) / 5;
                       for (int c = 0; c < 5; ++c) o.push_back((x[0][r * 5 + c] - m) / std::sqrt(v + 1e-5));
                     }
                     return o;
                   });
  auto rms = std::make_shared<nn::RMSNorm>(5);
  expect_gradients("rmsnorm", {{{3, 5}}}, [rms](const std::vector<ag::Var>& x) { return rms->forward(x[0]); },
                   [](const std::vector<Values>& x) {
                     Values o;
                     for (int r = 0; r < 3; ++r) {
                       double ms = 0;
                       for (int c = 0; c < 5; ++c) ms += x[0][r * 5 + c] * x[0][r * 5 + c] / 5;
                       for (int c = 0; c < 5; ++c) o.push_back(x[0][r * 5 + c] / std::sqrt(ms + 1e-6));
                     }
                     return o;
                   });
}

TEST(NnGradcheck, Losses) {
  std::vector<int64_t> lab = {2, 0, 3};
  Tensor labels = Tensor::from_vector(lab, {3});
  auto ce_ref = [lab](const Values& z, double eps) {
    double total = 0;
    for (int r = 0; r < 3; ++r) {
      double mx = -1e300, s = 0;
      for (int c = 0; c < 4; ++c) mx = std::max(mx, z[r * 4 + c]);
      for (int c = 0; c < 4; ++c) s += std::exp(z[r * 4 + c] - mx);
      for (int c = 0; c < 4; ++c) {
        double ls = z[r * 4 + c] - mx - std::log(s);
        double t = (c == lab[r] ? 1 - eps : 0.0) + eps / 4;
        total -= t * ls;
      }
    }
    return Values{total / 3};
  };
  for (float eps : {0.0f, 0.1f})
    expect_gradients("cross_entropy eps=" + std::to_string(eps), {{{3, 4}, {}, 2.0}},
                     [labels, eps](const std::vector<ag::Var>& x) { return nn::cross_entropy(x[0], labels, eps); },
                     [&](const std::vector<Values>& x) { return ce_ref(x[0], eps); });
  expect_gradients("nll_loss", {{{3, 4}}}, [labels](const std::vector<ag::Var>& x) { return nn::nll_loss(x[0], labels); },
                   [lab](const std::vector<Values>& x) {
                     double s = 0;
                     for (int r = 0; r < 3; ++r) s -= x[0][r * 4 + lab[r]];
                     return Values{s / 3};
                   });
  auto pair_ref = [](double (*f)(double, double)) {
    return [f](const std::vector<Values>& x) {
      double s = 0;
      for (size_t i = 0; i < x[0].size(); ++i) s += f(x[0][i], x[1][i]);
      return Values{s / static_cast<double>(x[0].size())};
    };
  };
  expect_gradients("mse", {{{2, 5}}, {{2, 5}}}, [](const std::vector<ag::Var>& x) { return nn::mse_loss(x[0], x[1]); },
                   pair_ref([](double a, double b) { return (a - b) * (a - b); }));
  expect_gradients("l1", {{{2, 5}}, {{2, 5}}}, [](const std::vector<ag::Var>& x) { return nn::l1_loss(x[0], x[1]); },
                   pair_ref([](double a, double b) { return std::fabs(a - b); }));
  expect_gradients("huber", {{{2, 5}, {}, 2.0}, {{2, 5}}},
                   [](const std::vector<ag::Var>& x) { return nn::huber_loss(x[0], x[1], 0.5f); },
                   pair_ref([](double a, double b) {
                     double d = std::fabs(a - b);
                     return d <= 0.5 ? 0.5 * d * d : 0.5 * (d - 0.25);
                   }));
  Values targets = random_values(10, 77, 0.5);
  for (auto& t : targets) t += 0.5;
  expect_gradients("bce_with_logits", {{{2, 5}, {}, 3.0}, {{2, 5}, targets}},
                   [](const std::vector<ag::Var>& x) { return nn::bce_with_logits(x[0], x[1]); },
                   pair_ref([](double x, double y) { return std::max(x, 0.0) - x * y + std::log1p(std::exp(-std::fabs(x))); }));
}

// Double reference of one recurrent layer (PyTorch equations), batch-first.
Values recurrent_ref(nn::RecurrentKind kind, const Values& x, int64_t n, int64_t t_len, int64_t in,
                     int64_t hid, const Values& wih, const Values& whh, const Values& bih,
                     const Values& bhh, bool reverse) {
  int64_t gcount = kind == nn::RecurrentKind::lstm ? 4 : kind == nn::RecurrentKind::gru ? 3 : 1;
  int64_t g = gcount * hid;
  Values out(n * t_len * hid, 0.0);
  for (int64_t b = 0; b < n; ++b) {
    Values h(hid, 0.0), c(hid, 0.0);
    for (int64_t k = 0; k < t_len; ++k) {
      int64_t t = reverse ? t_len - 1 - k : k;
      Values xp(g), hp(g);
      for (int64_t r = 0; r < g; ++r) {
        xp[r] = bih[r];
        hp[r] = bhh[r];
        for (int64_t j = 0; j < in; ++j) xp[r] += wih[r * in + j] * x[(b * t_len + t) * in + j];
        for (int64_t j = 0; j < hid; ++j) hp[r] += whh[r * hid + j] * h[j];
      }
      auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
      Values nh(hid);
      for (int64_t j = 0; j < hid; ++j) {
        if (kind == nn::RecurrentKind::rnn_tanh) {
          nh[j] = std::tanh(xp[j] + hp[j]);
        } else if (kind == nn::RecurrentKind::lstm) {
          double i = sig(xp[j] + hp[j]), f = sig(xp[hid + j] + hp[hid + j]);
          double gg = std::tanh(xp[2 * hid + j] + hp[2 * hid + j]), o = sig(xp[3 * hid + j] + hp[3 * hid + j]);
          c[j] = f * c[j] + i * gg;
          nh[j] = o * std::tanh(c[j]);
        } else {
          double r = sig(xp[j] + hp[j]), z = sig(xp[hid + j] + hp[hid + j]);
          double cand = std::tanh(xp[2 * hid + j] + r * hp[2 * hid + j]);
          nh[j] = (1 - z) * cand + z * h[j];
        }
      }
      h = nh;
      for (int64_t j = 0; j < hid; ++j) out[(b * t_len + t) * hid + j] = h[j];
    }
  }
  return out;
}

Values as_values(const ag::Var& v) {
  std::vector<float> f = v.value().to_vector<float>();
  return Values(f.begin(), f.end());
}

TEST(NnGradcheck, RecurrentLayers) {
  const int64_t n = 2, t_len = 4, in = 3, hid = 3;
  for (auto kind : {nn::RecurrentKind::rnn_tanh, nn::RecurrentKind::lstm, nn::RecurrentKind::gru}) {
    nn::InitStream init(5);
    auto layer = std::make_shared<nn::Recurrent>(kind, in, hid, 1, true, init);
    auto p = layer->named_parameters();
    ASSERT_EQ(p.size(), 8u);
    std::vector<Values> w;
    for (auto& [name, v] : p) w.push_back(as_values(v));
    expect_gradients(
        std::string("recurrent kind ") + std::to_string(static_cast<int>(kind)), {{{n, t_len, in}}},
        [layer](const std::vector<ag::Var>& x) { return layer->forward(x[0]); },
        [=](const std::vector<Values>& x) {
          Values fwd = recurrent_ref(kind, x[0], n, t_len, in, hid, w[0], w[1], w[2], w[3], false);
          Values bwd = recurrent_ref(kind, x[0], n, t_len, in, hid, w[4], w[5], w[6], w[7], true);
          Values o;
          for (int64_t i = 0; i < n * t_len; ++i) {
            for (int64_t j = 0; j < hid; ++j) o.push_back(fwd[i * hid + j]);
            for (int64_t j = 0; j < hid; ++j) o.push_back(bwd[i * hid + j]);
          }
          return o;
        });
    // Parameter gradients exist for every weight.
    for (auto& [name, v] : p) EXPECT_TRUE(v.grad().defined()) << name;
  }
}

}  // namespace
}  // namespace bl::gradcheck
