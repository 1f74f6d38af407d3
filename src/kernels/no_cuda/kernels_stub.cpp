// kernels_stub.cpp: the CUDA entry points of src/kernels/ in a build without CUDA (CMakeLists.txt
// compiles src/**/no_cuda/*.cpp instead of src/**/*.cu). Every one throws "<op>: this build has no
// CUDA backend"; ops reach them only through ops/dispatch.cpp, which checks the device first.
#include "kernels/adam.h"
#include "kernels/attention.h"
#include "kernels/attention_backward.h"
#include "kernels/backend.h"
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
#include "core/error.h"

namespace bl {
namespace {

[[noreturn]] void no_cuda(const char* op) {
  throw Error(detail::concat(op, ": this build has no CUDA backend"));
}

}  // namespace

void attention_cuda(const AttentionArgs&, const float*, const float*, const float*, const int64_t*, const int64_t*, float*, const LaunchConfig&) { no_cuda("attention"); }
void adam_cuda(const AdamScalars&, const float*, const float*, const float*, const float*, float*, float*, float*, int64_t, const LaunchConfig&) { no_cuda("adam_update"); }
void norm_backward_cuda(const NormBackwardArgs&, const float*, const float*, const float*, float*, float*, const LaunchConfig&) { no_cuda("norm_backward"); }
void rope_cuda(const RopeArgs&, const float*, const float*, const float*, float*, const LaunchConfig&) { no_cuda("rope"); }
void train_map_cuda(TrainMap, int64_t, const float*, const float*, const float*, float*, float*, const LaunchConfig&) { no_cuda("train_map"); }
void attention_backward_cuda(const AttentionBackwardArgs&, const float*, const float*, float*, float*, const LaunchConfig&) { no_cuda("attention_backward"); }
void attention_cuda_sabotaged_fold(const AttentionArgs&, const float*, const float*, const float*, const int64_t*, const int64_t*, float*) { no_cuda("attention_cuda_sabotaged_fold"); }
void unary_cuda(UnaryOp, DType, const void*, const StridedView&, void*, int64_t, const LaunchConfig&) { no_cuda("unary"); }
void binary_cuda(BinaryOp, DType, const void*, const StridedView&, const void*, const StridedView&, void*, int64_t, const LaunchConfig&) { no_cuda("binary"); }
void compare_cuda(CompareOp, DType, const void*, const StridedView&, const void*, const StridedView&, uint8_t*, int64_t, const LaunchConfig&) { no_cuda("compare"); }
void where_cuda(size_t, const uint8_t*, const StridedView&, const void*, const StridedView&, const void*, const StridedView&, void*, int64_t, const LaunchConfig&) { no_cuda("where"); }
void cast_cuda(DType, DType, const void*, const StridedView&, void*, int64_t, const LaunchConfig&) { no_cuda("cast"); }
void strided_copy_cuda(size_t, const void*, const StridedView&, void*, const StridedView&, int64_t, const LaunchConfig&) { no_cuda("strided_copy"); }
int64_t index_select_cuda(size_t, DType, const void*, int64_t, int64_t, int64_t, const void*, int64_t, void*, const LaunchConfig&) { no_cuda("index_select"); }
int64_t gather_cuda(size_t, DType, const void*, const StridedView&, int64_t, int64_t, const void*, const StridedView&, void*, int64_t, const LaunchConfig&) { no_cuda("gather"); }
int64_t scatter_cuda(size_t, DType, void*, const StridedView&, int64_t, int64_t, const void*, const StridedView&, int64_t, const void*, const StridedView&, int64_t, int64_t, int64_t, const LaunchConfig&) { no_cuda("scatter"); }
int64_t embedding_backward_cuda(DType, const float*, const void*, int64_t, int64_t, int64_t, float*, const LaunchConfig&) { no_cuda("embedding_backward"); }
void cumsum_cuda(const float*, ReduceShape, float*, const LaunchConfig&) { no_cuda("cumsum"); }
void histogram_cuda(const uint8_t*, int64_t, const int32_t*, int64_t, const int64_t*, const int64_t*, int64_t*, const LaunchConfig&) { no_cuda("histogram"); }
void im2col_cuda(const float*, const Im2colShape&, float, float*, const LaunchConfig&) { no_cuda("im2col"); }
void lstm_cell_forward_cuda(const LstmCellForward&, const LaunchConfig&) { no_cuda("lstm_cell_forward"); }
void lstm_cell_backward_cuda(const LstmCellBackward&, const LaunchConfig&) { no_cuda("lstm_cell_backward"); }
void math_map_cuda(MathFn, const float*, float*, int64_t, const LaunchConfig&) { no_cuda("math_map"); }
void math_map_cuda(MathFn, const float*, const float*, float*, int64_t, const LaunchConfig&) { no_cuda("math_map"); }
void matmul_cuda(const MatmulArgs&, const float*, const float*, float*, const LaunchConfig&, void*) { no_cuda("matmul"); }
void exact_matmul_cuda(const MatmulArgs&, const float*, const float*, float*, const LaunchConfig&, void*) { no_cuda("exact_matmul"); }
void matmul_bias_cuda(const MatmulArgs&, const float*, const float*, const float*, float*, const LaunchConfig&, void*) { no_cuda("matmul_bias"); }
void layer_norm_cuda(const float*, int64_t, int64_t, const float*, const float*, float, float*, float*, float*, const LaunchConfig&) { no_cuda("layer_norm"); }
void rms_norm_cuda(const float*, int64_t, int64_t, const float*, float, float*, float*, const LaunchConfig&) { no_cuda("rms_norm"); }
void reduce_cuda(ReduceOp, const float*, ReduceShape, float*, int64_t, const LaunchConfig&) { no_cuda("reduce"); }
void arg_reduce_cuda(ArgReduceOp, const float*, ReduceShape, int64_t*, const LaunchConfig&) { no_cuda("arg_reduce"); }
void rng_fill_cuda(RngKind, uint64_t, uint64_t, float, float, float*, int64_t, const LaunchConfig&) { no_cuda("rng_fill"); }
void selective_scan_cuda(const ScanArgs&, const LaunchConfig&) { no_cuda("selective_scan"); }
void skinny_matmul_cuda(const float*, const float*, float*, int64_t, int64_t, int64_t, const LaunchConfig&) { no_cuda("skinny_matmul"); }
void softmax_cuda(const float*, int64_t, int64_t, float*, bool, const LaunchConfig&) { no_cuda("softmax"); }
void softmax_rows_on_chip_cuda(const float*, int64_t, int64_t, float*, bool, const LaunchConfig&) { no_cuda("softmax_rows_on_chip"); }
void sort_cuda(const float*, int64_t, int64_t, bool, float*, int64_t*, const LaunchConfig&) { no_cuda("sort"); }
void topk_cuda(const float*, int64_t, int64_t, int64_t, float*, int64_t*, const LaunchConfig&) { no_cuda("topk"); }
void tile_max_cuda(const float*, TileMaxShape, float*, int32_t*, const LaunchConfig&) { no_cuda("tile_max"); }
void tile_max_backward_cuda(const float*, const int32_t*, TileMaxShape, float*, const LaunchConfig&) { no_cuda("tile_max_backward"); }

}  // namespace bl
