// attention_warp_rows.cu: CUDA attention with one 32-lane group ("row group") per query row.
//
// A block takes a tile of consecutive rows that share one (batch, key/value head): row i of the
// group list is query t = i / heads_per_group of head g * heads_per_group + i % heads_per_group.
// The block stages the keys of the union of its rows' key ranges in shared memory, a chunk at a
// time, and every row group reads them from there. Inside a row with allowed keys lo..hi:
//   scores   lane L computes the scores of relative keys i = j - lo with i mod 32 == L (the
//            GEMM-schedule dot of attention_score) and keeps them in the row's shared slots;
//   max      lane maxima combined by shuffles (bl::max is associative and commutative);
//   sum      per softmax leaf of 4096 keys, lane L adds exp(s_i - m) for its i in ascending order:
//            exactly lane L of leaf_reduce. The lanes are folded by shuffles in the schedule's
//            halving order (lane[j] += lane[j + w], w = 16, 8, 4, 2, 1), the leaf values by leaf_tree;
//   p_i      exp(s_i - m) / S (the exponential is the one already computed for the sum);
//   o[d]     lane L owns d = L, L + 32, ... and adds p_i * v_i[d] over the keys in ascending order,
//            a fresh fma chain per GEMM leaf of 256 keys, the leaves folded left to right.
// Every value is the value attention_row computes, so the output has the reference's bits for any
// block size or grid. The 32-lane group is a software width (shuffles are given width 32), never
// the hardware warp width.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/attention_kernels.h"
#include "kernels/cuda/reduce_cuda.cuh"

namespace bl::cuda {
namespace {

constexpr int kGroupLanes = 32;                        // lanes per row group = the sum schedule's lanes
constexpr int kMaxHeadDim = 256;                       // the widest head_dim covered
constexpr int64_t kSharedBudget = 160 * 1024;          // dynamic shared memory per block at most
constexpr unsigned kFullMask = 0xFFFFFFFFu;

static_assert(kReduceLanes == kGroupLanes, "one row group lane per sum-schedule lane");
static_assert(kMaxHeadDim <= kGemmKLeaf, "a score is one GEMM leaf (row_score)");

// How a launch is laid out: rows per block, keys per staged chunk, shared memory slices.
struct WarpRowsShape {
  int groups = 1;          // row groups (rows) per block
  int chunk = 32;          // keys staged per step
  int dim_pad = 1;         // row stride of staged keys (odd in floats or in float4 units: no bank conflicts)
  int64_t score_cap = 1;   // score slots per row
  int64_t leaf_cap = 1;    // softmax leaf slots per row
  int64_t smem_bytes = 0;
  bool reversed_fold = false;  // sabotage arm only
  bool vec_score = false;  // head_dim % 4 == 0: staged rows and q read as float4
  bool vec_k = false;      // every staged key row starts 16-byte aligned and head_dim % 4 == 0
  bool vec_v = false;      // likewise for values
};

__device__ int64_t lesser(int64_t x, int64_t y) { return x < y ? x : y; }
__device__ int64_t greater(int64_t x, int64_t y) { return x > y ? x : y; }

// Copies `rows` rows of `dim` floats (row r at src + r * src_stride) to dst (row stride
// dst_stride), all threads of the block together; four loads are issued before their stores so
// that the global-memory latency overlaps. `vec`: rows are 16-byte aligned and dim % 4 == 0.
__device__ void stage_rows(float* dst, int dst_stride, const float* src, int64_t src_stride, int rows, int dim,
                           bool vec) {
  constexpr int kBatch = 4;
  const int width = vec ? dim / 4 : dim;
  const int total = rows * width;
  const int step = blockDim.x;
  for (int base = threadIdx.x; base < total; base += kBatch * step) {
    float4 x[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int e = base + u * step;
      if (e < total) {
        const int r = e / width, col = e - r * width;
        if (vec) {
          x[u] = *reinterpret_cast<const float4*>(src + r * src_stride + 4 * col);
        } else {
          x[u].x = src[r * src_stride + col];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int e = base + u * step;
      if (e < total) {
        const int r = e / width, col = e - r * width;
        if (vec && dst_stride % 4 == 0) {
          *reinterpret_cast<float4*>(dst + r * dst_stride + 4 * col) = x[u];
        } else if (vec) {
          float* d = dst + r * dst_stride + 4 * col;
          d[0] = x[u].x, d[1] = x[u].y, d[2] = x[u].z, d[3] = x[u].w;
        } else {
          dst[r * dst_stride + col] = x[u].x;
        }
      }
    }
  }
}

// Lane 0 ends with the fold of the 32 lane values: halving (the schedule) or, for the sabotage
// test, doubling strides (a different tree).
__device__ float fold_row_lanes(float acc, bool reversed) {
  if (reversed) {
    for (int w = 1; w < kGroupLanes; w *= 2) acc = add(acc, __shfl_down_sync(kFullMask, acc, w, kGroupLanes));
  } else {
    for (int w = kGroupLanes / 2; w >= 1; w /= 2) acc = add(acc, __shfl_down_sync(kFullMask, acc, w, kGroupLanes));
  }
  return acc;
}

// The score of one key: attention_score for head_dim <= kGemmKLeaf (one GEMM leaf: a single fma
// chain from +0 in ascending d, then the scale). `vec`: both rows 16-byte aligned, dim % 4 == 0.
__device__ float row_score(const float* qs, const float* kr, int dim, float scale, bool vec) {
  float acc = 0.0f;
  if (vec) {
    const float4* q4 = reinterpret_cast<const float4*>(qs);
    const float4* k4 = reinterpret_cast<const float4*>(kr);
#pragma unroll 4
    for (int d4 = 0; d4 < dim / 4; ++d4) {
      const float4 x = q4[d4], y = k4[d4];
      acc = fma(x.x, y.x, acc);
      acc = fma(x.y, y.y, acc);
      acc = fma(x.z, y.z, acc);
      acc = fma(x.w, y.w, acc);
    }
  } else {
#pragma unroll 4
    for (int d = 0; d < dim; ++d) acc = fma(qs[d], kr[d], acc);
  }
  return canonicalize(mul(acc, scale));
}

// Two scores at once (two independent chains, each exactly row_score's), for instruction overlap.
__device__ void row_score_pair(const float* qs, const float* k0, const float* k1, int dim, float scale, bool vec,
                               float* s0, float* s1) {
  float a0 = 0.0f, a1 = 0.0f;
  if (vec) {
    const float4* q4 = reinterpret_cast<const float4*>(qs);
    const float4* x4 = reinterpret_cast<const float4*>(k0);
    const float4* y4 = reinterpret_cast<const float4*>(k1);
#pragma unroll 4
    for (int d4 = 0; d4 < dim / 4; ++d4) {
      const float4 x = q4[d4], y = x4[d4], z = y4[d4];
      a0 = fma(x.x, y.x, a0);
      a1 = fma(x.x, z.x, a1);
      a0 = fma(x.y, y.y, a0);
      a1 = fma(x.y, z.y, a1);
      a0 = fma(x.z, y.z, a0);
      a1 = fma(x.z, z.z, a1);
      a0 = fma(x.w, y.w, a0);
      a1 = fma(x.w, z.w, a1);
    }
  } else {
#pragma unroll 4
    for (int d = 0; d < dim; ++d) {
      const float x = qs[d];
      a0 = fma(x, k0[d], a0);
      a1 = fma(x, k1[d], a1);
    }
  }
  *s0 = canonicalize(mul(a0, scale));
  *s1 = canonicalize(mul(a1, scale));
}

// kSlots: output elements per lane (head_dim <= 32 * kSlots).
template <int kSlots>
__global__ void attention_warp_rows_kernel(AttentionArgs a, const float* q, const float* k, const float* v,
                                           const int64_t* q_pos, const int64_t* kv_len, float* out,
                                           WarpRowsShape sh) {
  extern __shared__ float4 smem4[];  // float4: 16-byte aligned for the vector reads
  __shared__ int64_t row_lo[32], row_hi[32];
  float* smem = reinterpret_cast<float*>(smem4);
  const int dim = static_cast<int>(a.head_dim);
  const int group = threadIdx.x / kGroupLanes, lane = threadIdx.x % kGroupLanes;
  float* staged = smem;
  float* qs = staged + sh.chunk * sh.dim_pad + group * dim;
  float* s = staged + sh.chunk * sh.dim_pad + sh.groups * dim + group * sh.score_cap;
  float* leaves = staged + sh.chunk * sh.dim_pad + sh.groups * (dim + sh.score_cap) + group * sh.leaf_cap;
  const int64_t heads_per_group = a.n_heads / a.n_kv_heads;
  const int64_t rows_per_group = a.q_len * heads_per_group;
  const int64_t tiles_per_group = (rows_per_group + sh.groups - 1) / sh.groups;
  const int64_t tiles = a.batch * a.n_kv_heads * tiles_per_group;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t bg = tile / tiles_per_group;
    const int64_t b = bg / a.n_kv_heads, g = bg % a.n_kv_heads;
    const int64_t row = (tile % tiles_per_group) * sh.groups + group;
    const bool has_row = row < rows_per_group;
    const int64_t t = has_row ? row / heads_per_group : 0;
    const int64_t h = g * heads_per_group + (has_row ? row % heads_per_group : 0);
    int64_t lo = 0, hi = -1;
    if (has_row) attention_key_range(q_pos[b * a.q_len + t], kv_len[b], a.window, &lo, &hi);
    const int64_t n = hi >= lo ? hi - lo + 1 : 0;
    if (n > 0) {
      const float* qr = q + b * a.q_sb + t * a.q_st + h * a.q_sh;
      for (int d = lane; d < dim; d += kGroupLanes) qs[d] = qr[d];
    }
    if (lane == 0) {
      row_lo[group] = n > 0 ? lo : INT64_MAX;
      row_hi[group] = n > 0 ? hi : -1;
    }
    __syncthreads();
    int64_t key_lo = INT64_MAX, key_hi = -1;
    for (int r = 0; r < sh.groups; ++r) {
      key_lo = lesser(key_lo, row_lo[r]);
      key_hi = greater(key_hi, row_hi[r]);
    }
    const float* kb = k + b * a.k_sb + g * a.k_sh;
    const float* vb = v + b * a.v_sb + g * a.v_sh;

    // Scores of this chunk's keys; lane L takes the relative keys i with i mod 32 == L.
    float m = StepMax::init();
    for (int64_t c0 = key_lo; c0 <= key_hi; c0 += sh.chunk) {
      const int len = static_cast<int>(lesser(sh.chunk, key_hi - c0 + 1));
      __syncthreads();
      stage_rows(staged, sh.dim_pad, kb + c0 * a.k_st, a.k_st, len, dim, sh.vec_k);
      __syncthreads();
      const int64_t from = greater(c0, lo), to = lesser(c0 + len - 1, hi);
      if (n > 0 && from <= to) {
        const int64_t i0 = from - lo, last = to - lo;
        int64_t i = i0 + ((lane - static_cast<int>(i0 & 31)) & 31);
        for (; i + kGroupLanes <= last; i += 2 * kGroupLanes) {
          float s0, s1;
          const float* k0 = staged + (lo + i - c0) * sh.dim_pad;
          row_score_pair(qs, k0, k0 + kGroupLanes * sh.dim_pad, dim, a.scale, sh.vec_score, &s0, &s1);
          s[i] = s0;
          s[i + kGroupLanes] = s1;
          m = bl::max(bl::max(m, s0), s1);
        }
        if (i <= last) {
          const float score = row_score(qs, staged + (lo + i - c0) * sh.dim_pad, dim, a.scale, sh.vec_score);
          s[i] = score;
          m = bl::max(m, score);
        }
      }
    }
    for (int w = kGroupLanes / 2; w >= 1; w /= 2) m = bl::max(m, __shfl_xor_sync(kFullMask, m, w, kGroupLanes));

    // The softmax denominator on the sum schedule, then the probabilities (each lane its own keys).
    if (n > 0) {
      const int64_t leaf_count = reduce_leaf_count(n);
      for (int64_t l = 0; l < leaf_count; ++l) {
        const int64_t start = l * kReduceLeaf, end = lesser(n, start + kReduceLeaf);
        float acc = StepExpShift::init();
        for (int64_t i = start + lane; i < end; i += kGroupLanes) {
          const float e = exp(sub(s[i], m));
          s[i] = e;
          acc = add(acc, e);
        }
        acc = fold_row_lanes(acc, sh.reversed_fold);
        if (lane == 0) leaves[l] = acc;
      }
      float total = 0.0f;
      if (lane == 0) total = leaf_tree<StepExpShift>(leaves, leaf_count);
      total = __shfl_sync(kFullMask, total, 0, kGroupLanes);
      for (int64_t i = lane; i < n; i += kGroupLanes) s[i] = canonicalize(div(s[i], total));
    }

    // o[d] over the keys in ascending order, a fresh chain per GEMM leaf of kGemmKLeaf keys.
    float acc[kSlots], c[kSlots];
#pragma unroll
    for (int x = 0; x < kSlots; ++x) acc[x] = 0.0f, c[x] = 0.0f;
    for (int64_t c0 = key_lo; c0 <= key_hi; c0 += sh.chunk) {
      const int len = static_cast<int>(lesser(sh.chunk, key_hi - c0 + 1));
      __syncthreads();
      stage_rows(staged, dim, vb + c0 * a.v_st, a.v_st, len, dim, sh.vec_v);
      __syncthreads();
      if (n == 0) continue;
      int64_t j = greater(c0, lo);
      const int64_t to = lesser(c0 + len - 1, hi);
      while (j <= to) {
        const int64_t i = j - lo;
        if (i > 0 && i % kGemmKLeaf == 0) {
#pragma unroll
          for (int x = 0; x < kSlots; ++x) {
            c[x] = i == kGemmKLeaf ? acc[x] : add(c[x], acc[x]);
            acc[x] = 0.0f;
          }
        }
        // Keys j .. seg_end lie in one GEMM leaf and in this chunk.
        const int64_t seg_end = lesser(to, lo + (i / kGemmKLeaf + 1) * kGemmKLeaf - 1);
        const int count = static_cast<int>(seg_end - j + 1);
        const float* pr = s + i;
        const float* vr = staged + (j - c0) * dim + lane;
#pragma unroll 4
        for (int u = 0; u < count; ++u) {
          const float p = pr[u];
#pragma unroll
          for (int x = 0; x < kSlots; ++x) {
            if (lane + x * kGroupLanes < dim) acc[x] = fma(p, vr[u * dim + x * kGroupLanes], acc[x]);
          }
        }
        j = seg_end + 1;
      }
    }
    if (has_row) {
      float* o = out + b * a.o_sb + t * a.o_st + h * a.o_sh;
#pragma unroll
      for (int x = 0; x < kSlots; ++x) {
        const int d = lane + x * kGroupLanes;
        if (d < dim) o[d] = n == 0 ? 0.0f : canonicalize(n > kGemmKLeaf ? add(c[x], acc[x]) : acc[x]);
      }
    }
    __syncthreads();  // the next tile rewrites row_lo, row_hi and the staged keys
  }
}

// The most dynamic shared memory a block may use here (the device's opt-in limit, capped).
int64_t shared_budget() {
  static std::atomic<int64_t> cached{-1};
  int64_t v = cached.load();
  if (v < 0) {
    int dev = 0, optin = 0;
    BL_CUDA_CHECK(cudaGetDevice(&dev));
    BL_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    v = optin - static_cast<int64_t>(2 * 32 * sizeof(int64_t)) - 1024;
    if (v > kSharedBudget) v = kSharedBudget;
    if (v < 48 * 1024 - 1024) v = 48 * 1024 - 1024;
    cached.store(v);
  }
  return v;
}

template <int kSlots>
void launch_warp_rows(const AttentionArgs& a, const float* q, const float* k, const float* v, const int64_t* q_pos,
                      const int64_t* kv_len, float* out, const WarpRowsShape& sh, int grid) {
  auto kernel = attention_warp_rows_kernel<kSlots>;
  if (sh.smem_bytes > 48 * 1024) {
    BL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(sh.smem_bytes)));
  }
  kernel<<<grid, sh.groups * kGroupLanes, static_cast<size_t>(sh.smem_bytes)>>>(a, q, k, v, q_pos, kv_len, out, sh);
  BL_CUDA_CHECK(cudaGetLastError());
}

// The most threads per block any instance can launch with (their register use may allow < 1024).
int warp_rows_block(const LaunchConfig& config) {
  int block = fitted_block(attention_warp_rows_kernel<1>, config);
  block = std::min(block, fitted_block(attention_warp_rows_kernel<2>, config));
  block = std::min(block, fitted_block(attention_warp_rows_kernel<4>, config));
  return std::min(block, fitted_block(attention_warp_rows_kernel<8>, config));
}

}  // namespace

bool attention_warp_rows(const AttentionArgs& a, const float* q, const float* k, const float* v,
                         const int64_t* q_pos, const int64_t* kv_len, float* out, const LaunchConfig& config,
                         bool reversed_fold) {
  if (a.head_dim > kMaxHeadDim) return false;
  WarpRowsShape sh;
  const int dim = static_cast<int>(a.head_dim);
  // Staged key rows: lanes read 32 different rows at once, so the stride is odd in floats (scalar
  // reads) or odd in float4 units (vector reads) to spread them over all banks.
  sh.vec_score = dim % 4 == 0;
  if (sh.vec_score) sh.dim_pad = (dim / 4) % 2 == 1 ? dim : dim + 4;
  else sh.dim_pad = dim % 2 == 0 ? dim + 1 : dim;
  sh.chunk = sh.dim_pad <= 68 ? 128 : (sh.dim_pad <= 132 ? 64 : 32);  // about 34 KiB of keys
  sh.score_cap = a.window > 0 && a.window < a.kv_capacity ? a.window : a.kv_capacity;
  if (sh.score_cap < 1) sh.score_cap = 1;
  sh.leaf_cap = reduce_leaf_count(sh.score_cap);
  const int64_t rows_per_group = a.q_len * (a.n_heads / a.n_kv_heads);
  // Rows per block from the launch config (config.block / 32); a few idle groups still help to
  // stage keys.
  int64_t groups = warp_rows_block(config) / kGroupLanes;
  const int64_t useful = rows_per_group > 4 ? rows_per_group : 4;
  if (groups > useful) groups = useful;
  auto bytes = [&](int64_t gr) {
    return static_cast<int64_t>(sizeof(float)) *
           (sh.chunk * sh.dim_pad + gr * (dim + sh.score_cap + sh.leaf_cap));
  };
  const int64_t budget = shared_budget();
  while (groups > 1 && bytes(groups) > budget) groups /= 2;
  if (bytes(groups) > budget) return false;
  sh.groups = static_cast<int>(groups);
  sh.smem_bytes = bytes(groups);
  const auto aligned = [](const float* p, int64_t sb, int64_t st, int64_t shd, int64_t dim) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && sb % 4 == 0 && st % 4 == 0 && shd % 4 == 0 && dim % 4 == 0;
  };
  sh.vec_k = aligned(k, a.k_sb, a.k_st, a.k_sh, a.head_dim);
  sh.vec_v = aligned(v, a.v_sb, a.v_st, a.v_sh, a.head_dim);
  const int64_t tiles = a.batch * a.n_kv_heads * ((rows_per_group + groups - 1) / groups);
  if (tiles == 0) return true;
  const int grid = grid_size(tiles, config);
  sh.reversed_fold = reversed_fold;
  if (dim <= 32) launch_warp_rows<1>(a, q, k, v, q_pos, kv_len, out, sh, grid);
  else if (dim <= 64) launch_warp_rows<2>(a, q, k, v, q_pos, kv_len, out, sh, grid);
  else if (dim <= 128) launch_warp_rows<4>(a, q, k, v, q_pos, kv_len, out, sh, grid);
  else launch_warp_rows<8>(a, q, k, v, q_pos, kv_len, out, sh, grid);
  cuda_sync_check("causal_attention");
  return true;
}

}  // namespace bl::cuda
