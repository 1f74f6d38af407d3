// CUDA selective scan (kernels/selective_scan.h): one thread per (batch row, head, channel) chain,
// grid-stride over the chains; each thread runs its chain's steps in ascending order with the state
// in the output state buffer, reading the decay factors from args.decay or computing them itself.
// Every value is the one scan_step computes on the CPU, so the bits equal the reference under any
// launch shape.
#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/selective_scan.h"

namespace bl {
namespace {

__global__ void selective_scan_kernel(ScanArgs a) {
  const int64_t B = a.shape.batch, T = a.shape.steps, H = a.shape.heads, P = a.shape.head_dim;
  const int64_t N = a.shape.state, G = a.shape.groups;
  const int64_t chains = B * H * P;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < chains;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t p = c % P, h = (c / P) % H, b = c / (P * H);
    const int64_t g = h / (H / G);
    float* st = a.state + c * N;  // c == (b * H + h) * P + p
    const float* D_h = a.D != nullptr ? a.D + h : nullptr;
    const int64_t len = a.lengths[b];
    for (int64_t t = 0; t < T; ++t) {
      float* y = a.y + ((b * T + t) * H + h) * P + p;
      if (t >= len) {
        *y = 0.0f;
        continue;
      }
      const int64_t row = ((b * T + t) * G + g) * N;
      const float* decay = a.decay != nullptr ? a.decay + ((b * T + t) * H + h) * N : nullptr;
      *y = canonicalize(scan_step(st, decay, a.A + h * N, a.dt[(b * T + t) * H + h], a.x[((b * T + t) * H + h) * P + p],
                                  a.Bm + row, a.Cm + row, D_h, N));
    }
    for (int64_t n = 0; n < N; ++n) st[n] = canonicalize(st[n]);
  }
}

}  // namespace

void selective_scan_cuda(const ScanArgs& a, const LaunchConfig& config) {
  check_scan_args(a);
  const int64_t chains = a.shape.batch * a.shape.heads * a.shape.head_dim;
  if (chains == 0) return;
  const int block = cuda::fitted_block(selective_scan_kernel, config);
  selective_scan_kernel<<<cuda::grid_size((chains + block - 1) / block, config), block>>>(a);
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace bl
