// matmul_ops.cpp: Tensor-level matmul and bmm: operand checks, strided views mapped onto the raw
// GEMM's (pointer, leading dimension, transpose) form, then the CPU or CUDA kernel.
#include <algorithm>

#include "bitlearn/ops_matmul.h"
#include "core/allocator.h"
#include "core/error.h"
#include "kernels/matmul.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl {
namespace {

// One operand as the raw GEMM sees it.
struct GemmOperand {
  Tensor keep;  // holds the storage (a contiguous copy when the view could not be used in place)
  const float* ptr = nullptr;
  int64_t ld = 0;
  bool trans = false;
  int64_t batch_stride = 0;
};

void check_operand(const Tensor& t, int64_t ndim, const char* op, const char* name) {
  check_defined(t, op, name);
  BL_CHECK(t.dtype() == DType::f32, op, ": operand ", name, " has dtype ", dtype_name(t.dtype()),
           "; expected f32");
  BL_CHECK(t.ndim() == ndim, op, ": operand ", name, " must be ", ndim, "-d, got ", t.str());
  check_device_usable(t.device(), op);
}

// The last two dimensions of t as a row-major matrix: in place when one axis has unit stride
// (the other then gives the leading dimension; a unit-stride row axis means t is a transposed
// view, which flips the transpose flag), else through a contiguous copy.
GemmOperand as_gemm_operand(const Tensor& t, bool trans) {
  const int64_t nd = t.ndim();
  const int64_t rows = t.shape()[nd - 2], cols = t.shape()[nd - 1];
  const int64_t sr = t.strides()[nd - 2], sc = t.strides()[nd - 1];
  GemmOperand g;
  g.keep = t;
  g.trans = trans;
  if ((sc == 1 || cols <= 1) && (rows <= 1 || sr >= cols)) {
    g.ld = rows <= 1 ? cols : sr;
  } else if ((sr == 1 || rows <= 1) && (cols <= 1 || sc >= rows)) {
    g.ld = cols <= 1 ? rows : sc;  // stored as the transpose
    g.trans = !trans;
  } else {
    g.keep = t.contiguous();
    g.ld = cols;
  }
  g.ld = std::max<int64_t>(g.ld, 1);
  if (nd == 3) g.batch_stride = t.shape()[0] == 1 ? 0 : g.keep.strides()[0];
  g.ptr = static_cast<const float*>(g.keep.raw_data());
  return g;
}

Tensor gemm(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, int64_t ndim,
            const char* op) {
  check_operand(a, ndim, op, "a");
  check_operand(b, ndim, op, "b");
  check_same_device(a, b, op, "a", "b");
  const int64_t nd = ndim;
  const int64_t m = trans_a ? a.shape()[nd - 1] : a.shape()[nd - 2];
  const int64_t ka = trans_a ? a.shape()[nd - 2] : a.shape()[nd - 1];
  const int64_t kb = trans_b ? b.shape()[nd - 1] : b.shape()[nd - 2];
  const int64_t n = trans_b ? b.shape()[nd - 2] : b.shape()[nd - 1];
  BL_CHECK(ka == kb, op, ": inner sizes differ: op(a) is [", m, ", ", ka, "] (a ", a.str(),
           trans_a ? ", transposed" : "", ") but op(b) is [", kb, ", ", n, "] (b ", b.str(),
           trans_b ? ", transposed" : "", ")");
  int64_t batch = 1;
  if (nd == 3) {
    const int64_t ba = a.shape()[0], bb = b.shape()[0];
    BL_CHECK(ba == bb || ba == 1 || bb == 1, op, ": batch sizes differ: a ", a.str(), ", b ",
             b.str(), " (equal, or 1 to broadcast)");
    batch = std::max(ba, bb);
  }
  Shape out_shape = nd == 3 ? Shape{batch, m, n} : Shape{m, n};
  Tensor out = Tensor::empty(out_shape, DType::f32, a.device());

  GemmOperand ga = as_gemm_operand(a, trans_a);
  GemmOperand gb = as_gemm_operand(b, trans_b);
  // A dense C; the operands keep their own pitches and batch strides (0 where broadcast).
  MatmulArgs args = matmul_dense_args(batch, m, n, ka, ga.trans, gb.trans);
  args.lda = ga.ld;
  args.ldb = gb.ld;
  args.stride_a = ga.batch_stride;
  args.stride_b = gb.batch_stride;
  float* c = static_cast<float*>(out.raw_data());
  dispatch::matmul(a.device(), args, ga.ptr, gb.ptr, c);
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
  return gemm(a, b, trans_a, trans_b, 2, "matmul");
}

Tensor bmm(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
  return gemm(a, b, trans_a, trans_b, 3, "bmm");
}

}  // namespace bl
