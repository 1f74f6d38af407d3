// elementwise_cuda.cu: CUDA entry points of the unary, binary, compare, where, cast and copy
// kernels. The element functions are those of src/kernels/elementwise_functors.h (shared with the
// CPU); each thread computes whole elements in a grid-stride loop, so the launch shape cannot
// change any bit.
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/allocator.h"
#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/cuda/exp_quad.cuh"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/elementwise_functors.h"

namespace bl {

// The shared launch helpers of the CUDA backend (kernels/cuda/*.cuh) live in bl::cuda.
using namespace cuda;

namespace {

template <typename Out, typename In, typename F>
__global__ void map1_kernel(const In* in, StridedView v, int identity, Out* out, int64_t n, F f) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = f(in[identity ? i : strided_offset(v, i)]);
}

template <typename Out, typename A, typename B, typename F>
__global__ void map2_kernel(const A* a, StridedView va, const B* b, StridedView vb, int identity,
                            Out* out, int64_t n, F f) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t oa = identity ? i : strided_offset(va, i);
    int64_t ob = identity ? i : strided_offset(vb, i);
    out[i] = f(a[oa], b[ob]);
  }
}

template <typename Out, typename C, typename A, typename B, typename F>
__global__ void map3_kernel(const C* c, StridedView vc, const A* a, StridedView va, const B* b,
                            StridedView vb, Out* out, int64_t n, F f) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = f(c[strided_offset(vc, i)], a[strided_offset(va, i)], b[strided_offset(vb, i)]);
}

// f of four elements. exp has a four-wide form with the same bits (exp_quad.cuh): its rare
// settling step comes after all four fast evaluations instead of after each.
template <typename F>
__device__ __forceinline__ float4 apply_quad(F f, float4 x) {
  return make_float4(f(x.x), f(x.y), f(x.z), f(x.w));
}
__device__ __forceinline__ float4 apply_quad(UnaryF32Fn<static_cast<int>(UnaryOp::exp)>, float4 x) {
  return exp_quad(x);  // bl::exp's results are canonical already, as unary_f32 makes them
}

// Contiguous f32 maps move four elements per thread through 16-byte loads and stores. Element i is
// still f of element i alone, so the grouping changes nothing but speed.
template <typename F>
__global__ void map1_f32x4_kernel(const float4* in, float4* out, int64_t n4, F f) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += step)
    out[i] = apply_quad(f, in[i]);
}

template <typename F>
__global__ void map2_f32x4_kernel(const float4* a, const float4* b, float4* out, int64_t n4, F f) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += step) {
    const float4 x = a[i], y = b[i];
    out[i] = make_float4(f(x.x, y.x), f(x.y, y.y), f(x.z, y.z), f(x.w, y.w));
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// A binary f32 map where one operand is a single broadcast value (a scalar, or a view of stride 0
// throughout) and the other contiguous: quads against the value. SCALAR_B: the value is b.
// x and out 16-byte aligned; the last n % 4 elements one by one.
template <bool SCALAR_B, typename F>
__global__ void map2_scalar_f32x4_kernel(const float* x, const float* value, float* out, int64_t n, F f) {
  const float v = *value;
  const int64_t n4 = n / 4;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = first; i < n4; i += step) {
    const float4 a = reinterpret_cast<const float4*>(x)[i];
    reinterpret_cast<float4*>(out)[i] = SCALAR_B ? make_float4(f(a.x, v), f(a.y, v), f(a.z, v), f(a.w, v))
                                                 : make_float4(f(v, a.x), f(v, a.y), f(v, a.z), f(v, a.w));
  }
  for (int64_t i = 4 * n4 + first; i < n; i += step) out[i] = SCALAR_B ? f(x[i], v) : f(v, x[i]);
}

// True when view reads one element for every position (stride 0 wherever the extent exceeds 1).
bool single_value(const StridedView& view) {
  for (int d = 0; d < view.ndim; ++d)
    if (view.shape[d] > 1 && view.strides[d] != 0) return false;
  return true;
}


// Transposing copy: dst is contiguous and src reads its second-to-last dimension with stride 1
// (a transposed view). Square tiles pass through shared memory so that both the reads (along the
// source's unit stride) and the writes (along dst's rows) are coalesced. Leading dimensions are
// batches. LaunchConfig.variant picks the kernel: 6: 32 x 32 tiles; 7: 64 x 64 tiles; any other
// (the default): 64 x 64 tiles moved as 16-byte quads for 4-byte elements with 16-byte aligned
// columns and rows, else 64 x 64 tiles (H200, 8192^2 and 16384^2 floats: 0.75-0.77 of the
// device-to-device copy bandwidth for the quads, 0.64 for 64 x 64, 0.47-0.48 for 32 x 32). Kernel
// and launch shape change nothing but speed: every element is copied exactly.
constexpr int kTile = 32, kTileRows = 8;

template <typename T, int TILE, int ROWS>
__global__ void transpose_copy_kernel(const T* src, StridedView batch_view, int64_t col_stride, T* dst,
                                      int64_t batches, int64_t rows, int64_t cols) {
  __shared__ T tile[TILE][TILE + 1];
  const int64_t tiles_r = (rows + TILE - 1) / TILE, tiles_c = (cols + TILE - 1) / TILE;
  const int64_t total = batches * tiles_r * tiles_c;
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const int64_t b = t / (tiles_r * tiles_c), rc = t % (tiles_r * tiles_c);
    const int64_t r0 = (rc / tiles_c) * TILE, c0 = (rc % tiles_c) * TILE;
    const T* s = src + strided_offset(batch_view, b);
    // Read: threadIdx.x walks rows (unit stride in src).
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
      const int64_t r = r0 + threadIdx.x, c = c0 + j;
      if (r < rows && c < cols) tile[j][threadIdx.x] = s[r + c * col_stride];
    }
    __syncthreads();
    // Write: threadIdx.x walks columns (unit stride in dst).
    T* d = dst + b * rows * cols;
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
      const int64_t r = r0 + j, c = c0 + threadIdx.x;
      if (r < rows && c < cols) d[r * cols + c] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

// Transposing copy of 4-byte elements in 64 x 64 tiles, 256 threads, each moving 16-byte quads:
// reads are quads of 4 source rows (unit stride) of one column, writes quads of 4 dst columns of
// one row. Requires (see transpose_quads_ok) src, dst, col_stride, every batch stride and cols to be
// multiples of 16 bytes / 4 elements, so every full quad is aligned; quads cut by the matrix edge
// move element by element.
constexpr int kQuadTile = 64, kQuadThreads = 256;

__global__ void transpose_copy_quads_kernel(const uint32_t* src, StridedView batch_view,
                                            int64_t col_stride, uint32_t* dst, int64_t batches,
                                            int64_t rows, int64_t cols) {
  __shared__ uint32_t tile[kQuadTile][kQuadTile + 1];  // tile[column][row] within the tile
  constexpr int kQuads = kQuadTile / 4, kLines = kQuadThreads / kQuads;
  const int q = static_cast<int>(threadIdx.x) % kQuads, line = static_cast<int>(threadIdx.x) / kQuads;
  const int64_t tiles_r = (rows + kQuadTile - 1) / kQuadTile, tiles_c = (cols + kQuadTile - 1) / kQuadTile;
  const int64_t total = batches * tiles_r * tiles_c;
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const int64_t b = t / (tiles_r * tiles_c), rc = t % (tiles_r * tiles_c);
    const int64_t r0 = (rc / tiles_c) * kQuadTile, c0 = (rc % tiles_c) * kQuadTile;
    const uint32_t* s = src + strided_offset(batch_view, b);
    for (int cl = line; cl < kQuadTile; cl += kLines) {  // source rows 4q..4q+3 of column cl
      const int64_t r = r0 + 4 * q, c = c0 + cl;
      if (c >= cols || r >= rows) continue;
      const uint32_t* p = s + r + c * col_stride;
      if (r + 3 < rows) {
        const uint4 v = *reinterpret_cast<const uint4*>(p);
        tile[cl][4 * q] = v.x;
        tile[cl][4 * q + 1] = v.y;
        tile[cl][4 * q + 2] = v.z;
        tile[cl][4 * q + 3] = v.w;
      } else {
        for (int e = 0; r + e < rows; ++e) tile[cl][4 * q + e] = p[e];
      }
    }
    __syncthreads();
    uint32_t* d = dst + b * rows * cols;
    for (int rl = line; rl < kQuadTile; rl += kLines) {  // dst columns 4q..4q+3 of row rl
      const int64_t r = r0 + rl, c = c0 + 4 * q;
      if (r >= rows || c >= cols) continue;
      uint32_t* p = d + r * cols + c;
      if (c + 3 < cols) {
        uint4 v;
        v.x = tile[4 * q][rl];
        v.y = tile[4 * q + 1][rl];
        v.z = tile[4 * q + 2][rl];
        v.w = tile[4 * q + 3][rl];
        *reinterpret_cast<uint4*>(p) = v;
      } else {
        for (int e = 0; c + e < cols; ++e) p[e] = tile[4 * q + e][rl];
      }
    }
    __syncthreads();
  }
}

// True when every full quad of transpose_copy_quads_kernel is 16-byte aligned.
bool transpose_quads_ok(const void* src, const StridedView& batch_view, int64_t col_stride,
                        const void* dst, int64_t cols) {
  if (!aligned16(src) || !aligned16(dst) || col_stride % 4 != 0 || cols % 4 != 0) return false;
  for (int d = 0; d < batch_view.ndim; ++d)
    if (batch_view.shape[d] > 1 && batch_view.strides[d] % 4 != 0) return false;
  return true;
}

// Grid of a tile kernel: one block per tile, at most cfg.grid_cap (tiles are walked grid-stride).
unsigned transpose_blocks(int64_t tiles, const LaunchConfig& cfg) {
  int64_t blocks = tiles < (int64_t(1) << 30) ? tiles : (int64_t(1) << 30);
  if (cfg.grid_cap > 0 && blocks > cfg.grid_cap) blocks = cfg.grid_cap;
  return static_cast<unsigned>(blocks);
}

// Row form of a view whose last dimension has stride 1: the leading dimensions locate each row.
// Offset of row r: as strided_offset over the leading dimensions, except that the outermost one
// needs no remainder (r is below the row count).
BL_HD int64_t row_offset(const StridedView& lead, int64_t r) {
  int64_t offset = 0;
  for (int d = lead.ndim - 1; d > 0; --d) {
    const int64_t extent = lead.shape[d];
    const int64_t q = r / extent;
    offset += (r - q * extent) * lead.strides[d];
    r = q;
  }
  return lead.ndim > 0 ? offset + r * lead.strides[0] : offset;
}

// The leading dimensions of view (all but the last).
StridedView leading_view(const StridedView& view) {
  StridedView lead;
  lead.ndim = view.ndim - 1;
  for (int d = 0; d + 1 < view.ndim; ++d) {
    lead.shape[d] = view.shape[d];
    lead.strides[d] = view.strides[d];
  }
  return lead;
}

// True when view's last dimension is read with stride 1 (rows of contiguous elements).
bool unit_last_stride(const StridedView& view) { return view.ndim >= 2 && view.strides[view.ndim - 1] == 1; }

// True when rows of `cols` elements of view move as 16-byte quads from base: cols and every leading
// stride a multiple of 4 elements, base 16-byte aligned.
bool rows_in_quads(const void* base, const StridedView& view, int64_t cols) {
  if (!aligned16(base) || cols % 4 != 0) return false;
  for (int d = 0; d + 1 < view.ndim; ++d)
    if (view.shape[d] > 1 && view.strides[d] % 4 != 0) return false;
  return true;
}

// Copies of contiguous blocks (V: the element type, or a 16-byte quad of them).
template <typename V>
__global__ void flat_copy_kernel(const V* src, V* dst, int64_t n) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) dst[i] = src[i];
}

// Row copies: vectors of V (per_row of them a row) from rows located by src_lead / dst_lead. One
// division per vector instead of one per dimension and element of both views.
template <typename T, typename V>
__global__ void row_copy_kernel(const T* src, StridedView src_lead, T* dst, StridedView dst_lead, int64_t rows,
                                int64_t per_row) {
  const int64_t total = rows * per_row;
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t r = i / per_row, c = i - r * per_row;
    const V* s = reinterpret_cast<const V*>(src + row_offset(src_lead, r)) + c;
    V* d = reinterpret_cast<V*>(dst + row_offset(dst_lead, r)) + c;
    *d = *s;
  }
}

// A binary f32 map over rows: both operands read their last dimension with stride 1 (their
// leading dimensions may broadcast), out is contiguous; quads of 4 elements of one row.
template <typename F>
__global__ void map2_rows_f32x4_kernel(const float* a, StridedView a_lead, const float* b, StridedView b_lead,
                                       float4* out, int64_t rows, int64_t per_row, F f) {
  const int64_t total = rows * per_row;
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t r = i / per_row, c = i - r * per_row;
    const float4 x = reinterpret_cast<const float4*>(a + row_offset(a_lead, r))[c];
    const float4 y = reinterpret_cast<const float4*>(b + row_offset(b_lead, r))[c];
    out[i] = make_float4(f(x.x, y.x), f(x.y, y.y), f(x.z, y.z), f(x.w, y.w));
  }
}

template <typename T>
__global__ void strided_copy_kernel(const T* src, StridedView sv, T* dst, StridedView dv, int64_t n) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    dst[strided_offset(dv, i)] = src[strided_offset(sv, i)];
}

template <typename Out, typename In, typename F>
void map1(const In* in, const StridedView& v, Out* out, int64_t n, const LaunchConfig& cfg, F f,
          const char* op) {
  const bool identity = strided_is_identity(v);
  if constexpr (std::is_same<In, float>::value && std::is_same<Out, float>::value) {
    if (identity && n >= 4 && aligned16(in) && aligned16(out)) {
      const int64_t n4 = n / 4, done = n4 * 4;
      GridShape g = grid_for(n4, cfg);
      map1_f32x4_kernel<<<g.blocks, g.threads>>>(reinterpret_cast<const float4*>(in),
                                                 reinterpret_cast<float4*>(out), n4, f);
      if (done < n) map1_kernel<<<1, 32>>>(in + done, v, 1, out + done, n - done, f);
      cuda_sync_check(op);
      return;
    }
  }
  GridShape g = grid_for(n, cfg);
  map1_kernel<<<g.blocks, g.threads>>>(in, v, identity ? 1 : 0, out, n, f);
  cuda_sync_check(op);
}

template <typename Out, typename A, typename B, typename F>
void map2(const A* a, const StridedView& va, const B* b, const StridedView& vb, Out* out, int64_t n,
          const LaunchConfig& cfg, F f, const char* op) {
  int identity = strided_is_identity(va) && strided_is_identity(vb) ? 1 : 0;
  if constexpr (std::is_same<A, float>::value && std::is_same<B, float>::value &&
                std::is_same<Out, float>::value) {
    if (identity && n >= 4 && aligned16(a) && aligned16(b) && aligned16(out)) {
      const int64_t n4 = n / 4, done = n4 * 4;
      GridShape g = grid_for(n4, cfg);
      map2_f32x4_kernel<<<g.blocks, g.threads>>>(reinterpret_cast<const float4*>(a),
                                                 reinterpret_cast<const float4*>(b),
                                                 reinterpret_cast<float4*>(out), n4, f);
      if (done < n) map2_kernel<<<1, 32>>>(a + done, va, b + done, vb, 1, out + done, n - done, f);
      cuda_sync_check(op);
      return;
    }
    // Broadcast forms (no effect on the bits: element i is f of the same two elements).
    if (n >= 4 && aligned16(out)) {
      const bool a_flat = identity || strided_is_identity(va), b_flat = identity || strided_is_identity(vb);
      if (a_flat && aligned16(a) && single_value(vb)) {
        GridShape g = grid_for((n + 3) / 4, cfg);
        map2_scalar_f32x4_kernel<true><<<g.blocks, g.threads>>>(a, b, out, n, f);
        cuda_sync_check(op);
        return;
      }
      if (b_flat && aligned16(b) && single_value(va)) {
        GridShape g = grid_for((n + 3) / 4, cfg);
        map2_scalar_f32x4_kernel<false><<<g.blocks, g.threads>>>(b, a, out, n, f);
        cuda_sync_check(op);
        return;
      }
      if (unit_last_stride(va) && unit_last_stride(vb)) {
        const int64_t cols = va.shape[va.ndim - 1];
        if (rows_in_quads(a, va, cols) && rows_in_quads(b, vb, cols)) {
          const int64_t per_row = cols / 4, rows = n / cols;
          GridShape g = grid_for(rows * per_row, cfg);
          map2_rows_f32x4_kernel<<<g.blocks, g.threads>>>(a, leading_view(va), b, leading_view(vb),
                                                          reinterpret_cast<float4*>(out), rows, per_row, f);
          cuda_sync_check(op);
          return;
        }
      }
    }
  }
  GridShape g = grid_for(n, cfg);
  map2_kernel<<<g.blocks, g.threads>>>(a, va, b, vb, identity, out, n, f);
  cuda_sync_check(op);
}

using UnaryFn = void (*)(const void*, const StridedView&, void*, int64_t, const LaunchConfig&);
using BinaryFn = void (*)(const void*, const StridedView&, const void*, const StridedView&, void*,
                          int64_t, const LaunchConfig&);
constexpr int kBinaryOpCount = static_cast<int>(BinaryOp::count_);
constexpr int kCompareOpCount = static_cast<int>(CompareOp::count_);

template <int OP>
void unary_f32_one(const void* in, const StridedView& v, void* out, int64_t n, const LaunchConfig& cfg) {
  map1(static_cast<const float*>(in), v, static_cast<float*>(out), n, cfg, UnaryF32Fn<OP>(),
       unary_op_name(static_cast<UnaryOp>(OP)));
}
template <int OP, typename I, typename U>
void unary_int_one(const void* in, const StridedView& v, void* out, int64_t n, const LaunchConfig& cfg) {
  map1(static_cast<const I*>(in), v, static_cast<I*>(out), n, cfg, UnaryIntFn<OP, I, U>(),
       unary_op_name(static_cast<UnaryOp>(OP)));
}
template <int OP>
void binary_f32_one(const void* a, const StridedView& va, const void* b, const StridedView& vb,
                    void* out, int64_t n, const LaunchConfig& cfg) {
  map2(static_cast<const float*>(a), va, static_cast<const float*>(b), vb, static_cast<float*>(out),
       n, cfg, BinaryF32Fn<OP>(), binary_op_name(static_cast<BinaryOp>(OP)));
}
template <int OP, typename I, typename U>
void binary_int_one(const void* a, const StridedView& va, const void* b, const StridedView& vb,
                    void* out, int64_t n, const LaunchConfig& cfg) {
  map2(static_cast<const I*>(a), va, static_cast<const I*>(b), vb, static_cast<I*>(out), n, cfg,
       BinaryIntFn<OP, I, U>(), binary_op_name(static_cast<BinaryOp>(OP)));
}
template <int OP, typename T>
void compare_one(const void* a, const StridedView& va, const void* b, const StridedView& vb,
                 void* out, int64_t n, const LaunchConfig& cfg) {
  map2(static_cast<const T*>(a), va, static_cast<const T*>(b), vb, static_cast<uint8_t*>(out), n,
       cfg, CompareFn<OP, T>(), compare_op_name(static_cast<CompareOp>(OP)));
}

template <int... OPS>
std::array<UnaryFn, sizeof...(OPS)> unary_f32_table(std::integer_sequence<int, OPS...>) {
  return {&unary_f32_one<OPS>...};
}
template <typename I, typename U, int... OPS>
std::array<UnaryFn, sizeof...(OPS)> unary_int_table(std::integer_sequence<int, OPS...>) {
  return {&unary_int_one<OPS, I, U>...};
}
template <int... OPS>
std::array<BinaryFn, sizeof...(OPS)> binary_f32_table(std::integer_sequence<int, OPS...>) {
  return {&binary_f32_one<OPS>...};
}
template <typename I, typename U, int... OPS>
std::array<BinaryFn, sizeof...(OPS)> binary_int_table(std::integer_sequence<int, OPS...>) {
  return {&binary_int_one<OPS, I, U>...};
}
template <typename T, int... OPS>
std::array<BinaryFn, sizeof...(OPS)> compare_table(std::integer_sequence<int, OPS...>) {
  return {&compare_one<OPS, T>...};
}

template <typename From, typename To>
void cast_typed(const void* in, const StridedView& v, void* out, int64_t n, const LaunchConfig& cfg) {
  map1(static_cast<const From*>(in), v, static_cast<To*>(out), n, cfg, CastFn<From, To>(), "cast");
}
template <typename From>
void cast_from(DType to, const void* in, const StridedView& v, void* out, int64_t n,
               const LaunchConfig& cfg) {
  switch (to) {
    case DType::f32: cast_typed<From, float>(in, v, out, n, cfg); return;
    case DType::i32: cast_typed<From, int32_t>(in, v, out, n, cfg); return;
    case DType::i64: cast_typed<From, int64_t>(in, v, out, n, cfg); return;
    case DType::u8: cast_typed<From, uint8_t>(in, v, out, n, cfg); return;
    case DType::boolean:
      map1(static_cast<const From*>(in), v, static_cast<uint8_t*>(out), n, cfg, CastBoolFn<From>(),
           "cast");
      return;
  }
}

template <typename T>
void where_typed(const uint8_t* cond, const StridedView& vc, const void* a, const StridedView& va,
                 const void* b, const StridedView& vb, void* out, int64_t n, const LaunchConfig& cfg) {
  GridShape g = grid_for(n, cfg);
  map3_kernel<<<g.blocks, g.threads>>>(cond, vc, static_cast<const T*>(a), va,
                                       static_cast<const T*>(b), vb, static_cast<T*>(out), n,
                                       WhereFn<T>());
  cuda_sync_check("where");
}

// True when sv is a transposed read of a contiguous dst (see transpose_copy_kernel).
bool is_transposed_read(const StridedView& sv, const StridedView& dv) {
  const int nd = sv.ndim;
  return nd >= 2 && strided_is_identity(dv) && sv.strides[nd - 2] == 1 && sv.shape[nd - 2] > 1 &&
         sv.shape[nd - 1] > 1 && sv.strides[nd - 1] != 1;
}

template <typename T>
void strided_copy_typed(const void* src, const StridedView& sv, void* dst, const StridedView& dv,
                        int64_t n, const LaunchConfig& cfg) {
  if (is_transposed_read(sv, dv)) {
    const int nd = sv.ndim;
    StridedView batch_view;
    batch_view.ndim = nd - 2;
    int64_t batches = 1;
    for (int d = 0; d < nd - 2; ++d) {
      batch_view.shape[d] = sv.shape[d];
      batch_view.strides[d] = sv.strides[d];
      batches *= sv.shape[d];
    }
    const int64_t rows = sv.shape[nd - 2], cols = sv.shape[nd - 1];
    const int64_t col_stride = sv.strides[nd - 1];
    const T* s = static_cast<const T*>(src);
    T* d = static_cast<T*>(dst);
    auto tiles = [&](int64_t tile) { return batches * ((rows + tile - 1) / tile) * ((cols + tile - 1) / tile); };
    if (cfg.variant == 6) {
      transpose_copy_kernel<T, kTile, kTileRows><<<transpose_blocks(tiles(kTile), cfg), dim3(kTile, kTileRows)>>>(
          s, batch_view, col_stride, d, batches, rows, cols);
    } else if (cfg.variant != 7 && sizeof(T) == 4 &&
               transpose_quads_ok(src, batch_view, col_stride, dst, cols)) {
      transpose_copy_quads_kernel<<<transpose_blocks(tiles(kQuadTile), cfg), kQuadThreads>>>(
          reinterpret_cast<const uint32_t*>(s), batch_view, col_stride, reinterpret_cast<uint32_t*>(d),
          batches, rows, cols);
    } else {
      transpose_copy_kernel<T, 64, 4><<<transpose_blocks(tiles(64), cfg), dim3(64, 4)>>>(
          s, batch_view, col_stride, d, batches, rows, cols);
    }
    cuda_sync_check("copy");
    return;
  }
  const T* s = static_cast<const T*>(src);
  T* d = static_cast<T*>(dst);
  if (strided_is_identity(sv) && strided_is_identity(dv)) {  // one contiguous block
    if (sizeof(T) == 4 && n >= 4 && aligned16(src) && aligned16(dst)) {
      const int64_t n4 = n / 4;
      GridShape g = grid_for(n4, cfg);
      flat_copy_kernel<<<g.blocks, g.threads>>>(reinterpret_cast<const uint4*>(s), reinterpret_cast<uint4*>(d), n4);
      if (n4 * 4 < n) flat_copy_kernel<<<1, 32>>>(s + n4 * 4, d + n4 * 4, n - n4 * 4);
    } else {
      GridShape g = grid_for(n, cfg);
      flat_copy_kernel<<<g.blocks, g.threads>>>(s, d, n);
    }
    cuda_sync_check("copy");
    return;
  }
  if (unit_last_stride(sv) && unit_last_stride(dv)) {  // rows: slices, concatenation, permutes
    const int64_t cols = sv.shape[sv.ndim - 1], rows = n / cols;
    const StridedView sl = leading_view(sv), dl = leading_view(dv);
    if (sizeof(T) == 4 && rows_in_quads(src, sv, cols) && rows_in_quads(dst, dv, cols)) {
      GridShape g = grid_for(rows * (cols / 4), cfg);
      row_copy_kernel<T, uint4><<<g.blocks, g.threads>>>(s, sl, d, dl, rows, cols / 4);
    } else {
      GridShape g = grid_for(n, cfg);
      row_copy_kernel<T, T><<<g.blocks, g.threads>>>(s, sl, d, dl, rows, cols);
    }
    cuda_sync_check("copy");
    return;
  }
  GridShape g = grid_for(n, cfg);
  strided_copy_kernel<<<g.blocks, g.threads>>>(s, sv, d, dv, n);
  cuda_sync_check("copy");
}

}  // namespace

void unary_cuda(UnaryOp op, DType dtype, const void* in, const StridedView& v, void* out, int64_t n,
                const LaunchConfig& cfg) {
  static const auto f32 = unary_f32_table(std::make_integer_sequence<int, kUnaryOpCount>());
  static const auto i32 =
      unary_int_table<int32_t, uint32_t>(std::make_integer_sequence<int, kUnaryOpCount>());
  static const auto i64 =
      unary_int_table<int64_t, uint64_t>(std::make_integer_sequence<int, kUnaryOpCount>());
  int k = static_cast<int>(op);
  switch (dtype) {
    case DType::f32: f32[k](in, v, out, n, cfg); return;
    case DType::i32: i32[k](in, v, out, n, cfg); return;
    case DType::i64: i64[k](in, v, out, n, cfg); return;
    default: throw Error(detail::concat(unary_op_name(op), ": no CUDA kernel for ", dtype_name(dtype)));
  }
}

void binary_cuda(BinaryOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                 const StridedView& vb, void* out, int64_t n, const LaunchConfig& cfg) {
  static const auto f32 = binary_f32_table(std::make_integer_sequence<int, kBinaryOpCount>());
  static const auto i32 =
      binary_int_table<int32_t, uint32_t>(std::make_integer_sequence<int, kBinaryOpCount>());
  static const auto i64 =
      binary_int_table<int64_t, uint64_t>(std::make_integer_sequence<int, kBinaryOpCount>());
  int k = static_cast<int>(op);
  switch (dtype) {
    case DType::f32: f32[k](a, va, b, vb, out, n, cfg); return;
    case DType::i32: i32[k](a, va, b, vb, out, n, cfg); return;
    case DType::i64: i64[k](a, va, b, vb, out, n, cfg); return;
    default: throw Error(detail::concat(binary_op_name(op), ": no CUDA kernel for ", dtype_name(dtype)));
  }
}

void compare_cuda(CompareOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                  const StridedView& vb, uint8_t* out, int64_t n, const LaunchConfig& cfg) {
  static const auto f32 = compare_table<float>(std::make_integer_sequence<int, kCompareOpCount>());
  static const auto i32 = compare_table<int32_t>(std::make_integer_sequence<int, kCompareOpCount>());
  static const auto i64 = compare_table<int64_t>(std::make_integer_sequence<int, kCompareOpCount>());
  static const auto u8 = compare_table<uint8_t>(std::make_integer_sequence<int, kCompareOpCount>());
  int k = static_cast<int>(op);
  switch (dtype) {
    case DType::f32: f32[k](a, va, b, vb, out, n, cfg); return;
    case DType::i32: i32[k](a, va, b, vb, out, n, cfg); return;
    case DType::i64: i64[k](a, va, b, vb, out, n, cfg); return;
    case DType::u8:
    case DType::boolean: u8[k](a, va, b, vb, out, n, cfg); return;
  }
}

void where_cuda(size_t element_size, const uint8_t* cond, const StridedView& vc, const void* a,
                const StridedView& va, const void* b, const StridedView& vb, void* out, int64_t n,
                const LaunchConfig& cfg) {
  switch (element_size) {
    case 1: where_typed<uint8_t>(cond, vc, a, va, b, vb, out, n, cfg); return;
    case 4: where_typed<uint32_t>(cond, vc, a, va, b, vb, out, n, cfg); return;
    case 8: where_typed<uint64_t>(cond, vc, a, va, b, vb, out, n, cfg); return;
    default: throw Error("where: unsupported element size");
  }
}

void cast_cuda(DType from, DType to, const void* in, const StridedView& v, void* out, int64_t n,
               const LaunchConfig& cfg) {
  switch (from) {
    case DType::f32: cast_from<float>(to, in, v, out, n, cfg); return;
    case DType::i32: cast_from<int32_t>(to, in, v, out, n, cfg); return;
    case DType::i64: cast_from<int64_t>(to, in, v, out, n, cfg); return;
    case DType::u8:
    case DType::boolean: cast_from<uint8_t>(to, in, v, out, n, cfg); return;
  }
}

void strided_copy_cuda(size_t element_size, const void* src, const StridedView& sv, void* dst,
                       const StridedView& dv, int64_t n, const LaunchConfig& cfg) {
  switch (element_size) {
    case 1: strided_copy_typed<uint8_t>(src, sv, dst, dv, n, cfg); return;
    case 4: strided_copy_typed<uint32_t>(src, sv, dst, dv, n, cfg); return;
    case 8: strided_copy_typed<uint64_t>(src, sv, dst, dv, n, cfg); return;
    default: throw Error("copy: unsupported element size");
  }
}

}  // namespace bl
