// op_util.h: pieces shared by the Tensor ops (src/ops/*.cpp): operand checks, broadcasting,
// dimension coalescing into StridedViews, and the execution settings (CPU pool, CUDA launch shape).
#pragma once

#include <string>
#include <vector>

#include "bitlearn/tensor.h"
#include "core/thread_pool.h"
#include "kernels/launch.h"
#include "kernels/strided.h"

namespace bl {

// The CPU pool ops run on (the process-wide default pool).
ThreadPool& op_pool();

// The CUDA launch shape ops use: the default LaunchConfig unless a ScopedLaunchConfig is active on
// this thread (the conformance tests run every op under each of kConformanceLaunchConfigs).
LaunchConfig op_launch_config();
class ScopedLaunchConfig {
 public:
  explicit ScopedLaunchConfig(const LaunchConfig& cfg);
  ~ScopedLaunchConfig();
  ScopedLaunchConfig(const ScopedLaunchConfig&) = delete;
  ScopedLaunchConfig& operator=(const ScopedLaunchConfig&) = delete;

 private:
  LaunchConfig saved_;
  bool had_saved_;
};

// Throws unless t is defined: "<op>: operand <name> is undefined".
void check_defined(const Tensor& t, const char* op, const char* name);
// Throws unless a and b are on one device.
void check_same_device(const Tensor& a, const Tensor& b, const char* op, const char* name_a,
                       const char* name_b);
// Normalizes a possibly negative dimension index against ndim; throws naming op.
int64_t normalize_dim(int64_t d, int64_t ndim, const char* op);

// Strides of t broadcast to out_shape (0 where t is broadcast). Requires broadcast compatibility.
Shape broadcast_strides(const Tensor& t, const Shape& out_shape);

// Builds one StridedView per strides list over a common shape, merging adjacent dimensions that
// are contiguous for every operand and dropping extent-1 dimensions. Throws naming op when more
// than kMaxDims dimensions remain.
std::vector<StridedView> make_views(const Shape& shape, const std::vector<Shape>& strides,
                                    const char* op);

// One StridedView without coalescing (index ops keep their dimensions); throws beyond kMaxDims.
StridedView make_view_exact(const Shape& shape, const Shape& strides, const char* op);

}  // namespace bl
