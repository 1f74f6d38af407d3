// op_util.cpp: operand checks, broadcasting and StridedView building for the Tensor ops.
#include "ops/op_util.h"

#include "core/error.h"

namespace bl {

ThreadPool& op_pool() { return default_pool(); }

namespace {
thread_local bool t_has_launch_override = false;
thread_local LaunchConfig t_launch_override;
}  // namespace

LaunchConfig op_launch_config() {
  return t_has_launch_override ? t_launch_override : LaunchConfig{};
}

ScopedLaunchConfig::ScopedLaunchConfig(const LaunchConfig& cfg)
    : saved_(t_launch_override), had_saved_(t_has_launch_override) {
  t_launch_override = cfg;
  t_has_launch_override = true;
}

ScopedLaunchConfig::~ScopedLaunchConfig() {
  t_launch_override = saved_;
  t_has_launch_override = had_saved_;
}

void check_defined(const Tensor& t, const char* op, const char* name) {
  BL_CHECK(t.defined(), op, ": operand ", name, " is an undefined tensor");
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op, const char* name_a,
                       const char* name_b) {
  BL_CHECK(a.device() == b.device(), op, ": operands ", name_a, " (", a.device().str(), ") and ",
           name_b, " (", b.device().str(), ") must be on the same device");
}

int64_t normalize_dim(int64_t d, int64_t ndim, const char* op) {
  int64_t r = d < 0 ? d + ndim : d;
  BL_CHECK(r >= 0 && r < ndim, op, ": dimension ", d, " out of range for a tensor with ", ndim,
           " dimensions");
  return r;
}

Shape broadcast_strides(const Tensor& t, const Shape& out_shape) {
  size_t nd = out_shape.size(), td = t.shape().size();
  Shape strides(nd, 0);
  for (size_t k = 0; k < td; ++k) {
    size_t o = nd - td + k;
    strides[o] = t.shape()[k] == 1 ? 0 : t.strides()[k];
  }
  return strides;
}

std::vector<StridedView> make_views(const Shape& shape, const std::vector<Shape>& strides,
                                    const char* op) {
  // Drop extent-1 dimensions, then merge d into d+1 when stride[d] == stride[d+1] * extent[d+1]
  // for every operand.
  Shape s;
  std::vector<Shape> st(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    s.push_back(shape[d]);
    for (size_t k = 0; k < strides.size(); ++k) st[k].push_back(strides[k][d]);
  }
  Shape ms;
  std::vector<Shape> mst(strides.size());
  for (size_t d = 0; d < s.size(); ++d) {
    bool merge = !ms.empty();
    for (size_t k = 0; k < st.size() && merge; ++k)
      merge = mst[k].back() == st[k][d] * s[d];
    if (merge) {
      ms.back() *= s[d];
      for (size_t k = 0; k < st.size(); ++k) mst[k].back() = st[k][d];
    } else {
      ms.push_back(s[d]);
      for (size_t k = 0; k < st.size(); ++k) mst[k].push_back(st[k][d]);
    }
  }
  BL_CHECK(ms.size() <= static_cast<size_t>(kMaxDims), op, ": operands need ", ms.size(),
           " strided dimensions after merging; at most ", kMaxDims, " are supported");
  std::vector<StridedView> views(strides.size());
  for (size_t k = 0; k < strides.size(); ++k) {
    views[k].ndim = static_cast<int>(ms.size());
    for (size_t d = 0; d < ms.size(); ++d) {
      views[k].shape[d] = ms[d];
      views[k].strides[d] = mst[k][d];
    }
  }
  return views;
}

StridedView make_view_exact(const Shape& shape, const Shape& strides, const char* op) {
  BL_CHECK(shape.size() <= static_cast<size_t>(kMaxDims), op, ": tensors with more than ",
           kMaxDims, " dimensions are not supported (got ", shape.size(), ")");
  StridedView v;
  v.ndim = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    v.shape[d] = shape[d] > 0 ? shape[d] : 1;
    v.strides[d] = strides[d];
  }
  return v;
}

}  // namespace bl
