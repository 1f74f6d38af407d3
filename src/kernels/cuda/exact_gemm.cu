// exact_gemm.cu: the CUDA exact-integer GEMM (profile bitlearn.exact_gemm.v1, kernels/exact_gemm.h).
//
// Two kernels per product. exact_lines_kernel turns every row of op(A) and column of op(B) into
// 28-bit integers (k contiguous) with the line's exponent and non-finite flag: one block per line,
// the exponent a max over the block (integer, exact). exact_dot_kernel then computes tiles of
// outputs: integer tiles of 16 k staged in shared memory, products of two 28-bit integers summed in
// int64 over 64 k (below 2^62), each such partial added into a 128-bit sum, and one rounding at the
// store. Every sum is exact, so the tile shape (LaunchConfig::variant: kExactGemmTile32 or kExactGemmTile64),
// the grid and the device cannot change a bit. Outputs whose line holds a non-finite entry take the
// reference element (the special-value rule), computed by the thread that owns them.
#include <algorithm>

#include "core/allocator.h"
#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/exact_gemm.h"
#include "kernels/launch.h"

namespace bl {
namespace {

constexpr int kLineThreads = 128;
constexpr int kTileK = 16;
constexpr int kFlushTiles = 4;  // 4 x 16 = 64 products per int64 partial

// Line `line` of batch entry `bi`: row `line` of op(A) (is_a) or column `line` of op(B).
__global__ void exact_lines_kernel(const float* x, int64_t ld, bool trans, bool is_a, int64_t stride,
                                   int64_t lines, int64_t k_total, int32_t* values, int* exponent,
                                   uint8_t* special) {
  const int64_t line = blockIdx.x, bi = blockIdx.y;
  const float* xb = x + bi * stride;
  __shared__ int s_exp[kLineThreads];
  __shared__ int s_flags[kLineThreads];  // bit 0: a finite non-zero entry seen, bit 1: non-finite
  int e = 0, flags = 0;
  for (int64_t k = threadIdx.x; k < k_total; k += kLineThreads) {
    const float v = is_a ? matmul_load_a(xb, ld, trans, line, k) : matmul_load_b(xb, ld, trans, k, line);
    if (!is_finite(v)) {
      flags |= 2;
    } else if ((bits_of(v) & 0x7FFFFFFFu) != 0) {
      const int ev = exact_gemm_exponent(v);
      if (!(flags & 1) || ev > e) e = ev;
      flags |= 1;
    }
  }
  s_exp[threadIdx.x] = e;
  s_flags[threadIdx.x] = flags;
  __syncthreads();
  for (int half = kLineThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const int other_flags = s_flags[threadIdx.x + half], other_exp = s_exp[threadIdx.x + half];
      if ((other_flags & 1) && (!(s_flags[threadIdx.x] & 1) || other_exp > s_exp[threadIdx.x]))
        s_exp[threadIdx.x] = other_exp;
      s_flags[threadIdx.x] |= other_flags;
    }
    __syncthreads();
  }
  const int row_exp = s_exp[0];
  int32_t* out = values + (bi * lines + line) * k_total;
  for (int64_t k = threadIdx.x; k < k_total; k += kLineThreads) {
    const float v = is_a ? matmul_load_a(xb, ld, trans, line, k) : matmul_load_b(xb, ld, trans, k, line);
    out[k] = exact_gemm_integer(v, row_exp);
  }
  if (threadIdx.x == 0) {
    exponent[bi * lines + line] = row_exp;
    special[bi * lines + line] = (s_flags[0] & 2) ? 1 : 0;
  }
}

// A (16 * TM) x (16 * TM) tile of outputs per block of 16 x 16 threads; thread (ty, tx) owns rows
// ty + 16 i and columns tx + 16 j.
template <int TM>
__global__ void __launch_bounds__(256) exact_dot_kernel(MatmulArgs args, const float* a, const float* b, float* c,
                                                        const int32_t* rows, const int* row_exp,
                                                        const uint8_t* row_special, const int32_t* cols,
                                                        const int* col_exp, const uint8_t* col_special) {
  constexpr int kTile = 16 * TM;
  __shared__ int32_t As[kTileK][kTile + 1];
  __shared__ int32_t Bs[kTileK][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int64_t bi = blockIdx.z;
  const int64_t m0 = int64_t(blockIdx.y) * kTile, n0 = int64_t(blockIdx.x) * kTile;
  const int64_t M = args.m, N = args.n, K = args.k;
  const int32_t* rb = rows + bi * M * K;
  const int32_t* cbv = cols + bi * N * K;
  ExactSum sum[TM][TM];
  int64_t acc[TM][TM];
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TM; ++j) acc[i][j] = 0;
  int tiles_in_chunk = 0;
  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    for (int idx = tid; idx < kTile * kTileK; idx += 256) {
      const int r = idx / kTileK, kk = idx % kTileK;
      const int64_t k = k0 + kk;
      As[kk][r] = (m0 + r < M && k < K) ? rb[(m0 + r) * K + k] : 0;
      Bs[kk][r] = (n0 + r < N && k < K) ? cbv[(n0 + r) * K + k] : 0;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      int64_t av[TM], bv[TM];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        av[i] = As[kk][ty + 16 * i];
        bv[i] = Bs[kk][tx + 16 * i];
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TM; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
    if (++tiles_in_chunk == kFlushTiles || k0 + kTileK >= K) {
      tiles_in_chunk = 0;
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TM; ++j) {
          exact_sum_add(sum[i][j], acc[i][j]);
          acc[i][j] = 0;
        }
    }
  }
  const float* ab = a + bi * args.stride_a;
  const float* bb = b + bi * args.stride_b;
  float* cb = c + bi * args.stride_c;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t m = m0 + ty + 16 * i;
#pragma unroll
    for (int j = 0; j < TM; ++j) {
      const int64_t n = n0 + tx + 16 * j;
      if (m >= M || n >= N) continue;
      float out;
      if (row_special[bi * M + m] || col_special[bi * N + n])
        out = exact_matmul_reference_element(ab, args.lda, args.trans_a, bb, args.ldb, args.trans_b, K, m, n);
      else
        out = exact_sum_round(sum[i][j], row_exp[bi * M + m] + col_exp[bi * N + n] - 2 * kExactGemmBits);
      cb[m * args.ldc + n] = out;
    }
  }
}

// Scratch from the caching allocator, given back at scope exit.
struct Scratch {
  void* ptr = nullptr;
  int device = 0;
  Scratch(size_t bytes, int dev) : device(dev) { ptr = bytes ? cuda_allocate(bytes, dev, "exact_matmul") : nullptr; }
  ~Scratch() {
    if (ptr) cuda_free(ptr, device);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

}  // namespace

void exact_matmul_cuda(const MatmulArgs& args, const float* a, const float* b, float* c, const LaunchConfig& config,
                       void* stream) {
  matmul_check_args("exact_matmul", args, a, b, c);
  BL_CHECK(args.k <= kExactGemmMaxK, "exact_matmul: K = ", args.k, " exceeds the profile's limit of ",
           kExactGemmMaxK);
  const int64_t B = args.batch, M = args.m, N = args.n, K = args.k;
  if (B == 0 || M == 0 || N == 0) return;
  BL_CHECK(B < 65536, "exact_matmul: a batch of ", B, " exceeds the CUDA grid (65535)");
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  int dev = 0;
  BL_CUDA_CHECK(cudaGetDevice(&dev));
  const size_t kk = size_t(std::max<int64_t>(K, 1));
  Scratch rows(size_t(B * M) * kk * sizeof(int32_t), dev), cols(size_t(B * N) * kk * sizeof(int32_t), dev);
  Scratch meta(size_t(B * (M + N)) * (sizeof(int) + 1), dev);
  int* row_exp = static_cast<int*>(meta.ptr);
  int* col_exp = row_exp + B * M;
  uint8_t* row_special = reinterpret_cast<uint8_t*>(col_exp + B * N);
  uint8_t* col_special = row_special + B * M;
  auto* rv = static_cast<int32_t*>(rows.ptr);
  auto* cv = static_cast<int32_t*>(cols.ptr);
  BL_CHECK(M < (int64_t(1) << 31) && N < (int64_t(1) << 31), "exact_matmul: a side of ", std::max(M, N),
           " exceeds the CUDA grid");
  exact_lines_kernel<<<dim3(unsigned(M), unsigned(B)), kLineThreads, 0, s>>>(a, args.lda, args.trans_a, true,
                                                                             args.stride_a, M, K, rv, row_exp,
                                                                             row_special);
  exact_lines_kernel<<<dim3(unsigned(N), unsigned(B)), kLineThreads, 0, s>>>(b, args.ldb, args.trans_b, false,
                                                                             args.stride_b, N, K, cv, col_exp,
                                                                             col_special);
  const bool small = config.variant == kExactGemmTile32 ||
                     (config.variant != kExactGemmTile64 && (M <= 32 || N <= 32));
  if (small) {
    dim3 grid(unsigned((N + 31) / 32), unsigned((M + 31) / 32), unsigned(B));
    exact_dot_kernel<2><<<grid, dim3(16, 16), 0, s>>>(args, a, b, c, rv, row_exp, row_special, cv, col_exp,
                                                      col_special);
  } else {
    dim3 grid(unsigned((N + 63) / 64), unsigned((M + 63) / 64), unsigned(B));
    exact_dot_kernel<4><<<grid, dim3(16, 16), 0, s>>>(args, a, b, c, rv, row_exp, row_special, cv, col_exp,
                                                      col_special);
  }
  BL_CUDA_CHECK(cudaGetLastError());
  // The scratch goes back to the pool at scope exit; work on another stream must finish first.
  if (s != nullptr) BL_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace bl
