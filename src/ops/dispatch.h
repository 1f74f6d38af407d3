// dispatch.h: the one dispatch point of every kernel.
//
// Each function takes the device its pointers live on, checks that the device can run work (and
// makes a CUDA device current), then calls the op's CPU body `<op>_cpu` (src/kernels/cpu/, on the
// op pool) or its CUDA body `<op>_cuda` (src/kernels/cuda/, with the op launch shape, see
// ScopedLaunchConfig in ops/op_util.h). A build without CUDA links src/kernels/no_cuda/ instead of
// the .cu files: its bodies throw "<op>: this build has no CUDA backend".
//
// Everything above the ops layer (autograd, nn, models, ml, verify, tools) reaches a kernel through
// these functions or through the Tensor ops built on them (include/bitlearn/ops*.h), never through
// `<op>_cpu` / `<op>_cuda` and never behind `#if BITLEARN_HAS_CUDA`. Arguments and results are
// those of the kernels' declarations in src/kernels/<op>.h, which also hold each op's reference.
#pragma once

#include <cstdint>

#include "bitlearn/tensor.h"
#include "kernels/adam.h"
#include "kernels/attention.h"
#include "kernels/attention_backward.h"
#include "kernels/backend.h"
#include "kernels/conv_direct.h"
#include "kernels/cumsum.h"
#include "kernels/exact_gemm.h"
#include "kernels/histogram.h"
#include "kernels/im2col.h"
#include "kernels/lstm_cell.h"
#include "kernels/math_map.h"
#include "kernels/matmul.h"
#include "kernels/norm.h"
#include "kernels/norm_backward.h"
#include "kernels/reduce.h"
#include "kernels/rng_fill.h"
#include "kernels/selective_scan.h"
#include "kernels/skinny_matmul.h"
#include "kernels/softmax.h"
#include "kernels/sort.h"
#include "kernels/tile_max.h"
#include "kernels/train_maps.h"

namespace bl::dispatch {

// Elementwise, copy and index kernels (kernels/backend.h).
void unary(Device d, UnaryOp op, DType dtype, const void* in, const StridedView& v, void* out, int64_t n);
void binary(Device d, BinaryOp op, DType dtype, const void* a, const StridedView& va, const void* b,
            const StridedView& vb, void* out, int64_t n);
void compare(Device d, CompareOp op, DType dtype, const void* a, const StridedView& va, const void* b,
             const StridedView& vb, uint8_t* out, int64_t n);
void where(Device d, size_t element_size, const uint8_t* cond, const StridedView& vc, const void* a,
           const StridedView& va, const void* b, const StridedView& vb, void* out, int64_t n);
void cast(Device d, DType from, DType to, const void* in, const StridedView& v, void* out, int64_t n);
void strided_copy(Device d, size_t element_size, const void* src, const StridedView& sv, void* dst,
                  const StridedView& dv, int64_t n);
// The index kernels return the row-major position of the first bad index, or -1.
int64_t index_select(Device d, size_t element_size, DType index_dtype, const void* x, int64_t outer,
                     int64_t extent, int64_t inner, const void* index, int64_t count, void* out);
int64_t gather(Device d, size_t element_size, DType index_dtype, const void* x, const StridedView& x_view,
               int64_t dim_stride, int64_t extent, const void* index, const StridedView& index_view,
               void* out, int64_t n);
int64_t scatter(Device d, size_t element_size, DType index_dtype, void* out, const StridedView& out_lines,
                int64_t out_dim_stride, int64_t extent, const void* index, const StridedView& index_lines,
                int64_t index_dim_stride, const void* src, const StridedView& src_lines,
                int64_t src_dim_stride, int64_t count, int64_t n_lines);
int64_t embedding_backward(Device d, DType index_dtype, const float* grad, const void* ids, int64_t n,
                           int64_t width, int64_t rows, float* out);

// Contract math functions over n floats (kernels/math_map.h); the second form is pow(x, y).
void math_map(Device d, MathFn fn, const float* x, float* out, int64_t n);
void math_map(Device d, MathFn fn, const float* x, const float* y, float* out, int64_t n);

// Reductions, row ops, scans and sorts (kernels/reduce.h, softmax.h, norm.h, cumsum.h, sort.h).
void reduce(Device d, ReduceOp op, const float* x, ReduceShape shape, float* out, int64_t ddof);
void arg_reduce(Device d, ArgReduceOp op, const float* x, ReduceShape shape, int64_t* out);
void softmax(Device d, const float* x, int64_t rows, int64_t n, float* y, bool log_form);
void layer_norm(Device d, const float* x, int64_t rows, int64_t n, const float* gamma, const float* beta,
                float eps, float* y, float* mean_out, float* rstd_out);
void rms_norm(Device d, const float* x, int64_t rows, int64_t n, const float* gamma, float eps, float* y,
              float* rstd_out);
void cumsum(Device d, const float* x, ReduceShape shape, float* y);
void sort(Device d, const float* x, int64_t rows, int64_t n, bool descending, float* values, int64_t* indices);
void topk(Device d, const float* x, int64_t rows, int64_t n, int64_t k, float* values, int64_t* indices);

// Matrix products (kernels/matmul.h, skinny_matmul.h) and attention (kernels/attention.h). matmul and
// skinny_matmul run the exact-integer product (kernels/exact_gemm.h) when the process's GEMM profile
// is `exact` (include/bitlearn/ops_matmul.h); exact_matmul runs it whatever the profile.
void exact_matmul(Device d, const MatmulArgs& args, const float* a, const float* b, float* c);
void matmul(Device d, const MatmulArgs& args, const float* a, const float* b, float* c);
// The product with bias[n] added to every row as it is stored: the bits of matmul then add.
// CUDA only (the CPU composes matmul and add); on the CPU it throws a named error.
void matmul_bias(Device d, const MatmulArgs& args, const float* a, const float* b, const float* bias, float* c);
void skinny_matmul(Device d, const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);
void attention(Device d, const AttentionArgs& args, const float* q, const float* k, const float* v,
               const int64_t* q_pos, const int64_t* kv_len, float* out);
void attention_backward(Device d, const AttentionBackwardArgs& args, const float* s, const float* dp, float* p,
                        float* ds);

// Fused pieces of the decoder's training pass (kernels/norm_backward.h, train_maps.h).
void norm_backward(Device d, const NormBackwardArgs& args, const float* x, const float* g, const float* w, float* dx,
                   float* gx);
void rope(Device d, const RopeArgs& args, const float* x, const float* cos, const float* sin, float* y);
void train_map(Device d, TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
               float* out1);

// Stride-1 convolution products straight from the padded input (kernels/conv_direct.h): the GEMM
// chains of im2col + matmul without the patch matrix. CPU only (conv_direct_lanes is 0 on CUDA and
// on CPU variants without them; the caller then runs im2col + matmul).
int64_t conv_direct_lanes(Device d);
void conv_direct_forward(Device d, const ConvDirectArgs& args, const float* wt, float* y);
void conv_direct_weight_grad(Device d, const ConvDirectArgs& args, const float* g, float* dw);

// Layer kernels (kernels/im2col.h, tile_max.h, lstm_cell.h, selective_scan.h).
void im2col(Device d, const float* x, const Im2colShape& s, float pad_value, float* out);
void tile_max(Device d, const float* x, TileMaxShape s, float* y, int32_t* arg);
void tile_max_backward(Device d, const float* g, const int32_t* arg, TileMaxShape s, float* dx);
void lstm_cell_forward(Device d, const LstmCellForward& a);
void lstm_cell_backward(Device d, const LstmCellBackward& a);
void selective_scan(Device d, const ScanArgs& a);

// Boosting histogram of quantized gradients (kernels/histogram.h).
void histogram(Device d, const uint8_t* bins, int64_t features, const int32_t* rows, int64_t n_rows,
               const int64_t* gq, const int64_t* hq, int64_t* hist);

// One Adam / AdamW step of n elements (kernels/adam.h).
void adam_update(Device d, const AdamScalars& s, const float* p, const float* m, const float* v, const float* g,
                 float* p_out, float* m_out, float* v_out, int64_t n);

// Contract random streams (kernels/rng_fill.h): out[i] = rng_fill_element(kind, seed, stream, i, a, b).
void rng_fill(Device d, RngKind kind, uint64_t seed, uint64_t stream, float a, float b, float* out, int64_t n);

}  // namespace bl::dispatch
