// CPU training maps (kernels/train_maps.h). Work is cut into blocks fixed by the size, so the
// thread count never changes which code computes a value. The references are the element
// functions; the CPU versions compute the same roundings with the transcendental steps (silu,
// sigmoid, tanh) through the vectorized contract math map (math_map.h, same bits as the scalar
// functions) and the arithmetic in plain loops the compiler vectorizes (no contraction: the build
// compiles with -ffp-contract=off).
#include <algorithm>

#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/math_map.h"
#include "kernels/train_maps.h"

namespace bl {
namespace {

// Elements per block of the CPU maps (a pure constant); each block's scratch stays in L1.
constexpr int64_t kMapBlock = 2048;

using ChunkFn = void (*)(MathFn, const float*, const float*, float*, int64_t);

ChunkFn math_chunk() {
  return select_isa<ChunkFn>(cpu::kernel_isa(), &math_map_chunk_baseline, &math_map_chunk_avx2,
                             &math_map_chunk_avx512, nullptr);
}

void rope_rows(const RopeArgs& a, int64_t r0, int64_t r1, const float* x, const float* cos, const float* sin,
               float* y) {
  const int64_t D = a.head_dim, half = D / 2, width = a.heads * D;
  for (int64_t r = r0; r < r1; ++r) {
    const float* c = cos + r * D;
    const float* s = sin + r * D;
    for (int64_t h = 0; h < a.heads; ++h) {
      const float* xh = x + r * width + h * D;
      float* yh = y + r * width + h * D;
      if (!a.backward) {
        for (int64_t i = 0; i < half; ++i)
          yh[i] = canonicalize(add(canonicalize(mul(xh[i], c[i])), canonicalize(mul(canonicalize(neg(xh[i + half])), s[i]))));
        for (int64_t i = half; i < D; ++i)
          yh[i] = canonicalize(add(canonicalize(mul(xh[i], c[i])), canonicalize(mul(xh[i - half], s[i]))));
      } else {
        for (int64_t i = 0; i < half; ++i)
          yh[i] = canonicalize(add(canonicalize(mul(xh[i], c[i])), canonicalize(mul(xh[i + half], s[i + half]))));
        for (int64_t i = half; i < D; ++i)
          yh[i] = canonicalize(
              add(canonicalize(mul(xh[i], c[i])), canonicalize(neg(canonicalize(mul(xh[i - half], s[i - half]))))));
      }
    }
  }
}

// Elements [e0, e1) of op, at most kMapBlock of them.
void map_block(TrainMap op, ChunkFn chunk, int64_t e0, int64_t e1, const float* in0, const float* in1,
               const float* in2, float* out0, float* out1) {
  const int64_t n = e1 - e0;
  float t[kMapBlock], u[kMapBlock];
  const float* a = in0 + e0;
  const float* b = in1 + e0;
  float* o0 = out0 + e0;
  if (op == TrainMap::swiglu_forward) {
    chunk(MathFn::silu, a, nullptr, t, n);
    for (int64_t i = 0; i < n; ++i) o0[i] = canonicalize(mul(t[i], b[i]));
  } else if (op == TrainMap::swiglu_backward) {
    const float* dy = in2 + e0;
    float* o1 = out1 + e0;
    chunk(MathFn::silu, a, nullptr, t, n);
    for (int64_t i = 0; i < n; ++i) o1[i] = canonicalize(mul(dy[i], t[i]));
    chunk(MathFn::sigmoid, a, nullptr, t, n);
    for (int64_t i = 0; i < n; ++i) {
      const float s = t[i];
      const float d = canonicalize(mul(s, canonicalize(add(1.0f, canonicalize(mul(a[i], canonicalize(sub(1.0f, s))))))));
      o0[i] = canonicalize(mul(canonicalize(mul(dy[i], b[i])), d));
    }
  } else {
    const float k = 0.7978845608028654f, q = 0.044715f, three_q = static_cast<float>(3 * 0.044715);
    for (int64_t i = 0; i < n; ++i) {
      const float x = a[i], x2 = canonicalize(mul(x, x));
      u[i] = canonicalize(mul(k, canonicalize(add(x, canonicalize(mul(q, canonicalize(mul(x2, x))))))));
    }
    chunk(MathFn::tanh, u, nullptr, t, n);
    for (int64_t i = 0; i < n; ++i) {
      const float x = a[i], x2 = canonicalize(mul(x, x)), th = t[i];
      const float left = canonicalize(mul(0.5f, canonicalize(add(1.0f, th))));
      const float slope = canonicalize(mul(k, canonicalize(add(1.0f, canonicalize(mul(three_q, x2))))));
      const float right = canonicalize(
          mul(canonicalize(mul(0.5f, x)), canonicalize(mul(canonicalize(sub(1.0f, canonicalize(mul(th, th)))), slope))));
      o0[i] = canonicalize(mul(b[i], canonicalize(add(left, right))));
    }
  }
}

// Calls body(begin, end) over [0, count) in blocks of per_task items.
template <class Body>
void for_blocks(int64_t count, int64_t per_task, ThreadPool& pool, const Body& body) {
  const int64_t tasks = (count + per_task - 1) / per_task;
  pool.parallel_for(tasks, [&](int64_t t) { body(t * per_task, std::min(count, (t + 1) * per_task)); });
}

}  // namespace

void rope_check_args(const RopeArgs& a) {
  BL_CHECK(a.rows >= 0 && a.heads >= 0 && a.head_dim >= 0, "rope: rows ", a.rows, ", heads ", a.heads,
           " and head_dim ", a.head_dim, " must be >= 0");
  BL_CHECK(a.head_dim % 2 == 0, "rope: head_dim ", a.head_dim, " must be even");
}

void rope_reference(const RopeArgs& a, const float* x, const float* cos, const float* sin, float* y) {
  rope_check_args(a);
  const int64_t D = a.head_dim, width = a.heads * D;
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t h = 0; h < a.heads; ++h)
      for (int64_t i = 0; i < D; ++i)
        y[r * width + h * D + i] = rope_element(x + r * width, cos + r * D, sin + r * D, h, i, D, a.backward);
}

void rope_cpu(const RopeArgs& a, const float* x, const float* cos, const float* sin, float* y, ThreadPool& pool) {
  rope_check_args(a);
  if (a.rows == 0 || a.heads == 0 || a.head_dim == 0) return;
  const int64_t rows_per_task = std::max<int64_t>(1, cpu::kTaskElements / (a.heads * a.head_dim));
  for_blocks(a.rows, rows_per_task, pool, [&](int64_t r0, int64_t r1) { rope_rows(a, r0, r1, x, cos, sin, y); });
}

void train_map_reference(TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
                         float* out1) {
  BL_CHECK(n >= 0, "train_map: ", n, " elements");
  for (int64_t e = 0; e < n; ++e) train_map_element(op, e, in0, in1, in2, out0, out1);
}

void train_map_cpu(TrainMap op, int64_t n, const float* in0, const float* in1, const float* in2, float* out0,
                   float* out1, ThreadPool& pool) {
  BL_CHECK(n >= 0, "train_map: ", n, " elements");
  const ChunkFn chunk = math_chunk();
  for_blocks(n, cpu::kTaskElements, pool, [&](int64_t e0, int64_t e1) {
    for (int64_t b = e0; b < e1; b += kMapBlock)
      map_block(op, chunk, b, std::min(e1, b + kMapBlock), in0, in1, in2, out0, out1);
  });
}

}  // namespace bl
