// lstm_cell.cu: CUDA LSTM cell step, forward and backward (see kernels/lstm_cell.h). One thread
// per [N, H] element (grid-stride); every element is computed alone, so the launch shape never
// changes the bits.
#include <cuda_runtime.h>

#include "core/allocator.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/lstm_cell.h"

namespace bl {
namespace {

__global__ void lstm_cell_forward_kernel(LstmCellForward a, int64_t total) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total; e += stride)
    lstm_cell_forward_one(a, e);
}

__global__ void lstm_cell_backward_kernel(LstmCellBackward a, int64_t total) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total; e += stride)
    lstm_cell_backward_one(a, e);
}

}  // namespace

void lstm_cell_forward_cuda(const LstmCellForward& a, const LaunchConfig& config) {
  lstm_cell_forward_check(a);
  const int64_t total = a.n * a.h;
  if (total == 0) return;
  cuda::GridShape shape = cuda::grid_for(total, config);
  lstm_cell_forward_kernel<<<shape.blocks, shape.threads>>>(a, total);
  cuda_sync_check("lstm_cell_forward");
}

void lstm_cell_backward_cuda(const LstmCellBackward& a, const LaunchConfig& config) {
  lstm_cell_backward_check(a);
  const int64_t total = a.n * a.h;
  if (total == 0) return;
  cuda::GridShape shape = cuda::grid_for(total, config);
  lstm_cell_backward_kernel<<<shape.blocks, shape.threads>>>(a, total);
  cuda_sync_check("lstm_cell_backward");
}

}  // namespace bl
