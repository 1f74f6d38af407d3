// reduce.h: reductions over the middle axis of a contiguous (outer, n, inner) array.
//
// Ops: sum, mean, var, std, max, min, l1, l2 (float results) and argmax, argmin (int64 results).
// The scalar reference here is the specification; the CPU (src/kernels/cpu/reduce*.cpp) and CUDA
// (src/kernels/cuda/reduce.cu) versions reproduce it bit for bit (tests/conformance/test_reduce*).
//
// Definitions (x_i = element i of one reduction, i in [0, n)):
//   sum    S(x)                 on the sum schedule of src/contract/schedule.h, lane = lane + x
//   mean   S(x) / float(n)      one division; n == 0 gives NaN
//   var    Q / float(n - ddof)  Q = the sum of d*d, d = x - mean, on the sum schedule with
//                               lane = fma(d, d, lane) (two passes); n - ddof <= 0 gives NaN
//   std    sqrt(var)
//   l1     the sum schedule with lane = lane + |x|
//   l2     sqrt of the sum schedule with lane = fma(x, x, lane) (the dot schedule)
//   max    bl::max over all x (NaN propagates, +0 > -0); associative, so any order gives it;
//   min    bl::min likewise; n == 0 is an error
//   argmax the lowest index of the greatest element; a NaN counts as greater than every number,
//          so the first NaN wins; +0 counts as greater than -0 (as bl::max). n == 0 is an error.
//   argmin the lowest index of the least element; a NaN counts as less than every number (the
//          first NaN wins again); -0 counts as less than +0.
// float(m) is the int64 -> binary32 conversion rounded to nearest even. Every stored NaN is canonical.
#pragma once

#include <cstdint>
#include <vector>

#include "contract/schedule.h"
#include "kernels/launch.h"

namespace bl {

class ThreadPool;

// Element i of reduction (o, j) is x[(o * n + i) * inner + j]; its result goes to out[o * inner + j].
struct ReduceShape {
  int64_t outer = 1;
  int64_t n = 0;
  int64_t inner = 1;
};

enum class ReduceOp { sum, mean, var, std, max, min, l1, l2 };
enum class ArgReduceOp { argmax, argmin };

// ---------------------------------------------------------------------------------------------
// Lane steps: how one element enters a lane of the sum schedule. `c` is a per-reduction value
// (the mean for centered squares, the row maximum for softmax). init() is the lane's start value,
// combine() the operation of the lane fold and the leaf tree.
// ---------------------------------------------------------------------------------------------
struct StepAdd {
  BL_HD static float init() { return 0.0f; }
  BL_HD static float apply(float lane, float x, float) { return add(lane, x); }
  BL_HD static float combine(float a, float b) { return add(a, b); }
};
struct StepAddAbs {
  BL_HD static float init() { return 0.0f; }
  BL_HD static float apply(float lane, float x, float) { return add(lane, abs(x)); }
  BL_HD static float combine(float a, float b) { return add(a, b); }
};
struct StepSquare {
  BL_HD static float init() { return 0.0f; }
  BL_HD static float apply(float lane, float x, float) { return fma(x, x, lane); }
  BL_HD static float combine(float a, float b) { return add(a, b); }
};
struct StepCenteredSquare {
  BL_HD static float init() { return 0.0f; }
  BL_HD static float apply(float lane, float x, float c) {
    float d = sub(x, c);
    return fma(d, d, lane);
  }
  BL_HD static float combine(float a, float b) { return add(a, b); }
};
struct StepMax {
  BL_HD static float init() { return float_of(0xFF800000u); }  // -inf: bl::max(-inf, v) == v
  BL_HD static float apply(float lane, float x, float) { return max(lane, x); }
  BL_HD static float combine(float a, float b) { return max(a, b); }
};
struct StepMin {
  BL_HD static float init() { return float_of(0x7F800000u); }  // +inf: bl::min(+inf, v) == v
  BL_HD static float apply(float lane, float x, float) { return min(lane, x); }
  BL_HD static float combine(float a, float b) { return min(a, b); }
};

// The value of one leaf: elements x[i * stride] for i in [0, len), len <= kReduceLeaf, entered
// into lane (i mod kReduceLanes) in ascending i, then the lanes folded by halving (schedule.h).
template <class Step>
BL_HD float leaf_reduce(const float* x, int64_t len, int64_t stride, float c) {
  float lanes[kReduceLanes];
  for (int j = 0; j < kReduceLanes; ++j) lanes[j] = Step::init();
  for (int64_t i = 0; i < len; ++i) {
    int j = static_cast<int>(i % kReduceLanes);
    lanes[j] = Step::apply(lanes[j], x[i * stride], c);
  }
  for (int s = kReduceLanes / 2; s >= 1; s /= 2)
    for (int j = 0; j < s; ++j) lanes[j] = Step::combine(lanes[j], lanes[j + s]);
  return lanes[0];
}

// The pairwise tree of schedule.h over leaf values p[0..m) (destroys p); init() for m == 0.
template <class Step>
BL_HD float leaf_tree(float* p, int64_t m) {
  if (m == 0) return Step::init();
  while (m > 1) {
    int64_t half = m / 2;
    for (int64_t i = 0; i < half; ++i) p[i] = Step::combine(p[2 * i], p[2 * i + 1]);
    if (m % 2) p[half] = p[m - 1];
    m = half + (m % 2);
  }
  return p[0];
}

// Node `i` of level 5 of the leaf tree over p[0..m): the tree over the 32-aligned segment
// p[32 i .. min(32 i + 32, m)). Every node of level k covers exactly the 2^k-aligned segment of
// its leaves (an odd last element only moves up), so folding all segments of 32 and then the tree
// over the m / 32 (rounded up) results gives leaf_tree's bits: five levels per pass.
template <class Step>
BL_HD float leaf_tree_segment(const float* p, int64_t m, int64_t i) {
  float buf[32];
  const int64_t start = 32 * i;
  const int64_t len = m - start < 32 ? m - start : 32;
  for (int64_t k = 0; k < len; ++k) buf[k] = p[start + k];
  return leaf_tree<Step>(buf, len);
}

// float(m), rounded to nearest even (exact for m <= 2^24).
BL_HD float count_to_float(int64_t m) { return static_cast<float>(m); }

// The final step of each float op from its tree total (var/std: the centered total).
BL_HD float finish_mean(float total, int64_t n) { return canonicalize(div(total, count_to_float(n))); }
BL_HD float finish_var(float centered_total, int64_t n, int64_t ddof) {
  if (n - ddof <= 0) return canonical_nan();
  return canonicalize(div(centered_total, count_to_float(n - ddof)));
}
BL_HD float finish_std(float centered_total, int64_t n, int64_t ddof) {
  return canonicalize(sqrt(finish_var(centered_total, n, ddof)));
}

// Order keys of argmax / argmin: the selected element has the greatest key, lowest index first.
BL_HD uint32_t argmax_key(float x) { return is_nan(x) ? 0xFFFFFFFFu : total_order_key(x); }
BL_HD uint32_t argmin_key(float x) { return is_nan(x) ? 0xFFFFFFFFu : ~total_order_key(x); }
BL_HD uint32_t arg_key(ArgReduceOp op, float x) {
  return op == ArgReduceOp::argmax ? argmax_key(x) : argmin_key(x);
}

// ---------------------------------------------------------------------------------------------
// Reference (host only): the specification, slow and plain.
// ---------------------------------------------------------------------------------------------

// One reduction of the sum schedule with lane step Step over x[i * stride], i in [0, n).
template <class Step>
inline float reference_reduce_one(const float* x, int64_t n, int64_t stride, float c) {
  int64_t m = reduce_leaf_count(n);
  std::vector<float> leaves(static_cast<size_t>(m));
  for (int64_t l = 0; l < m; ++l) {
    int64_t start = l * kReduceLeaf;
    int64_t len = n - start < kReduceLeaf ? n - start : kReduceLeaf;
    leaves[static_cast<size_t>(l)] = leaf_reduce<Step>(x + start * stride, len, stride, c);
  }
  return leaf_tree<Step>(leaves.data(), m);
}

// Reduces x of `shape` with `op` into out[outer * inner]; ddof is used by var and std only.
// Preconditions (checked by the backends, not here): max and min need n >= 1.
inline void reduce_reference(ReduceOp op, const float* x, ReduceShape shape, float* out,
                             int64_t ddof = 0) {
  const int64_t n = shape.n, inner = shape.inner;
  for (int64_t o = 0; o < shape.outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      // An empty row (n == 0) is never read, and x may then be null: no offset is applied to it.
      const float* row = n == 0 ? x : x + o * n * inner + j;
      float r = 0.0f;
      switch (op) {
        case ReduceOp::sum: r = canonicalize(reference_reduce_one<StepAdd>(row, n, inner, 0.0f)); break;
        case ReduceOp::mean: r = finish_mean(reference_reduce_one<StepAdd>(row, n, inner, 0.0f), n); break;
        case ReduceOp::var:
        case ReduceOp::std: {
          float mean = finish_mean(reference_reduce_one<StepAdd>(row, n, inner, 0.0f), n);
          float q = reference_reduce_one<StepCenteredSquare>(row, n, inner, mean);
          r = op == ReduceOp::var ? finish_var(q, n, ddof) : finish_std(q, n, ddof);
          break;
        }
        case ReduceOp::max: r = canonicalize(reference_reduce_one<StepMax>(row, n, inner, 0.0f)); break;
        case ReduceOp::min: r = canonicalize(reference_reduce_one<StepMin>(row, n, inner, 0.0f)); break;
        case ReduceOp::l1: r = canonicalize(reference_reduce_one<StepAddAbs>(row, n, inner, 0.0f)); break;
        case ReduceOp::l2:
          r = canonicalize(sqrt(reference_reduce_one<StepSquare>(row, n, inner, 0.0f)));
          break;
      }
      out[o * inner + j] = r;
    }
  }
}

// argmax / argmin into out[outer * inner] (indices in [0, n)); needs n >= 1.
inline void arg_reduce_reference(ArgReduceOp op, const float* x, ReduceShape shape, int64_t* out) {
  const int64_t n = shape.n, inner = shape.inner;
  for (int64_t o = 0; o < shape.outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const float* row = x + o * n * inner + j;
      int64_t best = 0;
      uint32_t best_key = arg_key(op, row[0]);
      for (int64_t i = 1; i < n; ++i) {
        uint32_t k = arg_key(op, row[i * inner]);
        if (k > best_key) {  // strictly greater: among equal keys the lowest index stays
          best_key = k;
          best = i;
        }
      }
      out[o * inner + j] = best;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// CPU: threaded (tasks chosen from the shape alone) with AVX2 leaves where the CPU has them.
// ---------------------------------------------------------------------------------------------
void reduce_cpu(ReduceOp op, const float* x, ReduceShape shape, float* out, int64_t ddof,
                ThreadPool& pool);
void arg_reduce_cpu(ArgReduceOp op, const float* x, ReduceShape shape, int64_t* out, ThreadPool& pool);

// Validates a shape and ddof for `op` (throws bl::Error naming the op and the operand).
void check_reduce_args(const char* op_name, const void* x, ReduceShape shape, const void* out,
                       bool needs_nonempty);
const char* reduce_op_name(ReduceOp op);

// CUDA: x and out are device pointers; runs on the default stream and returns when done.
void reduce_cuda(ReduceOp op, const float* x, ReduceShape shape, float* out, int64_t ddof,
                 const LaunchConfig& config = LaunchConfig());
void arg_reduce_cuda(ArgReduceOp op, const float* x, ReduceShape shape, int64_t* out,
                     const LaunchConfig& config = LaunchConfig());

}  // namespace bl
