// map_cpu.h: the CPU loops behind every elementwise op: one, two or three strided inputs, one
// contiguous output, the element function a functor (inlined, so each op gets its own tight loop).
//
// The output range is cut into tasks of kCpuElementwiseChunk elements (problem size only). Inside
// a task, rows of the innermost dimension are walked with a fixed stride, so contiguous operands
// give unit-stride loops the compiler vectorizes. Each output element depends on its inputs only,
// so the partition cannot change a bit; it is fixed anyway, as the contract asks.
#pragma once

#include <algorithm>

#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "kernels/strided.h"

namespace bl::cpu {

inline int64_t last_extent(const StridedView& v) { return v.ndim > 0 ? v.shape[v.ndim - 1] : 1; }
inline int64_t last_stride(const StridedView& v) { return v.ndim > 0 ? v.strides[v.ndim - 1] : 0; }

// Runs body(begin, end) over [0, n) in fixed chunks on pool.
template <typename Body>
void run_chunks(int64_t n, ThreadPool& pool, const Body& body) {
  int64_t tasks = (n + kCpuElementwiseChunk - 1) / kCpuElementwiseChunk;
  if (tasks <= 1) {
    if (n > 0) body(int64_t(0), n);
    return;
  }
  pool.parallel_for(tasks, [&](int64_t t) {
    int64_t begin = t * kCpuElementwiseChunk;
    body(begin, std::min(n, begin + kCpuElementwiseChunk));
  });
}

template <typename Out, typename In, typename F>
void map1(const In* in, const StridedView& v, Out* out, int64_t n, ThreadPool& pool, F f) {
  bool identity = strided_is_identity(v);
  int64_t last = last_extent(v), ls = last_stride(v);
  run_chunks(n, pool, [&](int64_t begin, int64_t end) {
    if (identity) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(in[i]);
      return;
    }
    for (int64_t i = begin; i < end;) {
      int64_t len = std::min(last - i % last, end - i);
      const In* p = in + strided_offset(v, i);
      Out* o = out + i;
      if (ls == 1) {
        for (int64_t k = 0; k < len; ++k) o[k] = f(p[k]);
      } else {
        for (int64_t k = 0; k < len; ++k) o[k] = f(p[k * ls]);
      }
      i += len;
    }
  });
}

template <typename Out, typename A, typename B, typename F>
void map2(const A* a, const StridedView& va, const B* b, const StridedView& vb, Out* out, int64_t n,
          ThreadPool& pool, F f) {
  bool identity = strided_is_identity(va) && strided_is_identity(vb);
  int64_t last = last_extent(va), sa = last_stride(va), sb = last_stride(vb);
  run_chunks(n, pool, [&](int64_t begin, int64_t end) {
    if (identity) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], b[i]);
      return;
    }
    for (int64_t i = begin; i < end;) {
      int64_t len = std::min(last - i % last, end - i);
      const A* pa = a + strided_offset(va, i);
      const B* pb = b + strided_offset(vb, i);
      Out* o = out + i;
      if (sa == 1 && sb == 1) {
        for (int64_t k = 0; k < len; ++k) o[k] = f(pa[k], pb[k]);
      } else if (sa == 1 && sb == 0) {
        B y = pb[0];
        for (int64_t k = 0; k < len; ++k) o[k] = f(pa[k], y);
      } else if (sa == 0 && sb == 1) {
        A x = pa[0];
        for (int64_t k = 0; k < len; ++k) o[k] = f(x, pb[k]);
      } else {
        for (int64_t k = 0; k < len; ++k) o[k] = f(pa[k * sa], pb[k * sb]);
      }
      i += len;
    }
  });
}

template <typename Out, typename C, typename A, typename B, typename F>
void map3(const C* c, const StridedView& vc, const A* a, const StridedView& va, const B* b,
          const StridedView& vb, Out* out, int64_t n, ThreadPool& pool, F f) {
  int64_t last = last_extent(va), sc = last_stride(vc), sa = last_stride(va), sb = last_stride(vb);
  run_chunks(n, pool, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end;) {
      int64_t len = std::min(last - i % last, end - i);
      const C* pc = c + strided_offset(vc, i);
      const A* pa = a + strided_offset(va, i);
      const B* pb = b + strided_offset(vb, i);
      Out* o = out + i;
      for (int64_t k = 0; k < len; ++k) o[k] = f(pc[k * sc], pa[k * sa], pb[k * sb]);
      i += len;
    }
  });
}

}  // namespace bl::cpu
