// attention_tiled.cu: CUDA attention for prefill shapes, several query rows per 32-lane group.
//
// A block takes kRows x (warps per block) consecutive queries of one (batch, head) (kRows = 4 for
// every head_dim: 8 measured slower); each 32-lane group ("row group") owns kRows of them, and
// lane L of a group owns, for each of its rows, the keys j with j mod 32 == L (window 0: every key range starts at key 0, so the relative index of key j
// is j). Keys are staged in shared memory a chunk of kKeys x 32 at a time; a lane computes the
// scores of its rows against its kKeys keys of the chunk together, so each staged key feeds kRows
// rows (the warp-rows kernel feeds one). Each score is computed exactly as attention_score
// computes it (one fma chain from +0 in ascending d, then the scale). Three passes read the scores:
//   pass 1   computes them, and the row maxima (bl::max is associative and commutative);
//   pass 2   the softmax denominator: lane L adds exp(s_j - m) for its keys in ascending j, which
//            is lane L of leaf_reduce; at the end of each softmax leaf of 4096 keys the lanes are
//            folded by shuffles in the schedule's halving order and the leaf values by leaf_tree;
//   pass 3   p_j = exp(s_j - m) / S goes to shared memory for the chunk, and lane L owns the
//            output elements d = L, L + 32, ... of the group's rows: p_j * v_j[d] over the keys in
//            ascending order, a fresh fma chain per GEMM leaf of 256 keys (chunks never straddle
//            one), the leaves folded left to right.
// Stored scores (the default where the scratch fits, kStored): pass 1 writes each lane's scores to
// a global scratch row per query row and passes 2 and 3 read them back, each lane only the values
// it wrote itself, so no synchronisation is needed and the values are the same floats. The grid is
// then the blocks the device holds at once, each taking the next tile from an atomic counter, so
// the scratch is one slot per resident block. Otherwise (kAttentionVariantTiledRecompute, or rows
// too long for the scratch cap) passes 2 and 3 compute the scores again, staging the keys again.
// A key past a row's last allowed key is skipped, never multiplied by a zero probability (that
// would turn a -0 sum into +0, or an infinite value into NaN). Every value is the value
// attention_row computes, so the output has the reference's bits for any block size or grid.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/attention_kernels.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/cuda/reduce_cuda.cuh"

namespace bl::cuda {
namespace {

constexpr int kLanes = 32;           // lanes per row group = the sum schedule's lanes
constexpr int kMaxDim = 128;         // the widest head_dim covered
constexpr unsigned kMask = 0xFFFFFFFFu;

static_assert(kReduceLanes == kLanes, "one row group lane per sum-schedule lane");
static_assert(kGemmKLeaf % 128 == 0 && kReduceLeaf % 128 == 0, "a chunk never straddles a leaf");

struct TiledShape {
  int dim_pad = 4;         // row stride of staged keys (odd in float4 units: no bank conflicts)
  int p_stride = 8;        // row stride of the staged probabilities (rows per block + 4)
  int leaf_cap = 1;        // softmax leaf slots per row
  int64_t smem_bytes = 0;
  bool reversed_fold = false;  // sabotage arm only
};

__device__ int64_t least(int64_t x, int64_t y) { return x < y ? x : y; }

// Copies `rows` rows of `dim` floats (16-byte aligned, dim % 4 == 0) from src (row stride
// src_stride) to dst (row stride dst_stride, a multiple of 4), all threads of the block together.
__device__ void stage_quads(float* dst, int dst_stride, const float* src, int64_t src_stride, int rows, int dim) {
  const int width = dim / 4, total = rows * width;
  for (int e = threadIdx.x; e < total; e += blockDim.x) {
    const int r = e / width, c = e - r * width;
    *reinterpret_cast<float4*>(dst + r * dst_stride + 4 * c) =
        *reinterpret_cast<const float4*>(src + r * src_stride + 4 * c);
  }
}

// Scores of the group's kRows rows (qs, row stride dim) against the lane's kKeys staged keys
// (key u at staged row lane + 32 u): attention_score's chain for each pair.
template <int kRows, int kKeys>
__device__ void tile_scores(const float* qs, const float* staged, int dim_pad, int dim, float scale, int lane,
                            float (&s)[kRows][kKeys]) {
  float acc[kRows][kKeys];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int u = 0; u < kKeys; ++u) acc[r][u] = 0.0f;
  for (int d4 = 0; d4 < dim / 4; ++d4) {
    float4 x[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) x[r] = reinterpret_cast<const float4*>(qs + r * dim)[d4];
#pragma unroll
    for (int u = 0; u < kKeys; ++u) {
      const float4 y = reinterpret_cast<const float4*>(staged + (lane + kLanes * u) * dim_pad)[d4];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        acc[r][u] = fma(x[r].x, y.x, acc[r][u]);
        acc[r][u] = fma(x[r].y, y.y, acc[r][u]);
        acc[r][u] = fma(x[r].z, y.z, acc[r][u]);
        acc[r][u] = fma(x[r].w, y.w, acc[r][u]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int u = 0; u < kKeys; ++u) s[r][u] = canonicalize(mul(acc[r][u], scale));
}

// Writes (or reads back) the lane's scores of one chunk: row r of the group at rows + r * stride,
// key c0 + lane + 32 u. Only the lane that wrote a value reads it.
template <int kRows, int kKeys>
__device__ void store_scores(float* rows, int64_t stride, int64_t c0, int lane, const float (&s)[kRows][kKeys]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int u = 0; u < kKeys; ++u) rows[r * stride + c0 + lane + kLanes * u] = s[r][u];
}
template <int kRows, int kKeys>
__device__ void load_scores(const float* rows, int64_t stride, int64_t c0, int lane, float (&s)[kRows][kKeys]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int u = 0; u < kKeys; ++u) s[r][u] = rows[r * stride + c0 + lane + kLanes * u];
}

// One chunk of a pass: stages keys c0 .. c0 + len - 1 (all threads of the block) and, when the
// group has a row that reaches key c0, computes its tile of scores; returns whether it did.
template <int kRows, int kKeys>
__device__ bool chunk_scores(float* staged, int dim_pad, const float* kb, int64_t k_st, int64_t c0, int len,
                             int dim, int64_t row_max, const float* my_q, float scale, int lane,
                             float (&s)[kRows][kKeys]) {
  __syncthreads();
  stage_quads(staged, dim_pad, kb + c0 * k_st, k_st, len, dim);
  __syncthreads();
  if (c0 > row_max) return false;
  tile_scores<kRows, kKeys>(my_q, staged, dim_pad, dim, scale, lane, s);
  return true;
}

// The staged probabilities of one key for a group's kRows rows (16-byte aligned).
template <int kRows>
__device__ void load_row_probabilities(const float* src, float (&pr)[kRows]) {
#pragma unroll
  for (int r4 = 0; r4 < kRows / 4; ++r4) {
    const float4 p = reinterpret_cast<const float4*>(src)[r4];
    pr[4 * r4] = p.x, pr[4 * r4 + 1] = p.y, pr[4 * r4 + 2] = p.z, pr[4 * r4 + 3] = p.w;
  }
}

// Lane 0 ends with the fold of the 32 lane values: halving (the schedule) or, for the sabotage
// test, doubling strides.
__device__ float fold_lanes(float acc, bool reversed) {
  if (reversed) {
    for (int w = 1; w < kLanes; w *= 2) acc = add(acc, __shfl_down_sync(kMask, acc, w, kLanes));
  } else {
    for (int w = kLanes / 2; w >= 1; w /= 2) acc = add(acc, __shfl_down_sync(kMask, acc, w, kLanes));
  }
  return acc;
}

// kRows: query rows per row group (a multiple of 4); kKeys: keys per lane per chunk (chunk =
// 32 kKeys); kSlots: output elements per lane (head_dim <= 32 kSlots); kStored: scores kept in
// `scores` (score_stride floats per query row, rows_per_block rows per block) and tiles taken
// from *tile_counter (zero at launch), else recomputed and tiles taken by grid stride.
template <int kRows, int kKeys, int kSlots, bool kStored>
__global__ void attention_tiled_kernel(AttentionArgs a, const float* q, const float* k, const float* v,
                                       const int64_t* q_pos, const int64_t* kv_len, float* out, TiledShape sh,
                                       float* scores, int64_t score_stride, unsigned long long* tile_counter) {
  extern __shared__ float4 smem4[];
  __shared__ unsigned long long block_keys;  // keys up to the block's last allowed one
  __shared__ unsigned long long next_tile;
  constexpr int kChunk = kKeys * kLanes;
  float* smem = reinterpret_cast<float*>(smem4);
  const int dim = static_cast<int>(a.head_dim);
  const int group = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const int rows_per_block = static_cast<int>(blockDim.x / kLanes) * kRows;
  float* staged = smem;                                   // kChunk x dim_pad (keys, then values)
  float* qs = staged + kChunk * sh.dim_pad;               // rows_per_block x dim
  float* ps = qs + rows_per_block * dim;                  // kChunk x p_stride
  float* leaves = ps + kChunk * sh.p_stride;              // rows_per_block x leaf_cap
  float* my_q = qs + group * kRows * dim;
  float* my_leaves = leaves + group * kRows * sh.leaf_cap;
  const int64_t heads_per_group = a.n_heads / a.n_kv_heads;
  const int64_t tiles_per_head = (a.q_len + rows_per_block - 1) / rows_per_block;
  const int64_t tiles = a.batch * a.n_heads * tiles_per_head;
  float* my_scores = kStored ? scores + (static_cast<int64_t>(blockIdx.x) * rows_per_block + group * kRows) * score_stride
                             : nullptr;
  // The next tile: from the counter (one thread takes it for the block) or by grid stride.
  const auto take_tile = [&](int64_t previous) -> int64_t {
    if (!kStored) return previous < 0 ? blockIdx.x : previous + gridDim.x;
    if (threadIdx.x == 0) next_tile = atomicAdd(tile_counter, 1ull);
    __syncthreads();
    return static_cast<int64_t>(next_tile);
  };
  for (int64_t tile = take_tile(-1); tile < tiles; tile = take_tile(tile)) {
    const int64_t bh = tile / tiles_per_head;
    const int64_t b = bh / a.n_heads, h = bh % a.n_heads, g = h / heads_per_group;
    // Latest queries first: they have the most keys.
    const int64_t t0 = (tiles_per_head - 1 - tile % tiles_per_head) * rows_per_block + group * kRows;
    int64_t hi[kRows];
    int64_t row_max = -1, row_min = INT64_MAX;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      int64_t lo = 0, last = -1;
      if (t0 + r < a.q_len) attention_key_range(q_pos[b * a.q_len + t0 + r], kv_len[b], 0, &lo, &last);
      hi[r] = last;
      row_max = row_max > last ? row_max : last;
      row_min = row_min < last ? row_min : last;
    }
    if (threadIdx.x == 0) block_keys = 0;
    for (int e = lane; e < kRows * dim; e += kLanes) {
      const int r = e / dim, d = e - r * dim;
      my_q[e] = hi[r] >= 0 ? q[b * a.q_sb + (t0 + r) * a.q_st + h * a.q_sh + d] : 0.0f;
    }
    __syncthreads();
    if (lane == 0 && row_max >= 0) atomicMax(&block_keys, static_cast<unsigned long long>(row_max + 1));
    __syncthreads();
    const int64_t key_hi = static_cast<int64_t>(block_keys) - 1;  // the block's last key (-1: none)
    const float* kb = k + b * a.k_sb + g * a.k_sh;
    const float* vb = v + b * a.v_sb + g * a.v_sh;

    // Pass 1: the row maxima.
    float m[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) m[r] = StepMax::init();
    for (int64_t c0 = 0; c0 <= key_hi; c0 += kChunk) {
      const int len = static_cast<int>(least(kChunk, key_hi - c0 + 1));
      float s[kRows][kKeys];
      if (!chunk_scores(staged, sh.dim_pad, kb, a.k_st, c0, len, dim, row_max, my_q, a.scale, lane, s)) continue;
      if (kStored) store_scores<kRows, kKeys>(my_scores, score_stride, c0, lane, s);
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int u = 0; u < kKeys; ++u)
          if (c0 + lane + kLanes * u <= hi[r]) m[r] = bl::max(m[r], s[r][u]);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      for (int w = kLanes / 2; w >= 1; w /= 2) m[r] = bl::max(m[r], __shfl_xor_sync(kMask, m[r], w, kLanes));

    // Pass 2: the softmax denominators.
    float acc[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] = StepExpShift::init();
    for (int64_t c0 = 0; c0 <= key_hi; c0 += kChunk) {
      const int len = static_cast<int>(least(kChunk, key_hi - c0 + 1));
      float s[kRows][kKeys];
      bool have;
      if (kStored) {
        have = c0 <= row_max;
        if (have) load_scores<kRows, kKeys>(my_scores, score_stride, c0, lane, s);
      } else {
        have = chunk_scores(staged, sh.dim_pad, kb, a.k_st, c0, len, dim, row_max, my_q, a.scale, lane, s);
      }
      if (have) {
#pragma unroll
        for (int u = 0; u < kKeys; ++u)
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            if (c0 + lane + kLanes * u <= hi[r]) acc[r] = add(acc[r], exp(sub(s[r][u], m[r])));
      }
      // The end of a softmax leaf: fold it for every row that has keys in it.
      const int64_t end = c0 + kChunk;
      if (end % kReduceLeaf == 0 || end > key_hi) {
        const int64_t leaf = c0 / kReduceLeaf;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          if (hi[r] < leaf * kReduceLeaf) continue;  // uniform over the group: the row's own range
          const float folded = fold_lanes(acc[r], sh.reversed_fold);
          if (lane == 0) my_leaves[r * sh.leaf_cap + leaf] = folded;
          acc[r] = StepExpShift::init();
        }
      }
    }
    float total[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float t = 0.0f;
      if (lane == 0 && hi[r] >= 0) t = leaf_tree<StepExpShift>(my_leaves + r * sh.leaf_cap, reduce_leaf_count(hi[r] + 1));
      total[r] = __shfl_sync(kMask, t, 0, kLanes);
    }

    // Pass 3: probabilities of the chunk to shared memory, then the weighted values.
    float o[kRows][kSlots], c[kRows][kSlots];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int x = 0; x < kSlots; ++x) o[r][x] = 0.0f, c[r][x] = 0.0f;
    for (int64_t c0 = 0; c0 <= key_hi; c0 += kChunk) {
      const int len = static_cast<int>(least(kChunk, key_hi - c0 + 1));
      float s[kRows][kKeys];
      bool have;
      if (kStored) {
        __syncthreads();  // every group is done with the previous chunk's probabilities and values
        have = c0 <= row_max;
        if (have) load_scores<kRows, kKeys>(my_scores, score_stride, c0, lane, s);
      } else {
        have = chunk_scores(staged, sh.dim_pad, kb, a.k_st, c0, len, dim, row_max, my_q, a.scale, lane, s);
      }
      if (have) {
#pragma unroll
        for (int u = 0; u < kKeys; ++u) {
          float pr[kRows];
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            pr[r] = c0 + lane + kLanes * u <= hi[r] ? canonicalize(div(exp(sub(s[r][u], m[r])), total[r])) : 0.0f;
          float4* dst = reinterpret_cast<float4*>(ps + (lane + kLanes * u) * sh.p_stride + group * kRows);
#pragma unroll
          for (int r4 = 0; r4 < kRows / 4; ++r4)
            dst[r4] = make_float4(pr[4 * r4], pr[4 * r4 + 1], pr[4 * r4 + 2], pr[4 * r4 + 3]);
        }
      }
      if (!kStored) __syncthreads();  // every group is done with the staged keys
      stage_quads(staged, dim, vb + c0 * a.v_st, a.v_st, len, dim);
      __syncthreads();
      if (c0 > row_max) continue;
      if (c0 > 0 && c0 % kGemmKLeaf == 0) {
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          if (hi[r] < c0) continue;
#pragma unroll
          for (int x = 0; x < kSlots; ++x) {
            c[r][x] = c0 == kGemmKLeaf ? o[r][x] : add(c[r][x], o[r][x]);
            o[r][x] = 0.0f;
          }
        }
      }
      const float* vr = staged + lane;
      if (c0 + len - 1 <= row_min) {
        // Every key of the chunk is allowed for all the group's rows.
#pragma unroll 2
        for (int j = 0; j < len; ++j) {
          float pr[kRows];
          load_row_probabilities<kRows>(ps + j * sh.p_stride + group * kRows, pr);
#pragma unroll
          for (int x = 0; x < kSlots; ++x) {
            if (lane + x * kLanes < dim) {
              const float y = vr[j * dim + x * kLanes];
#pragma unroll
              for (int r = 0; r < kRows; ++r) o[r][x] = fma(pr[r], y, o[r][x]);
            }
          }
        }
      } else {
        const int64_t stop = least(len, row_max - c0 + 1);
        for (int j = 0; j < stop; ++j) {
          float pr[kRows];
          load_row_probabilities<kRows>(ps + j * sh.p_stride + group * kRows, pr);
#pragma unroll
          for (int x = 0; x < kSlots; ++x) {
            if (lane + x * kLanes < dim) {
              const float y = vr[j * dim + x * kLanes];
#pragma unroll
              for (int r = 0; r < kRows; ++r)
                if (c0 + j <= hi[r]) o[r][x] = fma(pr[r], y, o[r][x]);
            }
          }
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (t0 + r >= a.q_len) continue;
      float* orow = out + b * a.o_sb + (t0 + r) * a.o_st + h * a.o_sh;
      const int64_t n = hi[r] + 1;
#pragma unroll
      for (int x = 0; x < kSlots; ++x) {
        const int d = lane + x * kLanes;
        if (d < dim) orow[d] = n <= 0 ? 0.0f : canonicalize(n > kGemmKLeaf ? add(c[r][x], o[r][x]) : o[r][x]);
      }
    }
    __syncthreads();  // the next tile rewrites the staged rows, the queries, block_keys and next_tile
  }
}

// The most score scratch the stored form takes (bytes); longer rows recompute their scores.
constexpr int64_t kScoreScratchCap = int64_t{512} << 20;

template <int kRows, int kKeys, int kSlots, bool kStored>
void launch_tiled(const AttentionArgs& a, const float* q, const float* k, const float* v, const int64_t* q_pos,
                  const int64_t* kv_len, float* out, TiledShape sh, const LaunchConfig& config) {
  auto kernel = attention_tiled_kernel<kRows, kKeys, kSlots, kStored>;
  const int block = fitted_block(kernel, config);
  const int rows_per_block = block / kLanes * kRows;
  const int dim = static_cast<int>(a.head_dim);
  constexpr int kChunk = kKeys * kLanes;
  sh.p_stride = rows_per_block + 4;
  sh.smem_bytes = static_cast<int64_t>(sizeof(float)) *
                  (kChunk * sh.dim_pad + rows_per_block * dim + kChunk * sh.p_stride + rows_per_block * sh.leaf_cap);
  if (sh.smem_bytes > 48 * 1024) {
    BL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(sh.smem_bytes)));
  }
  const int64_t tiles = a.batch * a.n_heads * ((a.q_len + rows_per_block - 1) / rows_per_block);
  int grid = grid_size(tiles, config);
  if (!kStored) {
    kernel<<<grid, block, static_cast<size_t>(sh.smem_bytes)>>>(a, q, k, v, q_pos, kv_len, out, sh, nullptr, 0,
                                                                nullptr);
    BL_CUDA_CHECK(cudaGetLastError());
    return;
  }
  // One scratch slot per block the device holds at once (more blocks would only wait).
  int per_sm = 0;
  BL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block,
                                                              static_cast<size_t>(sh.smem_bytes)));
  const int64_t resident = std::max<int64_t>(1, per_sm) * current_multiprocessors();
  if (grid > resident) grid = static_cast<int>(resident);
  const int64_t stride = (a.kv_capacity + kChunk - 1) / kChunk * kChunk;
  if (static_cast<int64_t>(grid) * rows_per_block * stride * static_cast<int64_t>(sizeof(float)) > kScoreScratchCap) {
    launch_tiled<kRows, kKeys, kSlots, false>(a, q, k, v, q_pos, kv_len, out, sh, config);
    return;
  }
  DeviceScratch<float> scores(static_cast<int64_t>(grid) * rows_per_block * stride, "causal_attention scores");
  DeviceScratch<unsigned long long> counter(1, "causal_attention tile counter");
  BL_CUDA_CHECK(cudaMemsetAsync(counter.ptr, 0, sizeof(unsigned long long)));
  kernel<<<grid, block, static_cast<size_t>(sh.smem_bytes)>>>(a, q, k, v, q_pos, kv_len, out, sh, scores.ptr, stride,
                                                              counter.ptr);
  BL_CUDA_CHECK(cudaGetLastError());
}

template <int kKeys, bool kStored>
void launch_tiled_dim(const AttentionArgs& a, const float* q, const float* k, const float* v, const int64_t* q_pos,
                      const int64_t* kv_len, float* out, const TiledShape& sh, const LaunchConfig& config) {
  if (a.head_dim <= 32) launch_tiled<4, kKeys, 1, kStored>(a, q, k, v, q_pos, kv_len, out, sh, config);
  else if (a.head_dim <= 64) launch_tiled<4, kKeys, 2, kStored>(a, q, k, v, q_pos, kv_len, out, sh, config);
  else launch_tiled<4, kKeys, 4, kStored>(a, q, k, v, q_pos, kv_len, out, sh, config);
}

template <int kKeys>
void launch_tiled_keys(const AttentionArgs& a, const float* q, const float* k, const float* v, const int64_t* q_pos,
                       const int64_t* kv_len, float* out, const TiledShape& sh, const LaunchConfig& config) {
  if (config.variant != kAttentionVariantTiledRecompute)
    launch_tiled_dim<kKeys, true>(a, q, k, v, q_pos, kv_len, out, sh, config);
  else
    launch_tiled_dim<kKeys, false>(a, q, k, v, q_pos, kv_len, out, sh, config);
}

}  // namespace

bool attention_tiled_applies(const AttentionArgs& a, const float* q, const float* k, const float* v) {
  const auto aligned = [](const float* p, int64_t sb, int64_t st, int64_t shd) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && sb % 4 == 0 && st % 4 == 0 && shd % 4 == 0;
  };
  return a.window == 0 && a.q_len >= 16 && a.head_dim % 4 == 0 && a.head_dim <= kMaxDim &&
         aligned(q, a.q_sb, a.q_st, a.q_sh) && aligned(k, a.k_sb, a.k_st, a.k_sh) && aligned(v, a.v_sb, a.v_st, a.v_sh);
}

void attention_tiled(const AttentionArgs& a, const float* q, const float* k, const float* v, const int64_t* q_pos,
                     const int64_t* kv_len, float* out, const LaunchConfig& config, bool reversed_fold) {
  TiledShape sh;
  const int dim = static_cast<int>(a.head_dim);
  sh.dim_pad = (dim / 4) % 2 == 1 ? dim : dim + 4;
  sh.leaf_cap = static_cast<int>(reduce_leaf_count(a.kv_capacity > 0 ? a.kv_capacity : 1));
  sh.reversed_fold = reversed_fold;
  if (a.batch * a.n_heads * a.q_len == 0) return;
  // 128 keys per chunk up to head_dim 64 (about 35 KiB staged), else 64.
  if (dim <= 64) launch_tiled_keys<4>(a, q, k, v, q_pos, kv_len, out, sh, config);
  else launch_tiled_keys<2>(a, q, k, v, q_pos, kv_len, out, sh, config);
  cuda_sync_check("causal_attention");
}

}  // namespace bl::cuda
