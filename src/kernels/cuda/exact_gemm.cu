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
//
// Where the GPU has int8 tensor cores (CUDA, not HIP) and K <= kResidueMaxK, the exact dot runs
// instead as products of residues (the Chinese remainder theorem): every integer X is taken modulo
// each of R pairwise coprime moduli m_i <= 256 (centred residues, so each fits an int8; the lines
// kernel writes them directly, the integers themselves are never stored), the R
// residue products sum_k (X mod m_i)(Y mod m_i) run as one batched int8 x int8 -> int32 cuBLASLt
// product (exact: |sum| < 2^31 for K <= kResidueMaxK), and each output's T is rebuilt from its R
// residues (Garner's mixed radix, then the symmetric range) and rounded once. R is the fewest
// moduli whose product exceeds 2 K (2^28)^2, so T is the only integer of its residues in that
// range: the same T, hence the same bits, as the plain kernel (kExactGemmResidues forces this path
// where it applies; the conformance test runs both).
#include <algorithm>

#include "core/allocator.h"
#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/exact_gemm.h"
#include "kernels/launch.h"

#if !defined(__HIP_PLATFORM_AMD__)
#include <cublasLt.h>
#include <dlfcn.h>

#include <mutex>
#include <type_traits>

#define BL_STRINGIFY_TEXT(x) #x
#define BL_STRINGIFY_VALUE(x) BL_STRINGIFY_TEXT(x)
#endif

namespace bl {
namespace {

constexpr int kLineThreads = 128;
constexpr int kTileK = 16;
constexpr int kFlushTiles = 4;  // 4 x 16 = 64 products per int64 partial

// Entry k of line `line` of one batch entry: row `line` of op(A) (is_a) or column `line` of op(B).
__device__ float line_entry(const float* xb, int64_t ld, bool trans, bool is_a, int64_t line, int64_t k) {
  return is_a ? matmul_load_a(xb, ld, trans, line, k) : matmul_load_b(xb, ld, trans, k, line);
}

// The line's exponent (step 1 of the definition) and whether it holds a non-finite entry, by the
// kLineThreads threads of the block (integer max and or: exact in any order). Thread 0 records
// both; every thread gets the exponent.
__device__ int line_scan(const float* xb, int64_t ld, bool trans, bool is_a, int64_t line, int64_t k_total,
                         int* exponent, uint8_t* special) {
  __shared__ int s_exp[kLineThreads];
  __shared__ int s_flags[kLineThreads];  // bit 0: a finite non-zero entry seen, bit 1: non-finite
  int e = 0, flags = 0;
  for (int64_t k = threadIdx.x; k < k_total; k += kLineThreads) {
    const float v = line_entry(xb, ld, trans, is_a, line, k);
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
  if (threadIdx.x == 0) {
    *exponent = s_exp[0];
    *special = (s_flags[0] & 2) ? 1 : 0;
  }
  return s_exp[0];
}

// Line `line` of batch entry `bi` as 28-bit integers (k contiguous).
__global__ void exact_lines_kernel(const float* x, int64_t ld, bool trans, bool is_a, int64_t stride,
                                   int64_t lines, int64_t k_total, int32_t* values, int* exponent,
                                   uint8_t* special) {
  const int64_t line = blockIdx.x, bi = blockIdx.y;
  const float* xb = x + bi * stride;
  const int row_exp =
      line_scan(xb, ld, trans, is_a, line, k_total, exponent + bi * lines + line, special + bi * lines + line);
  int32_t* out = values + (bi * lines + line) * k_total;
  for (int64_t k = threadIdx.x; k < k_total; k += kLineThreads)
    out[k] = exact_gemm_integer(line_entry(xb, ld, trans, is_a, line, k), row_exp);
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

#if !defined(__HIP_PLATFORM_AMD__)
// ---- The residue path (int8 tensor cores through cuBLASLt) ----

// Pairwise coprime moduli <= 256: residues centred in [-128, 127] fit an int8. Their product grows
// about 7.9 bits a modulus; 10 cover K up to kResidueMaxK. A function, not an array, so that
// kernels unrolled over r divide by constants.
constexpr int kMaxResidues = 12;
__host__ __device__ constexpr int residue_modulus(int r) {
  constexpr int m[kMaxResidues] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217};
  return m[r];
}
// |residue product| <= 128 * 128 = 2^14, so an int32 sum of K of them stays below 2^31.
constexpr int64_t kResidueMaxK = (int64_t(1) << 17) - 1;
constexpr int64_t kResiduePad = 16;  // rows, columns and k padded with zeros for the int8 layouts
constexpr size_t kResidueOutputBytes = size_t(1) << 30;  // int32 residue outputs held at once

using u128 = unsigned __int128;

// The fewest moduli whose product exceeds 2 K (2^28 - 1)^2 >= 2 max|T|.
int residue_count(int64_t K) {
  const u128 max_abs = u128(uint64_t(K)) * u128(uint64_t((int64_t(1) << kExactGemmBits) - 1)) *
                       u128(uint64_t((int64_t(1) << kExactGemmBits) - 1));
  u128 prod = 1;
  for (int r = 0; r < kMaxResidues; ++r) {
    prod *= u128(residue_modulus(r));
    if (prod > 2 * max_abs) return r + 1;
  }
  return 0;
}

// Garner's constants: inverse[i][j] = m_i^-1 mod m_j (i < j).
struct ResidueInverses {
  int inverse[kMaxResidues][kMaxResidues];
};

ResidueInverses make_residue_inverses() {
  ResidueInverses b{};
  for (int i = 0; i < kMaxResidues; ++i)
    for (int j = i + 1; j < kMaxResidues; ++j) {
      const int mj = residue_modulus(j), mi = residue_modulus(i) % mj;
      for (int x = 1; x < mj; ++x)
        if (mi * x % mj == 1) b.inverse[i][j] = x;
      BL_CHECK(b.inverse[i][j] != 0, "exact_matmul: moduli ", residue_modulus(i), " and ", mj, " are not coprime");
    }
  return b;
}

// Line `line` of batch entry `bi` straight to its R centred residues (the integers of
// exact_lines_kernel, never stored): out[r][bi][line][k] over lines_padded x k_padded per entry,
// zero in the padding.
template <int R>
__global__ void exact_line_residues_kernel(const float* x, int64_t ld, bool trans, bool is_a, int64_t stride,
                                           int64_t batch, int64_t lines, int64_t k_total, int64_t lines_padded,
                                           int64_t k_padded, int8_t* out, int* exponent, uint8_t* special) {
  const int64_t line = blockIdx.x, bi = blockIdx.y;
  const int64_t per_residue = batch * lines_padded * k_padded;
  int8_t* dst = out + (bi * lines_padded + line) * k_padded;
  if (line >= lines) {  // a padding line: zeros
    for (int64_t k = threadIdx.x; k < k_padded; k += kLineThreads)
#pragma unroll
      for (int r = 0; r < R; ++r) dst[r * per_residue + k] = 0;
    return;
  }
  const float* xb = x + bi * stride;
  const int row_exp =
      line_scan(xb, ld, trans, is_a, line, k_total, exponent + bi * lines + line, special + bi * lines + line);
  for (int64_t k = threadIdx.x; k < k_padded; k += kLineThreads) {
    const int32_t v = k < k_total ? exact_gemm_integer(line_entry(xb, ld, trans, is_a, line, k), row_exp) : 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int m = residue_modulus(r);
      int t = v % m;  // the sign of v
      if (t > (m - 1) / 2) t -= m;
      if (t < -(m / 2)) t += m;
      dst[r * per_residue + k] = int8_t(t);
    }
  }
}

// Each output of columns [n0, n0 + width): T rebuilt from its residue sums, rounded once.
// sums[((r * batch + bi) * rows_padded + m) * ld + j] holds sum_k (X mod m_r)(Y mod m_r) for column n0 + j.
template <int R>
__global__ void exact_rebuild_kernel(MatmulArgs args, const float* a, const float* b, float* c, const int32_t* sums,
                                     int64_t rows_padded, int64_t ld, int64_t n0, int64_t width,
                                     ResidueInverses inv, const int* row_exp, const uint8_t* row_special,
                                     const int* col_exp, const uint8_t* col_special) {
  const int64_t M = args.m, B = args.batch, total = B * M * width;
  u128 prod = 1;
#pragma unroll
  for (int r = 0; r < R; ++r) prod *= u128(residue_modulus(r));
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = idx % width, m = (idx / width) % M, bi = idx / (width * M), n = n0 + j;
    float out;
    if (row_special[bi * M + m] || col_special[bi * args.n + n]) {
      out = exact_matmul_reference_element(a + bi * args.stride_a, args.lda, args.trans_a, b + bi * args.stride_b,
                                           args.ldb, args.trans_b, args.k, m, n);
    } else {
      int v[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int mr = residue_modulus(r);
        int t = sums[((int64_t(r) * B + bi) * rows_padded + m) * ld + j] % mr;
        if (t < 0) t += mr;
#pragma unroll
        for (int i = 0; i < r; ++i) {  // mixed-radix digit r (Garner)
          t = (t - v[i]) * inv.inverse[i][r] % mr;
          if (t < 0) t += mr;
        }
        v[r] = t;
      }
      u128 x = u128(v[R - 1]);
#pragma unroll
      for (int r = R - 2; r >= 0; --r) x = x * u128(residue_modulus(r)) + u128(v[r]);
      // T is the representative of x in (-prod/2, prod/2).
      const u128 t = x > prod / 2 ? ~(prod - x) + 1 : x;  // -(prod - x) in two's complement
      ExactSum sum;
      sum.lo = uint64_t(t);
      sum.hi = int64_t(uint64_t(t >> 64));
      out = exact_sum_round(sum, row_exp[bi * M + m] + col_exp[bi * args.n + n] - 2 * kExactGemmBits);
    }
    c[bi * args.stride_c + m * args.ldc + n] = out;
  }
}

// cuBLASLt, opened on first use (dlopen): linking it would map its half a gigabyte into every
// process at start, also those that never run an exact product. Without it the plain kernel runs
// (the same bits).
// The functions used, each a member named without its cublasLt prefix and typed by cuBLASLt's own
// declaration.
#define BL_CUBLASLT_FUNCTIONS(X) \
  X(Create) \
  X(MatmulPreferenceDestroy) \
  X(MatrixLayoutDestroy) \
  X(MatmulDescDestroy) \
  X(MatmulDescCreate) \
  X(MatmulDescSetAttribute) \
  X(MatrixLayoutCreate) \
  X(MatrixLayoutSetAttribute) \
  X(MatmulPreferenceCreate) \
  X(MatmulPreferenceSetAttribute) \
  X(MatmulAlgoGetHeuristic) \
  X(Matmul)

struct CublasLt {
#define BL_CUBLASLT_MEMBER(name) decltype(&cublasLt##name) name = nullptr;
  BL_CUBLASLT_FUNCTIONS(BL_CUBLASLT_MEMBER)
#undef BL_CUBLASLT_MEMBER
  bool ok = false;
};

CublasLt load_cublaslt() {
  CublasLt lib;
  void* handle = nullptr;
  const char* names[] = {"libcublasLt.so." BL_STRINGIFY_VALUE(CUBLAS_VER_MAJOR), "libcublasLt.so",
#ifdef BITLEARN_CUBLASLT_DIR
                          BITLEARN_CUBLASLT_DIR "/libcublasLt.so." BL_STRINGIFY_VALUE(CUBLAS_VER_MAJOR),
#endif
  };
  for (const char* name : names)
    if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  if (handle == nullptr) return lib;
  bool found = true;
#define BL_CUBLASLT_LOAD(name)                                                        \
  lib.name = reinterpret_cast<decltype(lib.name)>(dlsym(handle, "cublasLt" #name)); \
  found = found && lib.name != nullptr;
  BL_CUBLASLT_FUNCTIONS(BL_CUBLASLT_LOAD)
#undef BL_CUBLASLT_LOAD
  lib.ok = found;
  return lib;
}

const CublasLt& cublaslt() {
  static const CublasLt lib = load_cublaslt();
  return lib;
}

#define BL_CUBLASLT_CHECK(call)                                                                    \
  do {                                                                                             \
    const cublasStatus_t st_ = (call);                                                             \
    BL_CHECK(st_ == CUBLAS_STATUS_SUCCESS, "exact_matmul: ", #call, " failed (cuBLAS status ", int(st_), ")"); \
  } while (0)

// One cuBLASLt handle per device, made on first use.
cublasLtHandle_t residue_handle(int device) {
  static std::mutex mutex;
  static cublasLtHandle_t handles[64] = {};
  BL_CHECK(device >= 0 && device < 64, "exact_matmul: device index ", device, " outside 0..63");
  std::lock_guard<std::mutex> lock(mutex);
  if (handles[device] == nullptr) BL_CUBLASLT_CHECK(cublaslt().Create(&handles[device]));
  return handles[device];
}

// The residue products of one column block as one batched int8 product: for each of the count x
// batch entries, sums (rows_padded x width, row-major) = rows (rows_padded x Kp) times the columns
// [n0, n0 + width) of cols (cols_padded x Kp) transposed. In cuBLASLt's column-major terms:
// D (width x rows_padded) = op_T(cols block) op_N(rows), both k-contiguous (the "TN" layout int8
// tensor cores take). Returns false when cuBLASLt offers no algorithm (the caller falls back).
bool residue_products(cublasLtHandle_t handle, const int8_t* rows, const int8_t* cols, int32_t* sums,
                      int64_t entries, int64_t rows_padded, int64_t cols_padded, int64_t k_padded, int64_t n0,
                      int64_t width, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  bool ok = false;
  auto cleanup = [&] {
    if (pref) cublaslt().MatmulPreferenceDestroy(pref);
    if (lc) cublaslt().MatrixLayoutDestroy(lc);
    if (lb) cublaslt().MatrixLayoutDestroy(lb);
    if (la) cublaslt().MatrixLayoutDestroy(la);
    if (op) cublaslt().MatmulDescDestroy(op);
  };
  try {
    BL_CUBLASLT_CHECK(cublaslt().MatmulDescCreate(&op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
    const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
    BL_CUBLASLT_CHECK(cublaslt().MatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
    BL_CUBLASLT_CHECK(cublaslt().MatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof(no_trans)));
    BL_CUBLASLT_CHECK(cublaslt().MatrixLayoutCreate(&la, CUDA_R_8I, uint64_t(k_padded), uint64_t(width), k_padded));
    BL_CUBLASLT_CHECK(cublaslt().MatrixLayoutCreate(&lb, CUDA_R_8I, uint64_t(k_padded), uint64_t(rows_padded), k_padded));
    BL_CUBLASLT_CHECK(cublaslt().MatrixLayoutCreate(&lc, CUDA_R_32I, uint64_t(width), uint64_t(rows_padded), width));
    const int32_t count = int32_t(entries);
    const int64_t stride_a = cols_padded * k_padded, stride_b = rows_padded * k_padded,
                  stride_c = rows_padded * width;
    for (auto& [layout, stride] : {std::pair{la, stride_a}, std::pair{lb, stride_b}, std::pair{lc, stride_c}}) {
      BL_CUBLASLT_CHECK(cublaslt().MatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                         sizeof(count)));
      BL_CUBLASLT_CHECK(cublaslt().MatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                         &stride, sizeof(stride)));
    }
    BL_CUBLASLT_CHECK(cublaslt().MatmulPreferenceCreate(&pref));
    BL_CUBLASLT_CHECK(cublaslt().MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &workspace_bytes, sizeof(workspace_bytes)));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (cublaslt().MatmulAlgoGetHeuristic(handle, op, la, lb, lc, lc, pref, 1, &result, &found) ==
            CUBLAS_STATUS_SUCCESS &&
        found > 0) {
      const int32_t one = 1, zero = 0;
      BL_CUBLASLT_CHECK(cublaslt().Matmul(handle, op, &one, cols + n0 * k_padded, la, rows, lb, &zero, sums, lc, sums,
                                       lc, &result.algo, workspace, workspace_bytes, stream));
      ok = true;
    }
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
  return ok;
}

constexpr size_t kResidueWorkspaceBytes = size_t(32) << 20;

// The whole product through R residues: the lines of op(A) and op(B) straight to residues, then
// per column block the batched residue products and the rebuild. Returns false (nothing written)
// where cuBLASLt offers no int8 algorithm.
template <int R>
bool exact_residues_product(const MatmulArgs& args, const float* a, const float* b, float* c, int* row_exp,
                            uint8_t* row_special, int* col_exp, uint8_t* col_special, int device, cudaStream_t s) {
  const int64_t B = args.batch, M = args.m, N = args.n, K = args.k;
  auto pad = [](int64_t x) { return (std::max<int64_t>(x, 1) + kResiduePad - 1) / kResiduePad * kResiduePad; };
  const int64_t Mp = pad(M), Np = pad(N), Kp = pad(K);
  Scratch row_res(size_t(R) * size_t(B * Mp * Kp), device), col_res(size_t(R) * size_t(B * Np * Kp), device);
  // Column blocks of `width` so that the int32 sums stay within kResidueOutputBytes.
  const int64_t per_column = int64_t(R) * B * Mp * int64_t(sizeof(int32_t));
  int64_t width = std::max<int64_t>(kResiduePad, int64_t(kResidueOutputBytes) / per_column / kResiduePad * kResiduePad);
  width = std::min(width, Np);
  Scratch sums(size_t(per_column) * size_t(width), device), workspace(kResidueWorkspaceBytes, device);
  auto* ra = static_cast<int8_t*>(row_res.ptr);
  auto* rb = static_cast<int8_t*>(col_res.ptr);
  exact_line_residues_kernel<R><<<dim3(unsigned(Mp), unsigned(B)), kLineThreads, 0, s>>>(
      a, args.lda, args.trans_a, true, args.stride_a, B, M, K, Mp, Kp, ra, row_exp, row_special);
  exact_line_residues_kernel<R><<<dim3(unsigned(Np), unsigned(B)), kLineThreads, 0, s>>>(
      b, args.ldb, args.trans_b, false, args.stride_b, B, N, K, Np, Kp, rb, col_exp, col_special);
  BL_CUDA_CHECK(cudaGetLastError());
  static const ResidueInverses inverses = make_residue_inverses();
  const cublasLtHandle_t handle = residue_handle(device);
  auto* sp = static_cast<int32_t*>(sums.ptr);
  for (int64_t n0 = 0; n0 < N; n0 += width) {
    const int64_t w = std::min(width, Np - n0);
    if (!residue_products(handle, ra, rb, sp, int64_t(R) * B, Mp, Np, Kp, n0, w, workspace.ptr,
                          kResidueWorkspaceBytes, s)) {
      BL_CHECK(n0 == 0, "exact_matmul: cuBLASLt refused a later column block of the residue products");
      return false;
    }
    const int64_t live = std::min(w, N - n0);
    const unsigned grid = unsigned(std::min<int64_t>((B * M * live + 255) / 256, 65535));
    exact_rebuild_kernel<R><<<grid, 256, 0, s>>>(args, a, b, c, sp, Mp, w, n0, live, inverses, row_exp, row_special,
                                                 col_exp, col_special);
    BL_CUDA_CHECK(cudaGetLastError());
  }
  // The scratch goes back to the pool at scope exit; the default stream orders later work after
  // it, another stream must finish first.
  if (s != nullptr) BL_CUDA_CHECK(cudaStreamSynchronize(s));
  return true;
}

// The residue path with the basis K needs (one modulus fewer when short_basis: the sabotage arm).
bool exact_dot_residues(const MatmulArgs& args, const float* a, const float* b, float* c, int* row_exp,
                        uint8_t* row_special, int* col_exp, uint8_t* col_special, int device, cudaStream_t s,
                        bool short_basis) {
  const int count = residue_count(args.k) - (short_basis ? 1 : 0);
  switch (count) {
#define BL_RESIDUE_CASE(R) \
  case R:                  \
    return exact_residues_product<R>(args, a, b, c, row_exp, row_special, col_exp, col_special, device, s);
    BL_RESIDUE_CASE(7)
    BL_RESIDUE_CASE(8)
    BL_RESIDUE_CASE(9)
    BL_RESIDUE_CASE(10)
#undef BL_RESIDUE_CASE
    default:
      BL_CHECK(false, "exact_matmul: no residue basis of ", count, " moduli (K = ", args.k, ")");
  }
  return false;
}
#endif  // !__HIP_PLATFORM_AMD__

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
  BL_CHECK(M < (int64_t(1) << 31) && N < (int64_t(1) << 31), "exact_matmul: a side of ", std::max(M, N),
           " exceeds the CUDA grid");
  Scratch meta(size_t(B * (M + N)) * (sizeof(int) + 1), dev);
  int* row_exp = static_cast<int*>(meta.ptr);
  int* col_exp = row_exp + B * M;
  uint8_t* row_special = reinterpret_cast<uint8_t*>(col_exp + B * N);
  uint8_t* col_special = row_special + B * M;
#if !defined(__HIP_PLATFORM_AMD__)
  // The residue path where it applies (kExactGemmResidues), or by default on products large enough
  // to repay its extra launches; the plain tiles otherwise. Every choice gives the same bits.
  const bool plain_tile = config.variant == kExactGemmTile32 || config.variant == kExactGemmTile64;
  const bool large = M >= 32 && N >= 32 && double(M) * double(N) * double(K) >= double(int64_t(1) << 26);
  const bool forced = config.variant == kExactGemmResidues || config.variant == kExactGemmResiduesShort;
  if (K >= 1 && K <= kResidueMaxK && !plain_tile && (forced || large) && cublaslt().ok &&
      exact_dot_residues(args, a, b, c, row_exp, row_special, col_exp, col_special, dev, s,
                         config.variant == kExactGemmResiduesShort))
    return;
#endif
  const size_t kk = size_t(std::max<int64_t>(K, 1));
  Scratch rows(size_t(B * M) * kk * sizeof(int32_t), dev), cols(size_t(B * N) * kk * sizeof(int32_t), dev);
  auto* rv = static_cast<int32_t*>(rows.ptr);
  auto* cv = static_cast<int32_t*>(cols.ptr);
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
