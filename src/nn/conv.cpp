// conv.cpp: patch gather (im2col by index), Conv2d (stride 1 on the CPU: the direct kernels of
// kernels/conv_direct.h, through ops/dispatch.h), Conv1d, pooling and the residual block.
#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "bitlearn/nn/functional.h"
#include "bitlearn/nn/init.h"
#include "bitlearn/nn/layers.h"
#include "bitlearn/ops_matmul.h"
#include "contract/arith.h"
#include "core/allocator.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/im2col.h"
#include "kernels/tile_max.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl::nn {

int64_t Window2d::out_h(int64_t h) const {
  return (h + 2 * pad_h - dilation_h * (kernel_h - 1) - 1) / stride_h + 1;
}
int64_t Window2d::out_w(int64_t w) const {
  return (w + 2 * pad_w - dilation_w * (kernel_w - 1) - 1) / stride_w + 1;
}

namespace {

void check_window(const Window2d& w, const char* op) {
  BL_CHECK(w.kernel_h >= 1 && w.kernel_w >= 1 && w.stride_h >= 1 && w.stride_w >= 1 &&
               w.dilation_h >= 1 && w.dilation_w >= 1 && w.pad_h >= 0 && w.pad_w >= 0,
           op, ": kernel, stride and dilation must be >= 1 and padding >= 0");
}

// The patch matrix [N * OH * OW, KH * KW, C] of x by the im2col kernel (a bit copy of every
// element, pad_value outside the image): the same values as the gather below, without its index
// tensor, its bounds check and the copy of x with a pad row appended.
Tensor patch_matrix(const Tensor& x_in, const Window2d& win, float pad_value_in) {
  Tensor x = x_in.contiguous();
  const float pad_value = Tensor::full({1}, pad_value_in).to_vector<float>()[0];  // as the pad row holds it
  Im2colShape s{x.dim(0), x.dim(1), x.dim(2), x.dim(3), win.kernel_h, win.kernel_w, win.stride_h,
                win.stride_w, win.pad_h, win.pad_w, win.dilation_h, win.dilation_w};
  Tensor out = Tensor::empty({s.rows(), win.kernel_h * win.kernel_w, s.c}, DType::f32, x.device());
  dispatch::im2col(x.device(), static_cast<const float*>(x.raw_data()), s, pad_value,
                   static_cast<float*>(out.raw_data()));
  return out;
}

// The source row of every patch element: (n * H + ih) * W + iw, or N * H * W (the pad row).
Tensor patch_index(int64_t n, int64_t h, int64_t w, const Window2d& win, Device device) {
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int64_t, int64_t, int, int>;
  static std::mutex mutex;
  static std::map<Key, Tensor> cache;
  Key key{n, h, w, win.kernel_h, win.kernel_w, win.stride_h, win.stride_w, win.pad_h, win.pad_w,
          win.dilation_h, win.dilation_w, static_cast<int>(device.kind), device.index};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  int64_t oh = win.out_h(h), ow = win.out_w(w);
  int64_t kk = win.kernel_h * win.kernel_w;
  Tensor ids = Tensor::empty({n * oh * ow * kk}, DType::i64);
  int64_t* p = ids.data<int64_t>();
  const int64_t pad_row = n * h * w;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t ky = 0; ky < win.kernel_h; ++ky)
          for (int64_t kx = 0; kx < win.kernel_w; ++kx) {
            int64_t iy = y * win.stride_h - win.pad_h + ky * win.dilation_h;
            int64_t ix = x * win.stride_w - win.pad_w + kx * win.dilation_w;
            bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            *p++ = inside ? (b * h + iy) * w + ix : pad_row;
          }
  ids = ids.to(device);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 64) cache.clear();
  cache[key] = ids;
  return ids;
}

}  // namespace

ag::Var extract_patches(const ag::Var& x, const Window2d& win, float pad_value) {
  check_window(win, "extract_patches");
  const Tensor& xv = x.value();
  BL_CHECK(xv.ndim() == 4, "conv/pool: input must be [N, H, W, C], got ", xv.str());
  int64_t n = xv.dim(0), h = xv.dim(1), w = xv.dim(2), c = xv.dim(3);
  int64_t oh = win.out_h(h), ow = win.out_w(w);
  BL_CHECK(oh >= 1 && ow >= 1, "conv/pool: input ", xv.str(), " is smaller than the window ",
           win.kernel_h, "x", win.kernel_w, " (dilation ", win.dilation_h, ", padding ", win.pad_h, ")");
  if (xv.dtype() == DType::f32 && !(ag::grad_enabled() && x.requires_grad()))
    return ag::Var(patch_matrix(xv, win, pad_value));
  ag::Var rows = ag::reshape(x, {n * h * w, c});
  ag::Var pad(Tensor::full({1, c}, pad_value, DType::f32, xv.device()), false);
  ag::Var source = ag::concat({rows, pad}, 0);
  Tensor ids = patch_index(n, h, w, win, xv.device());
  ag::Var cols = ag::embedding(source, ids);
  return ag::reshape(cols, {n * oh * ow, win.kernel_h * win.kernel_w, c});
}

namespace {

// The rows of weight [OC, kH, kW, C] for the input gradient of a stride-1 convolution: the kernel
// rotated by 180 degrees with input and output channels swapped, [C, kH * kW * OC].
Tensor rotated_weight(const Tensor& w) {
  int64_t oc = w.dim(0), kh = w.dim(1), kw = w.dim(2), c = w.dim(3);
  std::vector<int64_t> rh(kh), rw(kw);
  for (int64_t i = 0; i < kh; ++i) rh[i] = kh - 1 - i;
  for (int64_t i = 0; i < kw; ++i) rw[i] = kw - 1 - i;
  Tensor r = bl::index_select(w, 1, Tensor::from_vector(rh, {kh}).to(w.device()));
  r = bl::index_select(r, 2, Tensor::from_vector(rw, {kw}).to(w.device()));
  return r.permute({3, 1, 2, 0}).contiguous().reshape({c, kh * kw * oc});
}

// ---- the direct path (kernels/conv_direct.h): the same GEMM chains without the patch matrix ----

// [n, h + 2 ph, w + 2 pw, c]: x with ph / pw rows / columns of 0.0 around each image, the value the
// patch matrix holds at padded positions (bit copies).
Tensor pad_images(const Tensor& x_in, int64_t ph, int64_t pw) {
  Tensor x = x_in.contiguous();
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3), hp = h + 2 * ph, wp = w + 2 * pw;
  Tensor out = Tensor::empty({n, hp, wp, c}, DType::f32);
  const float* src = static_cast<const float*>(x.raw_data());
  float* dst = static_cast<float*>(out.raw_data());
  default_pool().parallel_for(n, [&](int64_t b) {
    float* img = dst + b * hp * wp * c;
    std::fill(img, img + ph * wp * c, 0.0f);
    std::fill(img + (ph + h) * wp * c, img + hp * wp * c, 0.0f);
    for (int64_t y = 0; y < h; ++y) {
      float* row = img + (ph + y) * wp * c;
      std::fill(row, row + pw * c, 0.0f);
      std::copy(src + (b * h + y) * w * c, src + (b * h + y + 1) * w * c, row + pw * c);
      std::fill(row + (pw + w) * c, row + wp * c, 0.0f);
    }
  });
  return out;
}

// The offset in the padded input of patch element (ky, kx, ci) from the window's corner.
std::vector<int64_t> patch_offsets(int64_t kh, int64_t kw, int64_t wp, int64_t c) {
  std::vector<int64_t> off;
  off.reserve(static_cast<size_t>(kh * kw * c));
  for (int64_t ky = 0; ky < kh; ++ky)
    for (int64_t kx = 0; kx < kw; ++kx)
      for (int64_t ci = 0; ci < c; ++ci) off.push_back((ky * wp + kx) * c + ci);
  return off;
}

// The kernel arguments for padded input xp [n, hp, wp, c], a kh x kw window and oc outputs; off
// receives the patch offsets the arguments point to.
ConvDirectArgs direct_args(const Tensor& xp, int64_t kh, int64_t kw, int64_t oc, std::vector<int64_t>& off) {
  ConvDirectArgs a;
  a.s = ConvDirectShape{xp.dim(0), xp.dim(1), xp.dim(2), xp.dim(3), kh, kw, oc};
  off = patch_offsets(kh, kw, a.s.wp, a.s.c);
  a.xp = static_cast<const float*>(xp.raw_data());
  a.off = off.data();
  a.nan = bl::canonical_nan();
  return a;
}

// The direct product of padded input xp [n, hp, wp, c] with wt [kh * kw * c, oc]: [rows, oc].
Tensor direct_forward(const Tensor& xp, const std::vector<float>& wt, int64_t kh, int64_t kw, int64_t oc) {
  std::vector<int64_t> off;
  const ConvDirectArgs a = direct_args(xp, kh, kw, oc, off);
  Tensor y = Tensor::empty({a.s.rows(), oc}, DType::f32);
  dispatch::conv_direct_forward(Device::cpu(), a, wt.data(), static_cast<float*>(y.raw_data()));
  return y;
}

// Whether the direct kernels run a stride-1 convolution of x with weight w here (CPU, binary32,
// output channels a multiple of the SIMD width, no empty extent: the empty sums stay with the GEMM).
bool direct_fits(const Tensor& x, const Tensor& w) {
  // Under the exact-integer GEMM profile every product is matmul's (docs/contract.md, section 4.1).
  if (gemm_profile() != GemmProfile::contract) return false;
  const int64_t lanes = dispatch::conv_direct_lanes(x.device());
  return lanes > 0 && x.device().is_cpu() && w.device().is_cpu() && x.dtype() == DType::f32 &&
         w.dtype() == DType::f32 && x.numel() > 0 && w.numel() > 0 && w.dim(0) % lanes == 0;
}

// Stride 1, dilation 1, one group, on the direct kernels: y = patches(x) W^T, dW = g^T patches(x)
// and dX = patches(g, padding k - 1 - p) rot(W)^T, each output the GEMM's chain.
ag::Var conv2d_direct(const ag::Var& x, const ag::Var& weight, const Window2d& win) {
  Tensor wv = weight.value().contiguous();
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3), oc = wv.dim(0);
  const int64_t kh = win.kernel_h, kw = win.kernel_w, kt = kh * kw * c;
  const float* wp = static_cast<const float*>(wv.raw_data());
  std::vector<float> wt(static_cast<size_t>(kt * oc));  // [K, oc]
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t k = 0; k < kt; ++k) wt[k * oc + o] = wp[o * kt + k];
  Tensor xp = pad_images(x.value(), win.pad_h, win.pad_w);
  Tensor y = direct_forward(xp, wt, kh, kw, oc);
  const int64_t oh = win.out_h(h), ow = win.out_w(w);
  bool gx = x.requires_grad(), gw = weight.requires_grad();
  Tensor xv = x.value();
  return ag::record("conv2d", y, {x, weight}, [=](const Tensor& g_in) {
    std::vector<Tensor> r(2);
    Tensor g = g_in.contiguous();
    const int64_t lanes = dispatch::conv_direct_lanes(Device::cpu());
    if (gw) {
      if (lanes > 0 && oc % lanes == 0) {
        std::vector<int64_t> off;
        const ConvDirectArgs a = direct_args(xp, kh, kw, oc, off);
        Tensor dw = Tensor::empty({oc, kh, kw, c}, DType::f32);
        dispatch::conv_direct_weight_grad(Device::cpu(), a, static_cast<const float*>(g.raw_data()),
                                          static_cast<float*>(dw.raw_data()));
        r[1] = dw;
      } else {
        Tensor cols = patch_matrix(xv, win, 0.0f).reshape({n * oh * ow, kt});
        r[1] = bl::matmul(g, cols, true, false).reshape(wv.shape());
      }
    }
    if (gx) {
      const int64_t bh = kh - 1 - win.pad_h, bw = kw - 1 - win.pad_w;
      if (lanes > 0 && c % lanes == 0) {
        std::vector<float> wr(static_cast<size_t>(kt * oc));  // [(ky, kx, o), c]: rotated, swapped
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx)
            for (int64_t o = 0; o < oc; ++o)
              for (int64_t ci = 0; ci < c; ++ci)
                wr[((ky * kw + kx) * oc + o) * c + ci] = wp[((o * kh + kh - 1 - ky) * kw + kw - 1 - kx) * c + ci];
        Tensor gp = pad_images(g.reshape({n, oh, ow, oc}), bh, bw);
        r[0] = direct_forward(gp, wr, kh, kw, c).reshape({n, h, w, c});
      } else {
        Window2d back{kh, kw, 1, 1, bh, bw, 1, 1};
        Tensor gcols = patch_matrix(g.reshape({n, oh, ow, oc}), back, 0.0f).reshape({n * h * w, kh * kw * oc});
        r[0] = bl::matmul(gcols, rotated_weight(wv), false, true).reshape({n, h, w, c});
      }
    }
    return r;
  });
}

// Stride 1, dilation 1, one group: y = patches(x) W^T as one tape node. The weight gradient is
// patches(x)^T g; the input gradient is the "full" convolution of g with the rotated kernel
// (patches of g with padding k - 1 - p times the rotated weight), a gather and a GEMM instead of a
// scatter-add: every sum has the GEMM contract's fixed order.
ag::Var conv2d_stride1(const ag::Var& x, const ag::Var& weight, const Window2d& win) {
  const Tensor& wv = weight.value();
  int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3), oc = wv.dim(0);
  int64_t kk = win.kernel_h * win.kernel_w;
  int64_t oh = win.out_h(h), ow = win.out_w(w);
  Tensor cols;
  {
    ag::NoGradGuard no_grad;
    cols = extract_patches(ag::Var(x.value()), win, 0.0f).value().reshape({n * oh * ow, kk * c});
  }
  Tensor y = bl::matmul(cols, wv.reshape({oc, kk * c}), false, true);
  bool gx = x.requires_grad(), gw = weight.requires_grad();
  Shape wshape = wv.shape();
  Window2d back{win.kernel_h, win.kernel_w, 1, 1, win.kernel_h - 1 - win.pad_h,
                win.kernel_w - 1 - win.pad_w, 1, 1};
  return ag::record("conv2d", y, {x, weight}, [=](const Tensor& g) {
    std::vector<Tensor> r(2);
    if (gw) r[1] = bl::matmul(g, cols, true, false).reshape(wshape);
    if (gx) {
      ag::NoGradGuard no_grad;
      Tensor g4 = g.reshape({n, oh, ow, oc});
      Tensor gcols = extract_patches(ag::Var(g4), back, 0.0f).value().reshape({n * h * w, kk * oc});
      r[0] = bl::matmul(gcols, rotated_weight(wv), false, true).reshape({n, h, w, c});
    }
    return r;
  });
}

}  // namespace

ag::Var conv2d(const ag::Var& x, const ag::Var& weight, const ag::Var& bias, const Window2d& win,
               int64_t groups) {
  const Tensor& xv = x.value();
  const Tensor& wv = weight.value();
  BL_CHECK(xv.ndim() == 4, "Conv2d: input must be [N, H, W, C], got ", xv.str());
  BL_CHECK(wv.ndim() == 4 && wv.dim(1) == win.kernel_h && wv.dim(2) == win.kernel_w,
           "Conv2d: weight ", wv.str(), " must be [C_out, ", win.kernel_h, ", ", win.kernel_w, ", C_in/groups]");
  BL_CHECK(groups >= 1 && xv.dim(3) == wv.dim(3) * groups && wv.dim(0) % groups == 0,
           "Conv2d: input ", xv.str(), " has ", xv.dim(3), " channels; weight ", wv.str(),
           " with groups=", groups, " expects ", wv.dim(3) * groups);
  check_window(win, "Conv2d");
  int64_t n = xv.dim(0), oh = win.out_h(xv.dim(1)), ow = win.out_w(xv.dim(2));
  BL_CHECK(oh >= 1 && ow >= 1, "Conv2d: input ", xv.str(), " is smaller than the window");
  int64_t oc = wv.dim(0), kk = win.kernel_h * win.kernel_w, cg = wv.dim(3);
  int64_t m = n * oh * ow;
  ag::Var y;
  bool stride1 = groups == 1 && win.stride_h == 1 && win.stride_w == 1 && win.dilation_h == 1 &&
                 win.dilation_w == 1 && win.pad_h < win.kernel_h && win.pad_w < win.kernel_w;
  if (stride1 && direct_fits(xv, wv)) {
    y = conv2d_direct(x, weight, win);
  } else if (stride1) {
    y = conv2d_stride1(x, weight, win);
  } else {
    ag::Var cols = extract_patches(x, win, 0.0f);  // [M, KK, C]
    if (groups == 1) {
      y = ag::matmul(ag::reshape(cols, {m, kk * cg}), ag::reshape(weight, {oc, kk * cg}), false, true);
    } else {
      ag::Var cg4 = ag::reshape(cols, {m, kk, groups, cg});
      ag::Var cgb = ag::reshape(ag::permute(cg4, {2, 0, 1, 3}), {groups, m, kk * cg});
      ag::Var wg = ag::reshape(weight, {groups, oc / groups, kk * cg});
      ag::Var yg = ag::bmm(cgb, wg, false, true);  // [G, M, OC/G]
      y = ag::reshape(ag::permute(yg, {1, 0, 2}), {m, oc});
    }
  }
  if (bias.defined()) y = ag::add(y, bias);
  return ag::reshape(y, {n, oh, ow, oc});
}

// ---- Conv2d / Conv1d ----

namespace {

void check_conv_layer(const char* layer, int64_t in, int64_t out, const Conv2dOptions& opt) {
  BL_CHECK(in > 0 && out > 0 && opt.kernel > 0, layer, ": channels and kernel must be > 0");
  BL_CHECK(opt.groups >= 1 && in % opt.groups == 0 && out % opt.groups == 0, layer, ": groups=",
           opt.groups, " must divide in_channels=", in, " and out_channels=", out);
}

// The bound b of the U(-b, b) initialization of weight and bias: 1 / sqrt(fan_in).
float init_bound(int64_t fan_in) { return bl::div(1.0f, bl::sqrt(static_cast<float>(fan_in))); }

}  // namespace

Conv2d::Conv2d(int64_t in, int64_t out, Conv2dOptions opt, InitStream& init)
    : in_channels(in), out_channels(out), options(opt) {
  check_conv_layer("Conv2d", in, out, opt);
  int64_t cg = in / opt.groups;
  float bound = init_bound(cg * opt.kernel * opt.kernel);
  weight = register_parameter("weight", init::uniform({out, opt.kernel, opt.kernel, cg},
                                                      bl::neg(bound), bound, init.seed, init.take()));
  if (opt.bias)
    bias = register_parameter("bias", init::uniform({out}, bl::neg(bound), bound, init.seed, init.take()));
}

ag::Var Conv2d::forward(const ag::Var& x) {
  Window2d win{options.kernel, options.kernel, options.stride, options.stride,
               options.padding, options.padding, options.dilation, options.dilation};
  return conv2d(x, weight, bias, win, options.groups);
}

Conv1d::Conv1d(int64_t in, int64_t out, Conv2dOptions opt, InitStream& init)
    : in_channels(in), out_channels(out), options(opt) {
  check_conv_layer("Conv1d", in, out, opt);
  int64_t cg = in / opt.groups;
  float bound = init_bound(cg * opt.kernel);
  weight = register_parameter("weight", init::uniform({out, 1, opt.kernel, cg}, bl::neg(bound), bound,
                                                      init.seed, init.take()));
  if (opt.bias)
    bias = register_parameter("bias", init::uniform({out}, bl::neg(bound), bound, init.seed, init.take()));
}

ag::Var Conv1d::forward(const ag::Var& x) {
  BL_CHECK(x.value().ndim() == 3, "Conv1d: input must be [N, L, C], got ", x.value().str());
  const Conv2dOptions& o = options;
  Window2d win{1, o.kernel, 1, o.stride, 0, o.padding, 1, o.dilation};
  ag::Var y = conv2d(ag::reshape(x, {x.dim(0), 1, x.dim(1), x.dim(2)}), weight, bias, win, o.groups);
  return ag::reshape(y, {y.dim(0), y.dim(2), y.dim(3)});
}

// ---- pooling ----

namespace {

// Non-overlapping windows (stride = kernel, no padding, sizes divisible): the windows are a
// reshape + permute of the input, [N * H/k * W/k, k * k, C] in (kh, kw) order like
// extract_patches, and the gradient flows back through the inverse permute (no scatter-add).
bool tiles_exactly(const ag::Var& x, int64_t kernel, int64_t stride, int64_t padding) {
  return x.value().ndim() == 4 && stride == kernel && padding == 0 && x.dim(1) % kernel == 0 &&
         x.dim(2) % kernel == 0;
}

ag::Var tile_windows(const ag::Var& x, int64_t k) {
  int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  ag::Var v = ag::reshape(x, {n, h / k, k, w / k, k, c});
  v = ag::permute(v, {0, 1, 3, 2, 4, 5});
  return ag::reshape(v, {n * (h / k) * (w / k), k * k, c});
}

TileMaxShape tile_shape(const Tensor& x, int64_t k) { return {x.dim(0), x.dim(1), x.dim(2), x.dim(3), k}; }

// Max pooling over k x k tiles as one tape node (kernels/tile_max.h): the same bits as the
// maximum over the tile_windows axis with the gradient at the first maximum (bl::argmax), without
// the window copy, the strided reduction and the gather of the gradient.
ag::Var max_pool_tiles(const ag::Var& x, int64_t k) {
  Tensor xv = x.value().contiguous();
  TileMaxShape s = tile_shape(xv, k);
  Tensor y = Tensor::empty({s.n, s.out_h(), s.out_w(), s.c}, DType::f32, xv.device());
  Tensor arg = Tensor::empty(y.shape(), DType::i32, xv.device());
  dispatch::tile_max(xv.device(), static_cast<const float*>(xv.raw_data()), s, static_cast<float*>(y.raw_data()),
                     static_cast<int32_t*>(arg.raw_data()));
  return ag::record("max_pool_tiles", y, {x}, [arg, s](const Tensor& g) {
    Tensor gc = g.contiguous();
    Tensor dx = Tensor::empty({s.n, s.h, s.w, s.c}, DType::f32, gc.device());
    dispatch::tile_max_backward(gc.device(), static_cast<const float*>(gc.raw_data()),
                                static_cast<const int32_t*>(arg.raw_data()), s, static_cast<float*>(dx.raw_data()));
    return std::vector<Tensor>{dx};
  });
}

}  // namespace

MaxPool2d::MaxPool2d(int64_t k, int64_t s, int64_t p) : kernel(k), stride(s == 0 ? k : s), padding(p) {
  BL_CHECK(k >= 1 && stride >= 1 && p >= 0 && 2 * p <= k, "MaxPool2d: bad kernel ", k, " / stride ",
           s, " / padding ", p);
}

ag::Var MaxPool2d::forward(const ag::Var& x) {
  Window2d win{kernel, kernel, stride, stride, padding, padding, 1, 1};
  if (tiles_exactly(x, kernel, stride, padding) && x.value().dtype() == DType::f32 && kernel <= 256)
    return max_pool_tiles(x, kernel);
  ag::Var cols = extract_patches(x, win, -std::numeric_limits<float>::infinity());
  ag::Var y = ag::amax(cols, 1);
  return ag::reshape(y, {x.dim(0), win.out_h(x.dim(1)), win.out_w(x.dim(2)), x.dim(3)});
}

AvgPool2d::AvgPool2d(int64_t k, int64_t s, int64_t p) : kernel(k), stride(s == 0 ? k : s), padding(p) {
  BL_CHECK(k >= 1 && stride >= 1 && p >= 0 && 2 * p <= k, "AvgPool2d: bad kernel ", k, " / stride ",
           s, " / padding ", p);
}

ag::Var AvgPool2d::forward(const ag::Var& x) {
  Window2d win{kernel, kernel, stride, stride, padding, padding, 1, 1};
  ag::Var cols = tiles_exactly(x, kernel, stride, padding) ? tile_windows(x, kernel)
                                                            : extract_patches(x, win, 0.0f);
  ag::Var y = ag::mean(cols, {1});
  return ag::reshape(y, {x.dim(0), win.out_h(x.dim(1)), win.out_w(x.dim(2)), x.dim(3)});
}

ag::Var GlobalAvgPool2d::forward(const ag::Var& x) {
  BL_CHECK(x.value().ndim() == 4, "GlobalAvgPool2d: input must be [N, H, W, C], got ", x.value().str());
  return ag::mean(x, {1, 2});
}

// ---- residual block ----

ResidualBlock::ResidualBlock(int64_t channels, InitStream& init) {
  Conv2dOptions o;
  o.kernel = 3;
  o.padding = 1;
  o.bias = false;
  conv1 = register_module("conv1", std::make_shared<Conv2d>(channels, channels, o, init));
  bn1 = register_module("bn1", std::make_shared<BatchNorm>(channels));
  conv2 = register_module("conv2", std::make_shared<Conv2d>(channels, channels, o, init));
  bn2 = register_module("bn2", std::make_shared<BatchNorm>(channels));
}

ag::Var ResidualBlock::forward(const ag::Var& x) {
  ag::Var h = ag::relu(bn1->forward(conv1->forward(x)));
  h = bn2->forward(conv2->forward(h));
  return ag::relu(ag::add(x, h));
}

}  // namespace bl::nn
