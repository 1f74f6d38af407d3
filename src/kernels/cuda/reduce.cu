// CUDA reductions: the sum-schedule ops through reduce_totals (reduce_cuda.cuh), arg ops by leaf.
#include "kernels/cuda/reduce_cuda.cuh"
#include "kernels/arg_reduce_leaves.h"

#include <mutex>
#include <unordered_map>

namespace bl {
namespace {

struct FinishCanonical {
  BL_HD float operator()(float v) const { return canonicalize(v); }
};
struct FinishSqrt {
  BL_HD float operator()(float v) const { return canonicalize(sqrt(v)); }
};
struct FinishMean {
  int64_t n;
  BL_HD float operator()(float v) const { return finish_mean(v, n); }
};
struct FinishVar {
  int64_t n, ddof;
  bool take_sqrt;
  BL_HD float operator()(float v) const { return take_sqrt ? finish_std(v, n, ddof) : finish_var(v, n, ddof); }
};

// The totals of every reduction under Step into out, then `finish` applied to each in place.
template <class Step, class Finish>
void reduce_and_finish(const float* x, const ReduceShape& shape, float* out, int64_t reductions, Finish finish,
                       const LaunchConfig& config) {
  cuda::reduce_totals<Step>(x, shape, nullptr, out, config);
  cuda::map_totals(out, reductions, finish, config);
}

// Best (key, lowest index) of every (reduction, leaf) job, by one thread each.
__global__ void arg_leaf_kernel(ArgReduceOp op, const float* x, int64_t n, int64_t inner, int64_t leaves,
                                int64_t jobs, uint32_t* best_key, int64_t* best_index) {
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < jobs;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = g % inner, rest = g / inner;
    const int64_t l = rest % leaves, o = rest / leaves;
    const int64_t start = l * kReduceLeaf;
    const int64_t stop = n < start + kReduceLeaf ? n : start + kReduceLeaf;
    const int64_t slot = (o * inner + j) * leaves + l;
    arg_leaf_best(op, x + o * n * inner + j, inner, start, stop, &best_key[slot], &best_index[slot]);
  }
}

__global__ void arg_combine_kernel(const uint32_t* best_key, const int64_t* best_index, int64_t leaves,
                                   int64_t reductions, int64_t* out) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < reductions;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[r] = arg_combine_leaves(best_key + r * leaves, best_index + r * leaves, leaves);
  }
}

}  // namespace

void reduce_cuda(ReduceOp op, const float* x, ReduceShape shape, float* out, int64_t ddof,
                 const LaunchConfig& config) {
  const char* name = reduce_op_name(op);
  check_reduce_args(name, x, shape, out, op == ReduceOp::max || op == ReduceOp::min);
  BL_CHECK(ddof >= 0, name, ": ddof must be >= 0, got ", ddof);
  const int64_t reductions = shape.outer * shape.inner;
  if (reductions == 0) return;
  const int64_t n = shape.n;
  switch (op) {
    case ReduceOp::sum:
      reduce_and_finish<StepAdd>(x, shape, out, reductions, FinishCanonical(), config);
      break;
    case ReduceOp::mean:
      reduce_and_finish<StepAdd>(x, shape, out, reductions, FinishMean{n}, config);
      break;
    case ReduceOp::var:
    case ReduceOp::std: {
      cuda::DeviceScratch<float> mean(reductions);
      reduce_and_finish<StepAdd>(x, shape, mean.ptr, reductions, FinishMean{n}, config);
      cuda::reduce_totals<StepCenteredSquare>(x, shape, mean.ptr, out, config);
      cuda::map_totals(out, reductions, FinishVar{n, ddof, op == ReduceOp::std}, config);
      break;
    }
    case ReduceOp::max:
      reduce_and_finish<StepMax>(x, shape, out, reductions, FinishCanonical(), config);
      break;
    case ReduceOp::min:
      reduce_and_finish<StepMin>(x, shape, out, reductions, FinishCanonical(), config);
      break;
    case ReduceOp::l1:
      reduce_and_finish<StepAddAbs>(x, shape, out, reductions, FinishCanonical(), config);
      break;
    case ReduceOp::l2:
      reduce_and_finish<StepSquare>(x, shape, out, reductions, FinishSqrt(), config);
      break;
  }
  cuda::finish_sync();
}

void arg_reduce_cuda(ArgReduceOp op, const float* x, ReduceShape shape, int64_t* out,
                     const LaunchConfig& config) {
  check_reduce_args(op == ArgReduceOp::argmax ? "argmax" : "argmin", x, shape, out, true);
  const int64_t reductions = shape.outer * shape.inner;
  if (reductions == 0) return;
  const int64_t leaves = reduce_leaf_count(shape.n);
  const int64_t jobs = reductions * leaves;
  cuda::DeviceScratch<uint32_t> best_key(jobs);
  cuda::DeviceScratch<int64_t> best_index(jobs);
  const int block = cuda::fitted_block(arg_leaf_kernel, config);
  arg_leaf_kernel<<<cuda::grid_size((jobs + block - 1) / block, config), block>>>(
      op, x, shape.n, shape.inner, leaves, jobs, best_key.ptr, best_index.ptr);
  BL_CUDA_CHECK(cudaGetLastError());
  const int combine_block = cuda::fitted_block(arg_combine_kernel, config);
  arg_combine_kernel<<<cuda::grid_size((reductions + combine_block - 1) / combine_block, config), combine_block>>>(
      best_key.ptr, best_index.ptr, leaves, reductions, out);
  BL_CUDA_CHECK(cudaGetLastError());
  cuda::finish_sync();
}

}  // namespace bl

namespace bl::cuda {

int cached_kernel_thread_limit(const void* kernel, int (*query)(const void*)) {
  static std::mutex mutex;
  static std::unordered_map<const void*, int> limits;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = limits.find(kernel);
  if (it != limits.end()) return it->second;
  const int limit = query(kernel);
  limits.emplace(kernel, limit);
  return limit;
}

}  // namespace bl::cuda
