// CPU reductions: sum-schedule ops through reduce_totals (reduce_rows.h), arg ops by leaf.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/arg_reduce_leaves.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/reduce.h"

namespace bl {

namespace cpu {
bool& simd_enabled() {
  static bool enabled = true;
  return enabled;
}
Isa kernel_isa() { return simd_enabled() ? active_isa() : Isa::scalar; }
}  // namespace cpu

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::mean: return "mean";
    case ReduceOp::var: return "var";
    case ReduceOp::std: return "std";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
    case ReduceOp::l1: return "l1_norm";
    case ReduceOp::l2: return "l2_norm";
  }
  return "reduce";
}

void check_reduce_args(const char* op_name, const void* x, ReduceShape shape, const void* out,
                       bool needs_nonempty) {
  BL_CHECK(shape.outer >= 0 && shape.n >= 0 && shape.inner >= 0, op_name,
           ": shape (outer, n, inner) must be non-negative, got (", shape.outer, ", ", shape.n, ", ",
           shape.inner, ")");
  const int64_t reductions = shape.outer * shape.inner;
  BL_CHECK(!(needs_nonempty && reductions > 0 && shape.n == 0), op_name,
           ": the reduced axis has length 0; expected at least one element");
  BL_CHECK(reductions == 0 || out != nullptr, op_name, ": output pointer is null");
  BL_CHECK(reductions * shape.n == 0 || x != nullptr, op_name, ": input pointer is null");
}

namespace {

// out[r] = finish(total of Step over reduction r) for every reduction, the totals on the sum
// schedule (reduce_rows.h); center: per-reduction values the step subtracts (or null).
template <class Step, class Finish>
void reduce_finished(const float* x, ReduceShape shape, const float* center, float* out, ThreadPool& pool,
                     Finish finish) {
  cpu::reduce_totals<Step>(x, shape, center, out, pool);
  const int64_t reductions = shape.outer * shape.inner;
  for (int64_t r = 0; r < reductions; ++r) out[r] = finish(out[r]);
}

float canonical_total(float total) { return canonicalize(total); }

}  // namespace

void reduce_cpu(ReduceOp op, const float* x, ReduceShape shape, float* out, int64_t ddof,
                ThreadPool& pool) {
  const char* name = reduce_op_name(op);
  check_reduce_args(name, x, shape, out, op == ReduceOp::max || op == ReduceOp::min);
  BL_CHECK(ddof >= 0, name, ": ddof must be >= 0, got ", ddof);
  const int64_t n = shape.n;
  const auto mean_of = [n](float total) { return finish_mean(total, n); };
  switch (op) {
    case ReduceOp::sum: reduce_finished<StepAdd>(x, shape, nullptr, out, pool, canonical_total); break;
    case ReduceOp::mean: reduce_finished<StepAdd>(x, shape, nullptr, out, pool, mean_of); break;
    case ReduceOp::var:
    case ReduceOp::std: {
      std::vector<float> mean(static_cast<size_t>(shape.outer * shape.inner));
      reduce_finished<StepAdd>(x, shape, nullptr, mean.data(), pool, mean_of);
      reduce_finished<StepCenteredSquare>(x, shape, mean.data(), out, pool, [op, n, ddof](float total) {
        return op == ReduceOp::var ? finish_var(total, n, ddof) : finish_std(total, n, ddof);
      });
      break;
    }
    case ReduceOp::max: reduce_finished<StepMax>(x, shape, nullptr, out, pool, canonical_total); break;
    case ReduceOp::min: reduce_finished<StepMin>(x, shape, nullptr, out, pool, canonical_total); break;
    case ReduceOp::l1: reduce_finished<StepAddAbs>(x, shape, nullptr, out, pool, canonical_total); break;
    case ReduceOp::l2:
      reduce_finished<StepSquare>(x, shape, nullptr, out, pool, [](float total) { return canonicalize(sqrt(total)); });
      break;
  }
}

void arg_reduce_cpu(ArgReduceOp op, const float* x, ReduceShape shape, int64_t* out, ThreadPool& pool) {
  const char* name = op == ArgReduceOp::argmax ? "argmax" : "argmin";
  check_reduce_args(name, x, shape, out, true);
  const int64_t n = shape.n, inner = shape.inner;
  const int64_t reductions = shape.outer * inner;
  if (reductions == 0) return;
  // Each (reduction, leaf) job finds its best (key, lowest index); jobs are then combined in
  // ascending leaf order. Greatest key with lowest index is associative, so this equals the
  // reference's single left-to-right scan.
  const int64_t leaves = reduce_leaf_count(n);
  const int64_t jobs = reductions * leaves;
  std::vector<uint32_t> best_key(static_cast<size_t>(jobs));
  std::vector<int64_t> best_index(static_cast<size_t>(jobs));
  const int64_t per_task = std::max<int64_t>(1, cpu::kTaskElements / std::min<int64_t>(n, kReduceLeaf));
  const int64_t tasks = (jobs + per_task - 1) / per_task;
  pool.parallel_for(tasks, [&](int64_t t) {
    const int64_t end = std::min(jobs, (t + 1) * per_task);
    for (int64_t g = t * per_task; g < end; ++g) {
      const int64_t r = g / leaves, l = g % leaves;
      const int64_t o = r / inner, j = r % inner;
      const int64_t start = l * kReduceLeaf;
      const int64_t stop = std::min<int64_t>(n, start + kReduceLeaf);
      arg_leaf_best(op, x + o * n * inner + j, inner, start, stop, &best_key[g], &best_index[g]);
    }
  });
  for (int64_t r = 0; r < reductions; ++r)
    out[r] = arg_combine_leaves(&best_key[r * leaves], &best_index[r * leaves], leaves);
}

}  // namespace bl
