// backend.h: the type-erased entry points of the elementwise, copy and index kernels, one set per
// backend (`<op>_cpu` in src/kernels/cpu/, `<op>_cuda` in src/kernels/cuda/, stubs in
// src/kernels/no_cuda/). The Tensor ops (src/ops/) validate operands, build StridedViews and call
// these through ops/dispatch.h; pointers are on the backend's device.
//
// Element types are passed as DType; copies and index ops only need the element size. Index
// kernels return the row-major position of the first bad index, or -1 when every index is valid.
#pragma once

#include <cstdint>

#include "bitlearn/tensor.h"
#include "kernels/binary.h"
#include "kernels/launch.h"
#include "kernels/strided.h"
#include "kernels/unary.h"

namespace bl {

class ThreadPool;

// Elements per CPU task: a constant, so the partition depends on the problem size only.
constexpr int64_t kCpuElementwiseChunk = int64_t(1) << 16;

void unary_cpu(UnaryOp op, DType dtype, const void* in, const StridedView& v, void* out, int64_t n,
               ThreadPool& pool);
void binary_cpu(BinaryOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                const StridedView& vb, void* out, int64_t n, ThreadPool& pool);
void compare_cpu(CompareOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                 const StridedView& vb, uint8_t* out, int64_t n, ThreadPool& pool);
void where_cpu(size_t element_size, const uint8_t* cond, const StridedView& vc, const void* a,
               const StridedView& va, const void* b, const StridedView& vb, void* out, int64_t n,
               ThreadPool& pool);
void cast_cpu(DType from, DType to, const void* in, const StridedView& v, void* out, int64_t n,
              ThreadPool& pool);
// dst[offset(dv, i)] = src[offset(sv, i)].
void strided_copy_cpu(size_t element_size, const void* src, const StridedView& sv, void* dst,
                      const StridedView& dv, int64_t n, ThreadPool& pool);
int64_t index_select_cpu(size_t element_size, DType index_dtype, const void* x, int64_t outer,
                         int64_t extent, int64_t inner, const void* index, int64_t count, void* out,
                         ThreadPool& pool);
int64_t gather_cpu(size_t element_size, DType index_dtype, const void* x, const StridedView& x_view,
                   int64_t dim_stride, int64_t extent, const void* index, const StridedView& index_view,
                   void* out, int64_t n, ThreadPool& pool);
// Lines: line views have index's shape without dim; along dim, count entries at the given strides.
int64_t scatter_cpu(size_t element_size, DType index_dtype, void* out, const StridedView& out_lines,
                    int64_t out_dim_stride, int64_t extent, const void* index,
                    const StridedView& index_lines, int64_t index_dim_stride, const void* src,
                    const StridedView& src_lines, int64_t src_dim_stride, int64_t count,
                    int64_t n_lines, ThreadPool& pool);
int64_t embedding_backward_cpu(DType index_dtype, const float* grad, const void* ids, int64_t n,
                               int64_t width, int64_t rows, float* out, ThreadPool& pool);

void unary_cuda(UnaryOp op, DType dtype, const void* in, const StridedView& v, void* out, int64_t n,
                const LaunchConfig& cfg);
void binary_cuda(BinaryOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                 const StridedView& vb, void* out, int64_t n, const LaunchConfig& cfg);
void compare_cuda(CompareOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                  const StridedView& vb, uint8_t* out, int64_t n, const LaunchConfig& cfg);
void where_cuda(size_t element_size, const uint8_t* cond, const StridedView& vc, const void* a,
                const StridedView& va, const void* b, const StridedView& vb, void* out, int64_t n,
                const LaunchConfig& cfg);
void cast_cuda(DType from, DType to, const void* in, const StridedView& v, void* out, int64_t n,
               const LaunchConfig& cfg);
void strided_copy_cuda(size_t element_size, const void* src, const StridedView& sv, void* dst,
                       const StridedView& dv, int64_t n, const LaunchConfig& cfg);
int64_t index_select_cuda(size_t element_size, DType index_dtype, const void* x, int64_t outer,
                          int64_t extent, int64_t inner, const void* index, int64_t count, void* out,
                          const LaunchConfig& cfg);
int64_t gather_cuda(size_t element_size, DType index_dtype, const void* x, const StridedView& x_view,
                    int64_t dim_stride, int64_t extent, const void* index, const StridedView& index_view,
                    void* out, int64_t n, const LaunchConfig& cfg);
int64_t scatter_cuda(size_t element_size, DType index_dtype, void* out, const StridedView& out_lines,
                     int64_t out_dim_stride, int64_t extent, const void* index,
                     const StridedView& index_lines, int64_t index_dim_stride, const void* src,
                     const StridedView& src_lines, int64_t src_dim_stride, int64_t count,
                     int64_t n_lines, const LaunchConfig& cfg);
// ids and grad on the device; the grouping of positions by row is built on the host.
int64_t embedding_backward_cuda(DType index_dtype, const float* grad, const void* ids, int64_t n,
                                int64_t width, int64_t rows, float* out, const LaunchConfig& cfg);


}  // namespace bl
