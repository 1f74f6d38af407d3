// lstm_cell.cu: CUDA LSTM cell step, forward and backward (see kernels/lstm_cell.h). One thread
// per [N, H] element (grid-stride); every element is computed alone, so the launch shape never
// changes the bits.
#include <cuda_runtime.h>

#include "core/allocator.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/lstm_cell.h"

namespace bl {
namespace {

__device__ __forceinline__ void cell_one(const LstmCellForward& a, int64_t e) { lstm_cell_forward_one(a, e); }
__device__ __forceinline__ void cell_one(const LstmCellBackward& a, int64_t e) { lstm_cell_backward_one(a, e); }

template <class Args>
__global__ void lstm_cell_kernel(Args a, int64_t total) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total; e += stride)
    cell_one(a, e);
}

// One launch over the [N, H] elements of a forward or backward step (already checked).
template <class Args>
void launch_cell(const Args& a, const LaunchConfig& config, const char* name) {
  const int64_t total = a.n * a.h;
  if (total == 0) return;
  cuda::GridShape shape = cuda::grid_for(total, config);
  lstm_cell_kernel<<<shape.blocks, shape.threads>>>(a, total);
  cuda_sync_check(name);
}

}  // namespace

void lstm_cell_forward_cuda(const LstmCellForward& a, const LaunchConfig& config) {
  lstm_cell_forward_check(a);
  launch_cell(a, config, "lstm_cell_forward");
}

void lstm_cell_backward_cuda(const LstmCellBackward& a, const LaunchConfig& config) {
  lstm_cell_backward_check(a);
  launch_cell(a, config, "lstm_cell_backward");
}

}  // namespace bl
