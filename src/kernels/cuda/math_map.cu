// The CUDA math map: one grid-stride kernel per function, the same BL_HD bodies as the reference.
//
// Each element is computed by exactly the reference expression, so the launch shape (block size,
// grid cap) can only change which thread computes an element, never its bits.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/allocator.h"
#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/exp_quad.cuh"
#include "kernels/launch.h"
#include "kernels/math_map.h"

namespace bl {

namespace {

// The function as a compile-time constant, so each kernel holds one inlined function body.
template <int F>
__device__ __forceinline__ float math_apply_static(float x, float y) {
  return math_apply(static_cast<MathFn>(F), x, y);
}

template <int F>
__global__ void math_map_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                float* __restrict__ out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float yi = y ? y[i] : 0.0f;
    out[i] = canonicalize(math_apply_static<F>(x[i], yi));
  }
}

// Four elements of a unary function; exp has a four-wide form with the same bits (exp_quad.cuh).
template <int F>
__device__ __forceinline__ float4 math_apply_quad(float4 x) {
  if (F == static_cast<int>(MathFn::exp)) return cuda::exp_quad(x);  // canonical already
  return make_float4(canonicalize(math_apply_static<F>(x.x, 0.0f)),
                     canonicalize(math_apply_static<F>(x.y, 0.0f)),
                     canonicalize(math_apply_static<F>(x.z, 0.0f)),
                     canonicalize(math_apply_static<F>(x.w, 0.0f)));
}

// Unary functions on 16-byte aligned arrays: 16-byte loads and stores, four elements per thread
// (element i is still the function of x[i] alone).
template <int F>
__global__ void math_map_quad_kernel(const float4* __restrict__ x, float4* __restrict__ out,
                                     int64_t n4) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride)
    out[i] = math_apply_quad<F>(x[i]);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <int F>
void launch(const float* x, const float* y, float* out, int64_t n, int blocks, int block) {
  if (y == nullptr && n >= 4 && aligned16(x) && aligned16(out)) {
    const int64_t n4 = n / 4, done = 4 * n4;
    const int quad_blocks = static_cast<int>(std::min<int64_t>(blocks, (n4 + block - 1) / block));
    math_map_quad_kernel<F><<<quad_blocks, block>>>(reinterpret_cast<const float4*>(x),
                                                   reinterpret_cast<float4*>(out), n4);
    if (done < n) math_map_kernel<F><<<1, 32>>>(x + done, nullptr, out + done, n - done);
    return;
  }
  math_map_kernel<F><<<blocks, block>>>(x, y, out, n);
}

using Launcher = void (*)(const float*, const float*, float*, int64_t, int, int);

// Indexed by MathFn.
const Launcher kLaunchers[kMathFnCount] = {
    launch<0>, launch<1>, launch<2>,  launch<3>,  launch<4>,  launch<5>,  launch<6>,  launch<7>,
    launch<8>, launch<9>, launch<10>, launch<11>, launch<12>, launch<13>, launch<14>, launch<15>};
static_assert(kMathFnCount == 16, "one launcher per MathFn");

void run(MathFn fn, const float* x, const float* y, float* out, int64_t n,
         const LaunchConfig& config) {
  const int id = static_cast<int>(fn);
  BL_CHECK(id >= 0 && id < kMathFnCount, "math_map_cuda: function id ", id, " is not a MathFn");
  const char* name = math_fn_name(fn);
  BL_CHECK(n >= 0, "math_map_cuda(", name, "): n must be >= 0, got ", n);
  BL_CHECK(config.block >= 32 && config.block <= 1024 && config.block % 32 == 0,
           "math_map_cuda(", name, "): block must be a multiple of 32 in [32, 1024], got ",
           config.block);
  BL_CHECK(config.grid_cap >= 0, "math_map_cuda(", name, "): grid_cap must be >= 0, got ",
           config.grid_cap);
  if (n == 0) return;
  BL_CHECK(x != nullptr && out != nullptr, "math_map_cuda(", name,
           "): device pointers x and out must be non-null with n = ", n);
  if (fn == MathFn::pow)
    BL_CHECK(y != nullptr, "math_map_cuda(pow): pow takes two operands; pass the exponent array");
  else
    BL_CHECK(y == nullptr, "math_map_cuda(", name,
             "): a unary function takes one operand; call the overload without y");
  int64_t blocks = (n + config.block - 1) / config.block;
  const int64_t hw_cap = 65535LL * 1024;  // far below the x-dimension limit, plenty of blocks
  if (blocks > hw_cap) blocks = hw_cap;
  if (config.grid_cap > 0 && blocks > config.grid_cap) blocks = config.grid_cap;
  kLaunchers[id](x, y, out, n, static_cast<int>(blocks), config.block);
  cuda_sync_check(name);
}

}  // namespace

void math_map_cuda(MathFn fn, const float* dev_x, float* dev_out, int64_t n,
                   const LaunchConfig& config) {
  run(fn, dev_x, nullptr, dev_out, n, config);
}

void math_map_cuda(MathFn fn, const float* dev_x, const float* dev_y, float* dev_out, int64_t n,
                   const LaunchConfig& config) {
  run(fn, dev_x, dev_y, dev_out, n, config);
}

}  // namespace bl
