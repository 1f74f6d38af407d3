// dispatch.cpp: the one dispatch point of every kernel (ops/dispatch.h). Each op names itself once
// (in errors); `run` picks the backend from the device and nothing else.
#include "ops/dispatch.h"

#include <chrono>
#include <initializer_list>
#include <string>
#include <utility>

#include "core/allocator.h"
#include "bitlearn/ops_matmul.h"
#include "core/error.h"
#include "ops/op_profile.h"
#include "ops/op_util.h"

namespace bl::dispatch {
namespace {

// Calls cpu_body(pool) or cuda_body(launch config), by d.
template <class CpuBody, class CudaBody>
auto call(Device d, CpuBody&& cpu_body, CudaBody&& cuda_body) {
  if (d.is_cuda()) return std::forward<CudaBody>(cuda_body)(op_launch_config());
  return std::forward<CpuBody>(cpu_body)(op_pool());
}

// Times one call for BITLEARN_OP_PROFILE (op_profile.h): waits before and after.
template <class Body>
auto timed(Device d, const std::string& name, Body&& body) {
  op_profile::wait(d);
  const auto t0 = std::chrono::steady_clock::now();
  struct Stop {
    Device d;
    const std::string& name;
    std::chrono::steady_clock::time_point t0;
    ~Stop() {
      try {
        op_profile::wait(d);
      } catch (...) {
        return;  // the op's own error (if any) is on its way; a destructor must not throw
      }
      op_profile::add(name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  } stop{d, name, t0};
  return body();
}

// Checks that d can run op, then calls cpu_body(pool) or cuda_body(launch config). `detail`
// (shape words) only labels the op in the profile.
template <class CpuBody, class CudaBody>
auto run(Device d, const char* op, CpuBody&& cpu_body, CudaBody&& cuda_body, const std::string& detail = "") {
  use_device(d, op);
  if (op_profile::enabled()) {
    const std::string name = detail.empty() ? std::string(op) : std::string(op) + " " + detail;
    return timed(d, name, [&] { return call(d, cpu_body, cuda_body); });
  }
  return call(d, std::forward<CpuBody>(cpu_body), std::forward<CudaBody>(cuda_body));
}

std::string matmul_detail(const MatmulArgs& a) {
  if (!op_profile::enabled()) return std::string();
  return std::to_string(a.batch) + "x" + std::to_string(a.m) + "x" + std::to_string(a.n) + "x" + std::to_string(a.k) +
         (a.trans_a ? " tA" : "") + (a.trans_b ? " tB" : "");
}

// "shape/strides" of a view, e.g. "48x256x64/131072,64,1", for the profile's labels.
std::string view_words(const StridedView& v) {
  std::string shape, strides;
  for (int d = 0; d < v.ndim; ++d) {
    shape += (d ? "x" : "") + std::to_string(v.shape[d]);
    strides += (d ? "," : "") + std::to_string(v.strides[d]);
  }
  return shape + "/" + strides;
}

std::string views_detail(std::initializer_list<const StridedView*> views) {
  if (!op_profile::enabled()) return std::string();
  std::string out;
  for (const StridedView* v : views) out += (out.empty() ? "" : " ") + view_words(*v);
  return out;
}

}  // namespace

void unary(Device d, UnaryOp op, DType dtype, const void* in, const StridedView& v, void* out, int64_t n) {
  run(d, unary_op_name(op),
      [&](ThreadPool& p) { unary_cpu(op, dtype, in, v, out, n, p); },
      [&](const LaunchConfig& c) { unary_cuda(op, dtype, in, v, out, n, c); });
}

void binary(Device d, BinaryOp op, DType dtype, const void* a, const StridedView& va, const void* b,
            const StridedView& vb, void* out, int64_t n) {
  run(d, binary_op_name(op),
      [&](ThreadPool& p) { binary_cpu(op, dtype, a, va, b, vb, out, n, p); },
      [&](const LaunchConfig& c) { binary_cuda(op, dtype, a, va, b, vb, out, n, c); }, views_detail({&va, &vb}));
}

void compare(Device d, CompareOp op, DType dtype, const void* a, const StridedView& va, const void* b,
             const StridedView& vb, uint8_t* out, int64_t n) {
  run(d, compare_op_name(op),
      [&](ThreadPool& p) { compare_cpu(op, dtype, a, va, b, vb, out, n, p); },
      [&](const LaunchConfig& c) { compare_cuda(op, dtype, a, va, b, vb, out, n, c); });
}

void where(Device d, size_t element_size, const uint8_t* cond, const StridedView& vc, const void* a,
           const StridedView& va, const void* b, const StridedView& vb, void* out, int64_t n) {
  run(d, "where",
      [&](ThreadPool& p) { where_cpu(element_size, cond, vc, a, va, b, vb, out, n, p); },
      [&](const LaunchConfig& c) { where_cuda(element_size, cond, vc, a, va, b, vb, out, n, c); });
}

void cast(Device d, DType from, DType to, const void* in, const StridedView& v, void* out, int64_t n) {
  run(d, "cast",
      [&](ThreadPool& p) { cast_cpu(from, to, in, v, out, n, p); },
      [&](const LaunchConfig& c) { cast_cuda(from, to, in, v, out, n, c); });
}

void strided_copy(Device d, size_t element_size, const void* src, const StridedView& sv, void* dst,
                  const StridedView& dv, int64_t n) {
  run(d, "copy",
      [&](ThreadPool& p) { strided_copy_cpu(element_size, src, sv, dst, dv, n, p); },
      [&](const LaunchConfig& c) { strided_copy_cuda(element_size, src, sv, dst, dv, n, c); },
      views_detail({&sv, &dv}));
}

int64_t index_select(Device d, size_t element_size, DType index_dtype, const void* x, int64_t outer,
                     int64_t extent, int64_t inner, const void* index, int64_t count, void* out) {
  return run(
      d, "index_select",
      [&](ThreadPool& p) { return index_select_cpu(element_size, index_dtype, x, outer, extent, inner, index,
                                                   count, out, p); },
      [&](const LaunchConfig& c) { return index_select_cuda(element_size, index_dtype, x, outer, extent,
                                                            inner, index, count, out, c); });
}

int64_t gather(Device d, size_t element_size, DType index_dtype, const void* x, const StridedView& x_view,
               int64_t dim_stride, int64_t extent, const void* index, const StridedView& index_view,
               void* out, int64_t n) {
  return run(
      d, "gather",
      [&](ThreadPool& p) { return gather_cpu(element_size, index_dtype, x, x_view, dim_stride, extent, index,
                                             index_view, out, n, p); },
      [&](const LaunchConfig& c) { return gather_cuda(element_size, index_dtype, x, x_view, dim_stride,
                                                      extent, index, index_view, out, n, c); });
}

int64_t scatter(Device d, size_t element_size, DType index_dtype, void* out, const StridedView& out_lines,
                int64_t out_dim_stride, int64_t extent, const void* index, const StridedView& index_lines,
                int64_t index_dim_stride, const void* src, const StridedView& src_lines,
                int64_t src_dim_stride, int64_t count, int64_t n_lines) {
  return run(
      d, "scatter",
      [&](ThreadPool& p) {
        return scatter_cpu(element_size, index_dtype, out, out_lines, out_dim_stride, extent, index,
                           index_lines,
                           index_dim_stride, src, src_lines, src_dim_stride, count, n_lines, p);
      },
      [&](const LaunchConfig& c) {
        return scatter_cuda(element_size, index_dtype, out, out_lines, out_dim_stride, extent, index,
                            index_lines,
                            index_dim_stride, src, src_lines, src_dim_stride, count, n_lines, c);
      });
}

int64_t embedding_backward(Device d, DType index_dtype, const float* grad, const void* ids, int64_t n,
                           int64_t width, int64_t rows, float* out) {
  return run(
      d, "embedding_backward",
      [&](ThreadPool& p) { return embedding_backward_cpu(index_dtype, grad, ids, n, width, rows, out, p); },
      [&](const LaunchConfig& c) { return embedding_backward_cuda(index_dtype, grad, ids, n, width, rows, out,
                                                                  c); });
}

void math_map(Device d, MathFn fn, const float* x, float* out, int64_t n) {
  run(d, math_fn_name(fn),
      [&](ThreadPool& p) { math_map_cpu(fn, x, out, n, p); },
      [&](const LaunchConfig& c) { math_map_cuda(fn, x, out, n, c); });
}

void math_map(Device d, MathFn fn, const float* x, const float* y, float* out, int64_t n) {
  run(d, math_fn_name(fn),
      [&](ThreadPool& p) { math_map_cpu(fn, x, y, out, n, p); },
      [&](const LaunchConfig& c) { math_map_cuda(fn, x, y, out, n, c); });
}

void reduce(Device d, ReduceOp op, const float* x, ReduceShape shape, float* out, int64_t ddof) {
  run(d, reduce_op_name(op),
      [&](ThreadPool& p) { reduce_cpu(op, x, shape, out, ddof, p); },
      [&](const LaunchConfig& c) { reduce_cuda(op, x, shape, out, ddof, c); });
}

void arg_reduce(Device d, ArgReduceOp op, const float* x, ReduceShape shape, int64_t* out) {
  run(d, op == ArgReduceOp::argmax ? "argmax" : "argmin",
      [&](ThreadPool& p) { arg_reduce_cpu(op, x, shape, out, p); },
      [&](const LaunchConfig& c) { arg_reduce_cuda(op, x, shape, out, c); });
}

void softmax(Device d, const float* x, int64_t rows, int64_t n, float* y, bool log_form) {
  run(d, log_form ? "log_softmax" : "softmax",
      [&](ThreadPool& p) { softmax_cpu(x, rows, n, y, log_form, p); },
      [&](const LaunchConfig& c) { softmax_cuda(x, rows, n, y, log_form, c); });
}

void layer_norm(Device d, const float* x, int64_t rows, int64_t n, const float* gamma, const float* beta,
                float eps, float* y, float* mean_out, float* rstd_out) {
  run(d, "layer_norm",
      [&](ThreadPool& p) { layer_norm_cpu(x, rows, n, gamma, beta, eps, y, mean_out, rstd_out, p); },
      [&](const LaunchConfig& c) { layer_norm_cuda(x, rows, n, gamma, beta, eps, y, mean_out, rstd_out,
                                                   c); });
}

void rms_norm(Device d, const float* x, int64_t rows, int64_t n, const float* gamma, float eps, float* y,
              float* rstd_out) {
  run(d, "rms_norm",
      [&](ThreadPool& p) { rms_norm_cpu(x, rows, n, gamma, eps, y, rstd_out, p); },
      [&](const LaunchConfig& c) { rms_norm_cuda(x, rows, n, gamma, eps, y, rstd_out, c); });
}

void cumsum(Device d, const float* x, ReduceShape shape, float* y) {
  run(d, "cumsum",
      [&](ThreadPool& p) { cumsum_cpu(x, shape, y, p); },
      [&](const LaunchConfig& c) { cumsum_cuda(x, shape, y, c); });
}

void sort(Device d, const float* x, int64_t rows, int64_t n, bool descending, float* values, int64_t* indices) {
  run(d, "sort",
      [&](ThreadPool& p) { sort_cpu(x, rows, n, descending, values, indices, p); },
      [&](const LaunchConfig& c) { sort_cuda(x, rows, n, descending, values, indices, c); });
}

void topk(Device d, const float* x, int64_t rows, int64_t n, int64_t k, float* values, int64_t* indices) {
  run(d, "topk",
      [&](ThreadPool& p) { topk_cpu(x, rows, n, k, values, indices, p); },
      [&](const LaunchConfig& c) { topk_cuda(x, rows, n, k, values, indices, c); });
}

// The exact-integer profile (kernels/exact_gemm.h): every product of the process when selected.
void exact_matmul(Device d, const MatmulArgs& args, const float* a, const float* b, float* c) {
  run(d, "exact_matmul",
      [&](ThreadPool& p) { exact_matmul_cpu(args, a, b, c, &p); },
      [&](const LaunchConfig& cfg) { exact_matmul_cuda(args, a, b, c, cfg); }, matmul_detail(args));
}

void matmul(Device d, const MatmulArgs& args, const float* a, const float* b, float* c) {
  if (gemm_profile() == GemmProfile::exact) return exact_matmul(d, args, a, b, c);
  run(d, "matmul",
      [&](ThreadPool& p) { matmul_cpu(args, a, b, c, &p); },
      [&](const LaunchConfig& cfg) { matmul_cuda(args, a, b, c, cfg); }, matmul_detail(args));
}

void matmul_bias(Device d, const MatmulArgs& args, const float* a, const float* b, const float* bias, float* c) {
  BL_CHECK(gemm_profile() == GemmProfile::contract,
           "matmul_bias: the fused bias product is the contract profile's (callers use matmul, then add)");
  run(d, "matmul_bias",
      [&](ThreadPool&) { throw Error("matmul_bias: no CPU backend (the CPU runs matmul, then add)"); },
      [&](const LaunchConfig& cfg) { matmul_bias_cuda(args, a, b, bias, c, cfg); });
}

void skinny_matmul(Device d, const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  if (gemm_profile() == GemmProfile::exact) return exact_matmul(d, matmul_dense_args(1, m, n, k), a, b, c);
  run(d, "skinny_matmul",
      [&](ThreadPool& p) { skinny_matmul_cpu(a, b, c, m, n, k, p); },
      [&](const LaunchConfig& cfg) { skinny_matmul_cuda(a, b, c, m, n, k, cfg); });
}

void attention(Device d, const AttentionArgs& args, const float* q, const float* k, const float* v,
               const int64_t* q_pos, const int64_t* kv_len, float* out) {
  run(d, "causal_attention",
      [&](ThreadPool& p) { attention_cpu(args, q, k, v, q_pos, kv_len, out, p); },
      [&](const LaunchConfig& c) { attention_cuda(args, q, k, v, q_pos, kv_len, out, c); });
}

void adam_update(Device d, const AdamScalars& s, const float* p, const float* m, const float* v, const float* g,
                 float* p_out, float* m_out, float* v_out, int64_t n) {
  run(d, "adam_update",
      [&](ThreadPool& pool) { adam_cpu(s, p, m, v, g, p_out, m_out, v_out, n, pool); },
      [&](const LaunchConfig& c) { adam_cuda(s, p, m, v, g, p_out, m_out, v_out, n, c); });
}

void attention_backward(Device d, const AttentionBackwardArgs& args, const float* s, const float* dp, float* p,
                        float* ds) {
  run(d, "attention_backward",
      [&](ThreadPool& pool) { attention_backward_cpu(args, s, dp, p, ds, pool); },
      [&](const LaunchConfig& c) { attention_backward_cuda(args, s, dp, p, ds, c); });
}

void norm_backward(Device d, const NormBackwardArgs& args, const float* x, const float* g, const float* w, float* dx,
                   float* gx) {
  run(d, "norm_backward",
      [&](ThreadPool& pool) { norm_backward_cpu(args, x, g, w, dx, gx, pool); },
      [&](const LaunchConfig& c) { norm_backward_cuda(args, x, g, w, dx, gx, c); });
}

void rope(Device d, const RopeArgs& args, const float* x, const float* cos, const float* sin, float* y) {
  run(d, args.backward ? "rope_backward" : "rope",
      [&](ThreadPool& pool) { rope_cpu(args, x, cos, sin, y, pool); },
      [&](const LaunchConfig& c) { rope_cuda(args, x, cos, sin, y, c); });
}

void train_map(Device d, TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
               float* out1) {
  static const char* const names[] = {"swiglu", "swiglu_backward", "gelu_tanh_backward"};
  run(d, names[static_cast<int>(op)],
      [&](ThreadPool& pool) { train_map_cpu(op, n, in0, in1, in2, out0, out1, pool); },
      [&](const LaunchConfig& c) { train_map_cuda(op, n, in0, in1, in2, out0, out1, c); });
}

int64_t conv_direct_lanes(Device d) { return d.is_cpu() ? bl::conv_direct_lanes() : 0; }

void conv_direct_forward(Device d, const ConvDirectArgs& args, const float* wt, float* y) {
  run(d, "conv_direct_forward",
      [&](ThreadPool& p) { bl::conv_direct_forward(args, wt, y, p); },
      [&](const LaunchConfig&) { throw Error("conv_direct_forward: no CUDA backend (CUDA runs im2col, then matmul)"); });
}

void conv_direct_weight_grad(Device d, const ConvDirectArgs& args, const float* g, float* dw) {
  run(d, "conv_direct_weight_grad",
      [&](ThreadPool& p) { bl::conv_direct_weight_grad(args, g, dw, p); },
      [&](const LaunchConfig&) { throw Error("conv_direct_weight_grad: no CUDA backend (CUDA runs im2col, then matmul)"); });
}

void im2col(Device d, const float* x, const Im2colShape& s, float pad_value, float* out) {
  run(d, "im2col",
      [&](ThreadPool& p) { im2col_cpu(x, s, pad_value, out, p); },
      [&](const LaunchConfig& c) { im2col_cuda(x, s, pad_value, out, c); });
}

void tile_max(Device d, const float* x, TileMaxShape s, float* y, int32_t* arg) {
  run(d, "max_pool",
      [&](ThreadPool& p) { tile_max_cpu(x, s, y, arg, p); },
      [&](const LaunchConfig& c) { tile_max_cuda(x, s, y, arg, c); });
}

void tile_max_backward(Device d, const float* g, const int32_t* arg, TileMaxShape s, float* dx) {
  run(d, "max_pool_backward",
      [&](ThreadPool& p) { tile_max_backward_cpu(g, arg, s, dx, p); },
      [&](const LaunchConfig& c) { tile_max_backward_cuda(g, arg, s, dx, c); });
}

void lstm_cell_forward(Device d, const LstmCellForward& a) {
  run(d, "lstm_cell",
      [&](ThreadPool& p) { lstm_cell_forward_cpu(a, p); },
      [&](const LaunchConfig& c) { lstm_cell_forward_cuda(a, c); });
}

void lstm_cell_backward(Device d, const LstmCellBackward& a) {
  run(d, "lstm_cell_backward",
      [&](ThreadPool& p) { lstm_cell_backward_cpu(a, p); },
      [&](const LaunchConfig& c) { lstm_cell_backward_cuda(a, c); });
}

void selective_scan(Device d, const ScanArgs& a) {
  run(d, "selective_scan",
      [&](ThreadPool& p) { selective_scan_cpu(a, p); },
      [&](const LaunchConfig& c) { selective_scan_cuda(a, c); });
}

void histogram(Device d, const uint8_t* bins, int64_t features, const int32_t* rows, int64_t n_rows,
               const int64_t* gq, const int64_t* hq, int64_t* hist) {
  run(d, "histogram",
      [&](ThreadPool& p) { histogram_cpu(bins, features, rows, n_rows, gq, hq, hist, p); },
      [&](const LaunchConfig& c) { histogram_cuda(bins, features, rows, n_rows, gq, hq, hist, c); });
}

void rng_fill(Device d, RngKind kind, uint64_t seed, uint64_t stream, float a, float b, float* out, int64_t n) {
  run(d, "rng_fill",
      [&](ThreadPool& p) { rng_fill_cpu(kind, seed, stream, a, b, out, n, p); },
      [&](const LaunchConfig& c) { rng_fill_cuda(kind, seed, stream, a, b, out, n, c); });
}

}  // namespace bl::dispatch
