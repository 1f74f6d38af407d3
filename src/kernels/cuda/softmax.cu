// CUDA softmax / log-softmax.
// Rows of up to kSoftmaxRowOnChip elements: one block per row reads the row once into shared
// memory, takes the maximum, computes every e_i = exp(x_i - m) once, sums the e_i on the contract's
// sum schedule (each 32-thread group sums one leaf: thread j is lane j, adding its elements in
// ascending order, then the lanes fold by halving through width-32 shuffles; the leaf values meet
// in leaf_tree) and writes the row once: two memory passes. The kernel spends few instructions per
// element, same bits as the reference: the maximum by one NaN-propagating float max per element
// (the sign of a zero maximum is settled by one scan of the row); rows whose maximum is not finite
// are NaN at once; e_i comes from an exp that leaves out the NaN and overflow handling x_i - m <= 0
// does not need (softmax_exp.cuh); softmax divides by s through one binary64 reciprocal per row
// (div_by_reciprocal.h).
// Rows up to 57344 (the loss rows of a 50257-word vocabulary): the same on chip with one block of up
// to 1024 threads per row and up to 224 KiB of shared memory (softmax_long_row_kernel).
// Longer rows: row maximum and denominator through reduce_totals, then one pass. Softmax computes
// each e_i = exp(x_i - m) once: the denominator pass stores e_i in y, and the last pass divides y
// in place (softmax_element's bits: canonicalize(div(e_i, s))).
// Other forms of the on-chip kernel (other maxima, exps, divisions, loads in flight) live in the
// kernel lab, dev/cuda/softmax_forms.cu.
#include "kernels/cuda/exp_quad.cuh"
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/cuda/softmax_exp.cuh"
#include "kernels/div_by_reciprocal.h"
#include "kernels/softmax.h"

namespace bl {
namespace {

// Elements per thread the on-chip kernel aims at (fewer threads for shorter rows; at most the
// configured block): rows of 4096 get blocks of 128 (softmax) and 256 (log-softmax). A
// launch-shape choice: no effect on the bits.
constexpr int64_t kSoftmaxElementsPerThread = 32;
constexpr int64_t kLogSoftmaxElementsPerThread = 16;

// The longest row kept on chip (shared memory: n floats for softmax, 2n for log-softmax).
constexpr int64_t kSoftmaxRowOnChip = 8192;
constexpr int kSoftmaxRowLeaves = static_cast<int>(kSoftmaxRowOnChip / kReduceLeaf);
static_assert(kSoftmaxRowOnChip % kReduceLeaf == 0, "whole leaves");

// The row maximum: one instruction per element on sm_80 and later (PTX max.NaN.f32: NaN when
// either operand is NaN, else the larger value; exact). Between +0 and -0 either may come out: a
// zero maximum is settled afterwards. Elsewhere bl::max.
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
// their values are used (more memory in flight per thread, more registers). DIV_BITS: softmax's
// e_i * r is rounded to binary32 on its bits (div_by_reciprocal_fast_bits) rather than by the
// conversion (div_by_reciprocal_fast); the same value either way.
template <int LOADS, bool DIV_BITS>
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
    float lean_m = float_of(0xFF800000u);  // -inf
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
          lean_m = lean_max(lean_max(lean_m, v[k].x), lean_max(v[k].y, lean_max(v[k].z, v[k].w)));
        }
      }
    }
    for (int i = 4 * n4 + tid; i < ni; i += threads) {
      const float v = xr[i];
      xs[i] = v;
      lean_m = lean_max(lean_m, v);
    }
    float m = lean_m;
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
      const float other = __shfl_xor_sync(0xFFFFFFFFu, m, s, 32);
      m = lean_max(m, other);
    }
    if (lane == 0) group_max[group] = m;
    __syncthreads();
    if (tid == 0) {
      float mm = group_max[0];
      for (int g = 1; g < groups; ++g) mm = lean_max(mm, group_max[g]);
      row_m = mm;
    }
    __syncthreads();
    m = row_m;
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
    // 2. e_i = exp(x_i - m), each once; every x_i - m is <= 0 and not NaN here.
    for (int q = tid; q < n4; q += threads) {
      const float4 v = reinterpret_cast<const float4*>(xs)[q];
      const float4 d = make_float4(sub(v.x, m), sub(v.y, m), sub(v.z, m), sub(v.w, m));
      reinterpret_cast<float4*>(es)[q] = cuda::exp_quad_nonpositive(d);
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
      if (!log_form) row_r = reciprocal_of(s).r;
    }
    __syncthreads();
    const float s = row_s;
    // 4. Write the row. A row whose denominator is NaN (it holds NaN or +inf, or only -inf) is
    // NaN everywhere; in any other row every e_i is in [0, 1] and s (or log s) is finite, so no
    // output is NaN and the elements need no canonicalizing (same bits as softmax_element and
    // log_softmax_element).
    if (is_nan(s)) {
      for (int i = tid; i < ni; i += threads) yr[i] = canonical_nan();
    } else if (!log_form) {
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
        const float4 v = reinterpret_cast<const float4*>(xs)[q];
        reinterpret_cast<float4*>(yr)[q] = make_float4(sub(sub(v.x, m), s), sub(sub(v.y, m), s),
                                                       sub(sub(v.z, m), s), sub(sub(v.w, m), s));
      }
      for (int i = 4 * n4 + tid; i < ni; i += threads) yr[i] = sub(sub(xs[i], m), s);
    }
    __syncthreads();  // the next row reuses the shared memory
  }
}

// The softmax kernel: one float4 load in flight per thread, at most 256 threads per block, and
// registers limited so that 8 blocks fit on a multiprocessor (more warps resident to hide the
// latencies of the row phases).
__global__ void __launch_bounds__(256, 8)
    softmax_row_on_chip_kernel(const float* x, int64_t rows, int64_t n, float* y, bool log_form, bool vec) {
  softmax_row_on_chip_body<1, false>(x, rows, n, y, log_form, vec);
}

// The log-softmax kernel: four float4 loads in flight per thread, any block size. DIV_BITS has no
// effect here: this kernel only runs log-softmax, which divides nothing.
__global__ void log_softmax_row_on_chip_kernel(const float* x, int64_t rows, int64_t n, float* y, bool log_form,
                                               bool vec) {
  softmax_row_on_chip_body<4, true>(x, rows, n, y, log_form, vec);
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

// Rows longer than kSoftmaxRowOnChip, up to kSoftmaxLongRowOnChip (the loss rows of a 50257-word
// vocabulary): one block per row holds the row in (up to 224 KiB of) shared memory, so the row is
// read once and written once, with the bits of the on-chip kernel above: the same maximum (and
// the same settling of a zero maximum and of a non-finite one), e_i = exp(x_i - m) once per
// element, the sum schedule (group g sums leaves g, g + groups, ...; lane j adds elements j,
// j + 32, ... of its leaf in ascending order, lanes fold by halving; leaf_tree over the leaves),
// then e_i / s by the row's binary64 reciprocal (softmax) or x_i - m - log s (log-softmax). Softmax
// keeps e_i in place of x_i; log-softmax needs x_i again, so it computes e_i inside the sum instead
// of storing it. Rows need no alignment: their 16-byte-aligned middle moves as float4, the ends as
// single floats. Any block of whole warps; one block per multiprocessor (the shared memory).
constexpr int64_t kSoftmaxLongRowOnChip = 14 * kReduceLeaf;  // 57344 floats: 224 KiB
constexpr int kSoftmaxLongRowLeaves = static_cast<int>(kSoftmaxLongRowOnChip / kReduceLeaf);

// Calls f(i, v) for every element of the row xr[0..n) (v = xr[i]), reading the 16-byte-aligned
// middle of the row as float4 with up to four loads in flight per thread.
template <class F>
__device__ __forceinline__ void for_row_elements(const float* xr, int n, F f) {
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int head = static_cast<int>(((16u - (reinterpret_cast<uintptr_t>(xr) & 15u)) & 15u) / 4u);
  const int lead = head < n ? head : n;
  const int n4 = (n - lead) / 4;
  const float4* x4 = reinterpret_cast<const float4*>(xr + lead);
  if (tid < lead) f(tid, xr[tid]);
  for (int q0 = tid; q0 < n4; q0 += 4 * threads) {
    float4 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int q = q0 + k * threads;
      if (q < n4) v[k] = x4[q];
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int q = q0 + k * threads;
      if (q < n4) {
        const int i = lead + 4 * q;
        f(i, v[k].x);
        f(i + 1, v[k].y);
        f(i + 2, v[k].z);
        f(i + 3, v[k].w);
      }
    }
  }
  for (int i = lead + 4 * n4 + tid; i < n; i += threads) f(i, xr[i]);
}

// Writes value(i) to yr[i] for the whole row, the aligned middle as float4.
template <class V>
__device__ __forceinline__ void write_row(float* yr, int n, V value) {
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int head = static_cast<int>(((16u - (reinterpret_cast<uintptr_t>(yr) & 15u)) & 15u) / 4u);
  const int lead = head < n ? head : n;
  const int n4 = (n - lead) / 4;
  float4* y4 = reinterpret_cast<float4*>(yr + lead);
  if (tid < lead) yr[tid] = value(tid);
  for (int q = tid; q < n4; q += threads) {
    const int i = lead + 4 * q;
    y4[q] = make_float4(value(i), value(i + 1), value(i + 2), value(i + 3));
  }
  for (int i = lead + 4 * n4 + tid; i < n; i += threads) yr[i] = value(i);
}

template <bool LOG_FORM>
__global__ void __launch_bounds__(1024) softmax_long_row_kernel(const float* x, int64_t rows, int64_t n, float* y) {
  extern __shared__ float4 long_row_smem[];
  __shared__ float group_max[32];
  __shared__ float leaf_value[kSoftmaxLongRowLeaves];
  __shared__ float row_m, row_s;
  __shared__ double row_r;
  float* xs = reinterpret_cast<float*>(long_row_smem);
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int lane = tid & 31, group = tid >> 5, groups = threads >> 5;
  const int ni = static_cast<int>(n);
  const int leaves = static_cast<int>(reduce_leaf_count(n));
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    // 1. Read the row; the maximum in any order.
    float lean_m = float_of(0xFF800000u);  // -inf
    for_row_elements(xr, ni, [&](int i, float v) {
      xs[i] = v;
      lean_m = lean_max(lean_m, v);
    });
    float m = lean_m;
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) m = lean_max(m, __shfl_xor_sync(0xFFFFFFFFu, m, s, 32));
    if (lane == 0) group_max[group] = m;
    __syncthreads();
    if (tid == 0) {
      float mm = group_max[0];
      for (int g = 1; g < groups; ++g) mm = lean_max(mm, group_max[g]);
      row_m = mm;
    }
    __syncthreads();
    m = row_m;
    if (!is_finite(m)) {  // NaN or +-inf maximum: NaN everywhere (as the on-chip kernel)
      write_row(yr, ni, [](int) { return canonical_nan(); });
      __syncthreads();
      continue;
    }
    if (m == 0.0f) {  // the sign of a zero maximum, as bl::max gives it
      bool plus_zero = false;
      for (int i = tid; i < ni; i += threads) plus_zero = plus_zero || bits_of(xs[i]) == 0u;
      m = __syncthreads_or(plus_zero) ? 0.0f : float_of(0x80000000u);
    }
    // 2. e_i (softmax: stored in place of x_i by all threads first).
    if (!LOG_FORM) {
      for (int i = tid; i < ni; i += threads) xs[i] = exp(sub(xs[i], m));
      __syncthreads();
    }
    // 3. The sum schedule.
    for (int l = group; l < leaves; l += groups) {
      const int start = l * static_cast<int>(kReduceLeaf);
      const int len = ni - start < kReduceLeaf ? ni - start : static_cast<int>(kReduceLeaf);
      float acc = StepExpShift::init();
      for (int i = lane; i < len; i += kReduceLanes)
        acc = add(acc, LOG_FORM ? exp(sub(xs[start + i], m)) : xs[start + i]);
#pragma unroll
      for (int s = kReduceLanes / 2; s >= 1; s >>= 1) acc = add(acc, __shfl_down_sync(0xFFFFFFFFu, acc, s, 32));
      if (lane == 0) leaf_value[l] = acc;
    }
    __syncthreads();
    if (tid == 0) {
      const float s = leaf_tree<StepExpShift>(leaf_value, leaves);
      row_s = LOG_FORM ? log(s) : s;
      if (!LOG_FORM) row_r = reciprocal_of(s).r;
    }
    __syncthreads();
    const float s = row_s;
    // 4. Write the row.
    if (is_nan(s)) {
      write_row(yr, ni, [](int) { return canonical_nan(); });
    } else if (LOG_FORM) {
      write_row(yr, ni, [&](int i) { return canonicalize(sub(sub(xs[i], m), s)); });
    } else if (!is_even_integer(s)) {
      const double rr = row_r;
      write_row(yr, ni, [&](int i) { return div_by_reciprocal_fast(xs[i], rr); });
    } else {
      Reciprocal d;
      d.r = row_r;
      d.b = s;
      d.even_integer = true;
      write_row(yr, ni, [&](int i) { return div_by_reciprocal(xs[i], d); });
    }
    __syncthreads();  // the next row reuses the shared memory
  }
}

// Threads of the long-row kernel: four times the configured block (one block per multiprocessor
// needs many warps to keep memory busy), at most 1024. A launch-shape choice: same bits.
template <bool LOG_FORM>
void launch_long_row(const float* x, int64_t rows, int64_t n, float* y, const LaunchConfig& config) {
  auto* kernel = softmax_long_row_kernel<LOG_FORM>;
  const int block = std::min(1024, 4 * cuda::fitted_block(kernel, config));
  const size_t smem = static_cast<size_t>(n) * sizeof(float);
  BL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(kSoftmaxLongRowOnChip * sizeof(float))));
  kernel<<<cuda::grid_size(rows, config), block, smem>>>(x, rows, n, y);
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace

void softmax_rows_on_chip_cuda(const float* x, int64_t rows, int64_t n, float* y, bool log_form,
                               const LaunchConfig& config) {
  const char* name = log_form ? "log_softmax" : "softmax";
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  BL_CHECK(n <= kSoftmaxRowOnChip, name, ": rows on chip hold at most ", kSoftmaxRowOnChip,
           " elements, got n = ", n);
  if (rows == 0 || n == 0) return;
  BL_CHECK(x != nullptr && y != nullptr, name, ": input or output pointer is null");
  // config.block and config.grid_cap shape the launch; config.variant is not used.
  if (log_form)
    launch_row_on_chip(log_softmax_row_on_chip_kernel, x, rows, n, y, true, config);
  else
    launch_row_on_chip(softmax_row_on_chip_kernel, x, rows, n, y, false, config);
}

namespace {

struct FinishLog {
  BL_HD float operator()(float v) const { return log(v); }
};

// The softmax denominator's element, kept in y: e = exp(x - m).
struct MapExpShift {
  BL_HD static float map(float x, float m) { return exp(sub(x, m)); }
};

// y_i = e_i / s of its row, in place (long rows: blocks over rows, threads over the row).
__global__ void softmax_divide_rows_kernel(float* y, int64_t rows, int64_t n, const float* s) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float sr = s[r];
    float* yr = y + r * n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = canonicalize(div(yr[i], sr));
  }
}

// y_i = e_i / s of its row, in place (short rows: a flat grid-stride loop).
__global__ void softmax_divide_flat_kernel(float* y, int64_t rows, int64_t n, const float* s) {
  const int64_t total = rows * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[g] = canonicalize(div(y[g], s[g / n]));
}

// Long rows: blocks stride over rows, threads over the row (no per-element index division).
__global__ void softmax_apply_rows_kernel(const float* x, int64_t rows, int64_t n, const float* m, const float* s,
                                          bool log_form, float* y) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float mr = m[r], sr = s[r];
    const float* xr = x + r * n;
    float* yr = y + r * n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      yr[i] = log_form ? log_softmax_element(xr[i], mr, sr) : softmax_element(xr[i], mr, sr);
  }
}

// Short rows: a flat grid-stride loop over all elements.
__global__ void softmax_apply_flat_kernel(const float* x, int64_t rows, int64_t n, const float* m, const float* s,
                                          bool log_form, float* y) {
  const int64_t total = rows * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = g / n;
    y[g] = log_form ? log_softmax_element(x[g], m[r], s[r]) : softmax_element(x[g], m[r], s[r]);
  }
}

}  // namespace

void softmax_cuda(const float* x, int64_t rows, int64_t n, float* y, bool log_form, const LaunchConfig& config) {
  const char* name = log_form ? "log_softmax" : "softmax";
  BL_CHECK(rows >= 0 && n >= 0, name, ": shape (rows, n) must be non-negative, got (", rows, ", ", n, ")");
  if (rows == 0 || n == 0) return;
  BL_CHECK(x != nullptr && y != nullptr, name, ": input or output pointer is null");
  if (n <= kSoftmaxRowOnChip) {  // shape-only choice; same bits
    softmax_rows_on_chip_cuda(x, rows, n, y, log_form, config);
    return;
  }
  if (n <= kSoftmaxLongRowOnChip && config.variant != kSoftmaxPassesVariant) {  // shape-only choice; same bits
    if (log_form)
      launch_long_row<true>(x, rows, n, y, config);
    else
      launch_long_row<false>(x, rows, n, y, config);
    return;
  }
  const ReduceShape shape{rows, n, 1};
  cuda::DeviceScratch<float> m(rows), s(rows);
  cuda::reduce_totals<StepMax>(x, shape, nullptr, m.ptr, config);
  const bool rows_kernel = n >= 256 && n <= 65536;  // shape-only choice; both kernels give the same bits
  if (!log_form) {
    cuda::reduce_totals<StepAdd, MapExpShift>(x, shape, m.ptr, s.ptr, config, y);
    if (rows_kernel) {
      const int block = cuda::fitted_block(softmax_divide_rows_kernel, config);
      softmax_divide_rows_kernel<<<cuda::grid_size(rows, config), block>>>(y, rows, n, s.ptr);
    } else {
      const int block = cuda::fitted_block(softmax_divide_flat_kernel, config);
      softmax_divide_flat_kernel<<<cuda::grid_size((rows * n + block - 1) / block, config), block>>>(y, rows, n,
                                                                                                     s.ptr);
    }
    BL_CUDA_CHECK(cudaGetLastError());
    cuda::finish_sync();
    return;
  }
  cuda::reduce_totals<StepExpShift>(x, shape, m.ptr, s.ptr, config);
  cuda::map_totals(s.ptr, rows, FinishLog(), config);
  if (rows_kernel) {
    const int block = cuda::fitted_block(softmax_apply_rows_kernel, config);
    softmax_apply_rows_kernel<<<cuda::grid_size(rows, config), block>>>(x, rows, n, m.ptr, s.ptr, log_form, y);
  } else {
    const int block = cuda::fitted_block(softmax_apply_flat_kernel, config);
    softmax_apply_flat_kernel<<<cuda::grid_size((rows * n + block - 1) / block, config), block>>>(x, rows, n, m.ptr,
                                                                                                s.ptr, log_form, y);
  }
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace bl
