// CPU selective scan (kernels/selective_scan.h): one job per (batch row, head) runs the P chains of
// that head step by step, with the step's decay factors exp(dt * A[h, n]) read from args.decay or
// computed once for all P.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/selective_scan.h"

namespace bl {

void check_scan_args(const ScanArgs& a) {
  const ScanShape& s = a.shape;
  BL_CHECK(s.batch >= 0 && s.steps >= 0 && s.heads >= 0 && s.head_dim >= 0, "selective_scan: sizes (batch ", s.batch,
           ", steps ", s.steps, ", heads ", s.heads, ", head_dim ", s.head_dim, ") must be non-negative");
  BL_CHECK(s.state >= 1 && s.state <= kScanMaxState, "selective_scan: state size ", s.state, " must lie in [1, ",
           kScanMaxState, "]");
  BL_CHECK(s.groups >= 1 && s.heads % s.groups == 0, "selective_scan: heads ", s.heads,
           " must be a multiple of groups ", s.groups);
  if (s.batch * s.heads * s.head_dim == 0) return;
  BL_CHECK(a.lengths != nullptr && a.state != nullptr && a.A != nullptr, "selective_scan: lengths, state or A is null");
  if (s.steps == 0) return;
  BL_CHECK(a.x != nullptr && a.dt != nullptr && a.Bm != nullptr && a.Cm != nullptr && a.y != nullptr,
           "selective_scan: an input or output pointer is null");
}

void selective_scan_cpu(const ScanArgs& a, ThreadPool& pool) {
  check_scan_args(a);
  const ScanShape& s = a.shape;
  const int64_t B = s.batch, T = s.steps, H = s.heads, P = s.head_dim, N = s.state, G = s.groups;
  if (B * H * P == 0) return;
  for (int64_t b = 0; b < B; ++b)
    BL_CHECK(a.lengths[b] >= 0 && a.lengths[b] <= T, "selective_scan: length ", a.lengths[b], " of row ", b,
             " must lie in [0, ", T, "]");
  const int64_t heads_per_group = H / G;
  const int64_t jobs = B * H;
  const int64_t per_task = std::max<int64_t>(1, cpu::kTaskElements / std::max<int64_t>(1, T * P * N));
  const int64_t tasks = (jobs + per_task - 1) / per_task;
  pool.parallel_for(tasks, [&](int64_t task) {
    std::vector<float> dA(static_cast<size_t>(N));
    const int64_t end = std::min(jobs, (task + 1) * per_task);
    for (int64_t j = task * per_task; j < end; ++j) {
      const int64_t b = j / H, h = j % H, g = h / heads_per_group;
      float* states = a.state + (b * H + h) * P * N;
      const float* D_h = a.D != nullptr ? a.D + h : nullptr;
      for (int64_t t = 0; t < T; ++t) {
        float* y = a.y + ((b * T + t) * H + h) * P;
        if (t >= a.lengths[b]) {
          for (int64_t p = 0; p < P; ++p) y[p] = 0.0f;
          continue;
        }
        const float dt = a.dt[(b * T + t) * H + h];
        const float* decay = a.decay != nullptr ? a.decay + ((b * T + t) * H + h) * N : dA.data();
        if (a.decay == nullptr)
          for (int64_t n = 0; n < N; ++n) dA[n] = exp(mul(dt, a.A[h * N + n]));
        const float* x = a.x + ((b * T + t) * H + h) * P;
        const int64_t row = ((b * T + t) * G + g) * N;
        for (int64_t p = 0; p < P; ++p)
          y[p] = canonicalize(scan_step(states + p * N, decay, a.A + h * N, dt, x[p], a.Bm + row, a.Cm + row, D_h, N));
      }
      for (int64_t i = 0; i < P * N; ++i) states[i] = canonicalize(states[i]);
    }
  });
}

}  // namespace bl
