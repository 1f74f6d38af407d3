// softmax_forms.cuh: every form of the on-chip softmax kernel the lab compares, chosen by a form
// number whose bits say what the form does (see softmax_form_cuda). The library runs two of them
// (src/kernels/cuda/softmax.cu): form 125 for softmax and form 236 for log-softmax; every form
// must give the reference's bits.
//
// Form bits: bit 0: one float4 load in flight per thread (else four); bit 2: the lean form (the
// maximum by one NaN-propagating float max per element, rows with a non-finite maximum NaN at
// once, softmax's division by one binary64 reciprocal per row); bit 3: the lean exp
// (softmax_exp_forms.cuh); bit 4: registers bounded (blocks of at most 256; 8 blocks per
// multiprocessor with one load, 6 with four); bit 5: the lean exp takes x to binary64 by the
// conversion instruction; bit 6: it rounds its result by the conversion instruction; bit 7: the
// division's product is rounded on its bits; bit 8: doubtful exp elements are settled after the
// loop. Without bit 2 the maximum runs on integer keys and NaN is tracked apart.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda/softmax_exp_forms.cuh"
#include "kernels/cuda/exp_quad.cuh"
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/div_by_reciprocal.h"
#include "kernels/softmax.h"

namespace bl::dev {
namespace {

// Elements per thread the on-chip kernel aims at (fewer threads for shorter rows; at most the
// configured block), as in the library. A launch-shape choice: no effect on the bits.
constexpr int64_t kSoftmaxElementsPerThread = 32;
constexpr int64_t kLogSoftmaxElementsPerThread = 16;

// The longest row kept on chip (shared memory: n floats for softmax, 2n for log-softmax).
constexpr int64_t kSoftmaxRowOnChip = 8192;
constexpr int kSoftmaxRowLeaves = static_cast<int>(kSoftmaxRowOnChip / kReduceLeaf);
static_assert(kSoftmaxRowOnChip % kReduceLeaf == 0, "whole leaves");

// Order key of a non-NaN float: a signed integer that orders as the floats do, -0 below +0 (as
// bl::max ranks them). float_of_max_key inverts it.
__device__ __forceinline__ int32_t max_key_of(float v) {
  const int32_t b = static_cast<int32_t>(bits_of(v));
  return b ^ ((b >> 31) & 0x7FFFFFFF);
}
__device__ __forceinline__ float float_of_max_key(int32_t k) {
  return float_of(static_cast<uint32_t>(k ^ ((k >> 31) & 0x7FFFFFFF)));
}
// Running maximum of a row part: *key over the non-NaN values (a NaN's key is harmless, since
// *magnitude, the largest |bits|, says NaN > 0x7F800000 and the result is then NaN).
__device__ __forceinline__ void key_max(float v, int32_t* key, uint32_t* magnitude) {
  const int32_t k = max_key_of(v);
  *key = *key > k ? *key : k;
  const uint32_t a = bits_of(v) & 0x7FFFFFFFu;
  *magnitude = *magnitude > a ? *magnitude : a;
}

// The row maximum of the lean form: one instruction per element on sm_80 and later (PTX
// max.NaN.f32: NaN when either operand is NaN, else the larger value; exact). Between +0 and -0
// either may come out: a zero maximum is settled afterwards. Elsewhere bl::max.
__device__ __forceinline__ float lean_max(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(__HIP_DEVICE_COMPILE__)
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#else
  return max(a, b);
#endif
}

// One block per row (grid-stride over rows), any block size that is a multiple of 32. `vec`: n is
// a multiple of 4 and x, y are 16-byte aligned, so rows move as float4. y may alias x: a row is
// read completely before any of it is written. LOADS float4 loads are issued per thread before
// their values are used (more memory in flight per thread, more registers). FAST: the lean form
// (see the file comment). LEAN_EXP (with FAST): e_i by exp_quad_nonpositive (softmax_exp.cuh),
// bit 0: x reaches binary64 by the conversion instruction (else on its bits), bit 1: the result is
// rounded by the conversion instruction (else on its bits), bit 2: the lean exp at all (0: exp_quad),
// bit 3 (with bit 2): settling of doubtful elements deferred past the loop.
// DIV_BITS (with FAST): the division's product is rounded on its bits (div_by_reciprocal_fast_bits).
template <int LOADS, bool FAST, int LEAN_EXP, bool DIV_BITS>
__device__ __forceinline__ void softmax_row_on_chip_body(const float* x, int64_t rows, int64_t n, float* y,
                                                         bool log_form, bool vec) {
  extern __shared__ float4 row_smem[];
  __shared__ float group_max[32];
  __shared__ float leaf_value[kSoftmaxRowLeaves];
  __shared__ float row_m, row_s;
  __shared__ double row_r;
  float* xs = reinterpret_cast<float*>(row_smem);
  float* es = log_form ? xs + n : xs;  // softmax keeps e_i in place of x_i
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int lane = tid & 31, group = tid >> 5, groups = threads >> 5;
  const int ni = static_cast<int>(n);  // n <= kSoftmaxRowOnChip: row indices fit an int
  const int n4 = vec ? ni / 4 : 0;
  const int leaves = static_cast<int>(reduce_leaf_count(n));
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    // 1. Read the row; the maximum in any order (bl::max is associative and commutative).
    // The maximum on integer keys (max_key_of): one integer max per element; NaN is tracked
    // apart (the largest magnitude bits), and the result is bl::max's over the row.
    int32_t key = max_key_of(StepMax::init());
    uint32_t magnitude = 0;
    float lean_m = float_of(0xFF800000u);  // FAST: -inf
    for (int q0 = tid; q0 < n4; q0 += LOADS * threads) {
      float4 v[LOADS];
#pragma unroll
      for (int k = 0; k < LOADS; ++k) {
        const int q = q0 + k * threads;
        if (q < n4) v[k] = reinterpret_cast<const float4*>(xr)[q];
      }
#pragma unroll
      for (int k = 0; k < LOADS; ++k) {
        const int q = q0 + k * threads;
        if (q < n4) {
          reinterpret_cast<float4*>(xs)[q] = v[k];
          if (FAST) {
            lean_m = lean_max(lean_max(lean_m, v[k].x), lean_max(v[k].y, lean_max(v[k].z, v[k].w)));
          } else {
            key_max(v[k].x, &key, &magnitude);
            key_max(v[k].y, &key, &magnitude);
            key_max(v[k].z, &key, &magnitude);
            key_max(v[k].w, &key, &magnitude);
          }
        }
      }
    }
    for (int i = 4 * n4 + tid; i < ni; i += threads) {
      const float v = xr[i];
      xs[i] = v;
      if (FAST)
        lean_m = lean_max(lean_m, v);
      else
        key_max(v, &key, &magnitude);
    }
    float m = FAST ? lean_m : magnitude > 0x7F800000u ? canonical_nan() : float_of_max_key(key);
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
      const float other = __shfl_xor_sync(0xFFFFFFFFu, m, s, 32);
      m = FAST ? lean_max(m, other) : max(m, other);
    }
    if (lane == 0) group_max[group] = m;
    __syncthreads();
    if (tid == 0) {
      float mm = group_max[0];
      for (int g = 1; g < groups; ++g) mm = FAST ? lean_max(mm, group_max[g]) : max(mm, group_max[g]);
      row_m = mm;
    }
    __syncthreads();
    m = row_m;
    if (FAST) {
      // A row whose maximum is NaN (it holds a NaN) or +-inf is NaN everywhere (x - m is NaN for
      // some element, so s is NaN). Past this point no x_i is NaN and every x_i - m is <= 0.
      if (!is_finite(m)) {
        for (int i = tid; i < ni; i += threads) yr[i] = canonical_nan();
        __syncthreads();  // the next row reuses the shared memory
        continue;
      }
      // A zero maximum: bl::max gives +0 when the row holds +0, else -0 (x - m differs in sign
      // for x = -0, which log-softmax can show). Rare; one scan of the row on chip.
      if (m == 0.0f) {
        bool plus_zero = false;
        for (int i = tid; i < ni; i += threads) plus_zero = plus_zero || bits_of(xs[i]) == 0u;
        m = __syncthreads_or(plus_zero) ? 0.0f : float_of(0x80000000u);
      }
    }
    // 2. e_i = exp(x_i - m), each once.
    constexpr bool kIn = (LEAN_EXP & 1) != 0, kOut = (LEAN_EXP & 2) != 0;
    if ((LEAN_EXP & 8) != 0) {
      // Settling deferred: a float4 with an element in doubt is left as x in shared memory and
      // its bit set in `deferred` (a thread has at most n4 / 32 <= 64 float4s of a row); such
      // float4s (rare) are computed whole afterwards. The loop has no branch into the settling
      // code, which keeps it short.
      uint64_t deferred = 0;
      int k = 0;
      for (int q = tid; q < n4; q += threads, ++k) {
        const float4 v = reinterpret_cast<const float4*>(xs)[q];
        const float4 d = make_float4(sub(v.x, m), sub(v.y, m), sub(v.z, m), sub(v.w, m));
        bool hard;
        const float4 e = dev::exp_quad_nonpositive_split<kIn, kOut>(d, &hard);
        if (hard)
          deferred |= uint64_t{1} << k;
        else
          reinterpret_cast<float4*>(es)[q] = e;
      }
      while (deferred != 0) {
        const int j = __ffsll(static_cast<long long>(deferred)) - 1;
        deferred &= deferred - 1;
        const int q = tid + j * threads;
        const float4 v = reinterpret_cast<const float4*>(xs)[q];
        reinterpret_cast<float4*>(es)[q] = dev::exp_quad_nonpositive<kIn, kOut>(
            make_float4(sub(v.x, m), sub(v.y, m), sub(v.z, m), sub(v.w, m)));
      }
    } else {
      for (int q = tid; q < n4; q += threads) {
        const float4 v = reinterpret_cast<const float4*>(xs)[q];
        const float4 d = make_float4(sub(v.x, m), sub(v.y, m), sub(v.z, m), sub(v.w, m));
        // LEAN_EXP (with FAST): every x_i - m is <= 0 and not NaN here.
        reinterpret_cast<float4*>(es)[q] =
            (LEAN_EXP & 4) != 0 ? dev::exp_quad_nonpositive<kIn, kOut>(d) : cuda::exp_quad(d);
      }
    }
    for (int i = 4 * n4 + tid; i < ni; i += threads) es[i] = exp(sub(xs[i], m));
    __syncthreads();
    // 3. The sum schedule: group g sums leaves g, g + groups, ...; thread `lane` is lane `lane`.
    for (int l = group; l < leaves; l += groups) {
      const int start = l * static_cast<int>(kReduceLeaf);
      const int len = ni - start < kReduceLeaf ? ni - start : static_cast<int>(kReduceLeaf);
      float acc = StepExpShift::init();
      for (int i = lane; i < len; i += kReduceLanes) acc = add(acc, es[start + i]);
#pragma unroll
      for (int s = kReduceLanes / 2; s >= 1; s >>= 1)
        acc = add(acc, __shfl_down_sync(0xFFFFFFFFu, acc, s, 32));
      if (lane == 0) leaf_value[l] = acc;
    }
    __syncthreads();
    if (tid == 0) {
      const float s = leaf_tree<StepExpShift>(leaf_value, leaves);
      row_s = log_form ? log(s) : s;
      if (FAST && !log_form) row_r = reciprocal_of(s).r;
    }
    __syncthreads();
    const float s = row_s;
    // 4. Write the row. A row whose denominator is NaN (it holds NaN or +inf, or only -inf) is
    // NaN everywhere; in any other row every e_i is in [0, 1] and s (or log s) is finite, so no
    // output is NaN and the elements need no canonicalizing (same bits as softmax_element and
    // log_softmax_element).
    if (is_nan(s)) {
      for (int i = tid; i < ni; i += threads) yr[i] = canonical_nan();
    } else if (FAST && !log_form) {
      // s in [1, n]: every e_i / s from the row's reciprocal (div_by_reciprocal.h). Only rows
      // whose s is an even integer need the per-element tie rule.
      const double r = row_r;
      if (!is_even_integer(s)) {
        for (int q = tid; q < n4; q += threads) {
          const float4 e = reinterpret_cast<const float4*>(es)[q];
          reinterpret_cast<float4*>(yr)[q] =
              DIV_BITS ? make_float4(div_by_reciprocal_fast_bits(e.x, r), div_by_reciprocal_fast_bits(e.y, r),
                                     div_by_reciprocal_fast_bits(e.z, r), div_by_reciprocal_fast_bits(e.w, r))
                       : make_float4(div_by_reciprocal_fast(e.x, r), div_by_reciprocal_fast(e.y, r),
                                     div_by_reciprocal_fast(e.z, r), div_by_reciprocal_fast(e.w, r));
        }
        for (int i = 4 * n4 + tid; i < ni; i += threads)
          yr[i] = DIV_BITS ? div_by_reciprocal_fast_bits(es[i], r) : div_by_reciprocal_fast(es[i], r);
      } else {
        Reciprocal d;
        d.r = r;
        d.b = s;
        d.even_integer = true;
        for (int i = tid; i < ni; i += threads) yr[i] = div_by_reciprocal(es[i], d);
      }
    } else {
      for (int q = tid; q < n4; q += threads) {
        float4 o;
        if (log_form) {
          const float4 v = reinterpret_cast<const float4*>(xs)[q];
          o = make_float4(sub(sub(v.x, m), s), sub(sub(v.y, m), s), sub(sub(v.z, m), s),
                          sub(sub(v.w, m), s));
        } else {
          const float4 e = reinterpret_cast<const float4*>(es)[q];
          o = make_float4(div(e.x, s), div(e.y, s), div(e.z, s), div(e.w, s));
        }
        reinterpret_cast<float4*>(yr)[q] = o;
      }
      for (int i = 4 * n4 + tid; i < ni; i += threads)
        yr[i] = log_form ? sub(sub(xs[i], m), s) : div(es[i], s);
    }
    __syncthreads();  // the next row reuses the shared memory
  }
}

template <int LOADS, bool FAST, int LEAN_EXP, bool DIV_BITS>
__global__ void softmax_row_on_chip_kernel(const float* x, int64_t rows, int64_t n, float* y,
                                           bool log_form, bool vec) {
  softmax_row_on_chip_body<LOADS, FAST, LEAN_EXP, DIV_BITS>(x, rows, n, y, log_form, vec);
}

// The lean form with the lean exp, at most 256 threads per block and registers limited so that
// MIN_BLOCKS blocks fit on a multiprocessor (more warps resident to hide the row phases' latencies).
template <int LOADS, int MIN_BLOCKS, int LEAN_EXP, bool DIV_BITS>
__global__ void __launch_bounds__(256, MIN_BLOCKS)
    softmax_row_on_chip_bounded_kernel(const float* x, int64_t rows, int64_t n, float* y, bool log_form, bool vec) {
  softmax_row_on_chip_body<LOADS, true, LEAN_EXP, DIV_BITS>(x, rows, n, y, log_form, vec);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <class Kernel>
void launch_row_on_chip(Kernel* kernel, const float* x, int64_t rows, int64_t n, float* y, bool log_form,
                        const LaunchConfig& config) {
  // Threads: the configured block, fewer for short rows (about kSoftmaxElementsPerThread
  // elements per thread): the fixed cost of a row is paid once per warp.
  const int64_t per_thread = log_form ? kLogSoftmaxElementsPerThread : kSoftmaxElementsPerThread;
  const int wanted = static_cast<int>(std::max<int64_t>(32, ((n + per_thread - 1) / per_thread + 31) / 32 * 32));
  const int block = std::min(cuda::fitted_block(kernel, config), wanted);
  const bool vec = n % 4 == 0 && aligned16(x) && aligned16(y);
  const size_t smem = static_cast<size_t>(log_form ? 2 * n : n) * sizeof(float);
  if (smem > 32 * 1024)  // beyond the default 48 KiB with the static shared memory
    BL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(2 * kSoftmaxRowOnChip * sizeof(float))));
  kernel<<<cuda::grid_size(rows, config), block, smem>>>(x, rows, n, y, log_form, vec);
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace

// The forms built, in ascending order of their numbers.
inline constexpr int kSoftmaxForms[] = {1,   2,   4,   5,   12,  13,  28,  29,  44,  45,  61,  108, 109,
                                        125, 140, 141, 157, 236, 237, 253, 268, 364, 365, 381, 492};

// softmax_rows_on_chip_cuda with the kernel of `form` (one of kSoftmaxForms; the file comment says
// what its bits mean). Rows of at most 8192 elements, device pointers, default stream.
inline void softmax_form_cuda(int form, const float* x, int64_t rows, int64_t n, float* y, bool log_form,
                              const LaunchConfig& config) {
  BL_CHECK(rows >= 0 && n >= 0 && n <= kSoftmaxRowOnChip, "softmax_form_cuda: bad shape");
  if (rows == 0 || n == 0) return;
  constexpr int kIn = 1, kOut = 2, kLean = 4, kDefer = 8;  // LEAN_EXP bits
#define BL_SOFTMAX_FORM(v, kernel) \
  case v:                          \
    launch_row_on_chip(kernel, x, rows, n, y, log_form, config); \
    return;
  switch (form) {
    BL_SOFTMAX_FORM(1, (softmax_row_on_chip_kernel<1, false, 0, false>))
    BL_SOFTMAX_FORM(4, (softmax_row_on_chip_kernel<4, true, 0, false>))
    BL_SOFTMAX_FORM(5, (softmax_row_on_chip_kernel<1, true, 0, false>))
    BL_SOFTMAX_FORM(12, (softmax_row_on_chip_kernel<4, true, kLean, false>))
    BL_SOFTMAX_FORM(13, (softmax_row_on_chip_kernel<1, true, kLean, false>))
    BL_SOFTMAX_FORM(28, (softmax_row_on_chip_bounded_kernel<4, 6, kLean, false>))
    BL_SOFTMAX_FORM(29, (softmax_row_on_chip_bounded_kernel<1, 8, kLean, false>))
    BL_SOFTMAX_FORM(44, (softmax_row_on_chip_kernel<4, true, kLean | kIn, false>))
    BL_SOFTMAX_FORM(45, (softmax_row_on_chip_kernel<1, true, kLean | kIn, false>))
    BL_SOFTMAX_FORM(61, (softmax_row_on_chip_bounded_kernel<1, 8, kLean | kIn, false>))
    BL_SOFTMAX_FORM(108, (softmax_row_on_chip_kernel<4, true, kLean | kIn | kOut, false>))
    BL_SOFTMAX_FORM(109, (softmax_row_on_chip_kernel<1, true, kLean | kIn | kOut, false>))
    BL_SOFTMAX_FORM(125, (softmax_row_on_chip_bounded_kernel<1, 8, kLean | kIn | kOut, false>))
    BL_SOFTMAX_FORM(140, (softmax_row_on_chip_kernel<4, true, kLean, true>))
    BL_SOFTMAX_FORM(141, (softmax_row_on_chip_kernel<1, true, kLean, true>))
    BL_SOFTMAX_FORM(157, (softmax_row_on_chip_bounded_kernel<1, 8, kLean, true>))
    BL_SOFTMAX_FORM(236, (softmax_row_on_chip_kernel<4, true, kLean | kIn | kOut, true>))
    BL_SOFTMAX_FORM(237, (softmax_row_on_chip_kernel<1, true, kLean | kIn | kOut, true>))
    BL_SOFTMAX_FORM(253, (softmax_row_on_chip_bounded_kernel<1, 8, kLean | kIn | kOut, true>))
    BL_SOFTMAX_FORM(268, (softmax_row_on_chip_kernel<4, true, kLean | kDefer, false>))
    BL_SOFTMAX_FORM(364, (softmax_row_on_chip_kernel<4, true, kLean | kIn | kOut | kDefer, false>))
    BL_SOFTMAX_FORM(365, (softmax_row_on_chip_kernel<1, true, kLean | kIn | kOut | kDefer, false>))
    BL_SOFTMAX_FORM(381, (softmax_row_on_chip_bounded_kernel<1, 8, kLean | kIn | kOut | kDefer, false>))
    BL_SOFTMAX_FORM(492, (softmax_row_on_chip_kernel<4, true, kLean | kIn | kOut | kDefer, true>))
    BL_SOFTMAX_FORM(2, (softmax_row_on_chip_kernel<4, false, 0, false>))
    default:
      BL_CHECK(false, "softmax_form_cuda: no form ", form);
  }
#undef BL_SOFTMAX_FORM
}

}  // namespace bl::dev
