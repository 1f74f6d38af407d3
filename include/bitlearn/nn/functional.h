// functional.h: the patch gather behind convolution and pooling (channels-last).
#pragma once

#include <cstdint>

#include "bitlearn/autograd.h"

namespace bl::nn {

// Window geometry of a 2-d convolution or pooling.
struct Window2d {
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  int64_t out_h(int64_t h) const;
  int64_t out_w(int64_t w) const;
};

// Patches of x [N, H, W, C]: [N * H_out * W_out, kernel_h * kernel_w, C], window positions in
// (kh, kw) order; positions in the padding take pad_value. Gathered with ag::embedding, so the
// gradient is an ordered scatter-add (bl::embedding_backward).
ag::Var extract_patches(const ag::Var& x, const Window2d& window, float pad_value);

// Convolution of x [N, H, W, C_in] with weight [C_out, kH, kW, C_in / groups] (+ bias [C_out] if
// defined) -> [N, H_out, W_out, C_out].
ag::Var conv2d(const ag::Var& x, const ag::Var& weight, const ag::Var& bias, const Window2d& window,
               int64_t groups);

}  // namespace bl::nn
