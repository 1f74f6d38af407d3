// selective_scan.h: the selective state-space recurrence of Mamba and Mamba-2, run step by step.
//
// For every batch row b, head h and head channel p, a state s[0..N) (the ssm state) is carried
// across the steps t = 0 .. len_b - 1 in ascending order; with g = h / (H / G) the head's group:
//   u     = dt[b,t,h] * x[b,t,h,p]
//   s_n   = fma(exp(dt[b,t,h] * A[h,n]), s_n, u * B[b,t,g,n])          for n = 0 .. N-1
//   acc   = s_0 * C[b,t,g,0];  acc = fma(s_n, C[b,t,g,n], acc)         for n = 1 .. N-1
//   y     = fma(D[h], x[b,t,h,p], acc)          (acc alone when D is absent)
// Every operation is one contract operation (bl::mul, bl::fma, bl::exp), so the order above is the
// specification. Steps t >= len_b leave the state alone and write y = +0; the state holds the value
// after len_b steps on return. Stored NaNs (in y and the state) are canonical. Mamba runs it with
// one channel per head (P = 1, H = intermediate size, A per channel and state index); Mamba-2 with
// A[h, n] equal to the head's scalar for every n. Nothing depends on the thread count or launch shape:
// the (b, h, p) recurrences are independent and each is a fixed sequence.
#pragma once

#include <cstdint>

#include "contract/arith.h"
#include "contract/math.h"
#include "kernels/launch.h"

namespace bl {

class ThreadPool;

// Sizes and (contiguous, row-major) layouts of a selective scan:
//   x [B, T, H, P], dt [B, T, H], A [H, N], Bm and Cm [B, T, G, N], D [H] (may be null),
//   lengths [B] (each in [0, T]), state [B, H, P, N] (read, then overwritten), y [B, T, H, P].
// The largest state size N the kernels accept.
constexpr int64_t kScanMaxState = 1024;

struct ScanShape {
  int64_t batch = 0, steps = 0, heads = 0, head_dim = 0, state = 0, groups = 1;
};

struct ScanArgs {
  ScanShape shape;
  const float* x = nullptr;
  const float* dt = nullptr;
  const float* A = nullptr;
  const float* Bm = nullptr;
  const float* Cm = nullptr;
  const float* D = nullptr;
  const int64_t* lengths = nullptr;
  float* state = nullptr;
  float* y = nullptr;
  // Optional [B, T, H, N]: the decay factors exp(dt[b,t,h] * A[h,n]) computed beforehand (by the
  // exp and mul Tensor ops, which give these same bits); null: the kernel computes them.
  const float* decay = nullptr;
};

// One recurrence step of one (b, h, p) chain: updates s[0..N) and returns y. The decay factors
// exp(dt * A_h[n]) are read from dA[0..N) when given (computed once for all P channels of a head),
// else computed here. B, C point at the step's group row [N]; D_h is null when there is no skip.
BL_HD float scan_step(float* s, const float* dA, const float* A_h, float dt, float x, const float* B, const float* C,
                      const float* D_h, int64_t N) {
  const float u = mul(dt, x);
  float acc = 0.0f;
  for (int64_t n = 0; n < N; ++n) {
    const float decay = dA != nullptr ? dA[n] : exp(mul(dt, A_h[n]));
    s[n] = fma(decay, s[n], mul(u, B[n]));
    acc = n == 0 ? mul(s[0], C[0]) : fma(s[n], C[n], acc);
  }
  return D_h != nullptr ? fma(*D_h, x, acc) : acc;
}

// Reference (the specification): one chain after another, plain loops.
inline void selective_scan_reference(const ScanArgs& a) {
  const ScanShape& s = a.shape;
  const int64_t B = s.batch, T = s.steps, H = s.heads, P = s.head_dim, N = s.state, G = s.groups;
  const int64_t heads_per_group = H / G;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / heads_per_group;
      for (int64_t p = 0; p < P; ++p) {
        float* st = a.state + ((b * H + h) * P + p) * N;
        for (int64_t t = 0; t < T; ++t) {
          float* y = a.y + ((b * T + t) * H + h) * P + p;
          if (t >= a.lengths[b]) {
            *y = 0.0f;
            continue;
          }
          const float dt = a.dt[(b * T + t) * H + h];
          const int64_t row = ((b * T + t) * G + g) * N;
          *y = canonicalize(scan_step(st, nullptr, a.A + h * N, dt, a.x[((b * T + t) * H + h) * P + p], a.Bm + row, a.Cm + row,
                                      a.D != nullptr ? a.D + h : nullptr, N));
        }
        for (int64_t n = 0; n < N; ++n) st[n] = canonicalize(st[n]);
      }
    }
  }
}

// Checks sizes and pointers; throws bl::Error naming what is wrong.
void check_scan_args(const ScanArgs& a);

// CPU: (b, h) chains spread over the pool; the bits do not depend on the pool's size.
void selective_scan_cpu(const ScanArgs& a, ThreadPool& pool);

// CUDA: device pointers (lengths too); one thread per (b, h, p) chain; returns when done.
void selective_scan_cuda(const ScanArgs& a, const LaunchConfig& config = LaunchConfig());

}  // namespace bl
