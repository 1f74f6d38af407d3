// schedule.h: learning-rate schedules evaluated in binary32 with the contract's arithmetic and
// math (contract/arith.h, contract/math.h), so lr(step) has the same bits everywhere.
#pragma once

#include <cstdint>

namespace bl::nn {

struct LrSchedule {
  enum class Kind { constant, step, linear, cosine };
  Kind kind = Kind::constant;
  float base_lr = 1e-3f;
  int64_t warmup_steps = 0;   // linear warmup from 0 (linear, cosine)
  int64_t total_steps = 0;    // end of the decay (linear, cosine)
  float min_lr = 0.0f;        // floor reached at total_steps (linear, cosine)
  int64_t step_size = 1;      // step: multiply by gamma every step_size steps
  float gamma = 0.1f;

  // The learning rate of step (0-based).
  float lr(int64_t step) const;
};

LrSchedule constant_lr(float lr);
LrSchedule step_lr(float lr, int64_t step_size, float gamma);
LrSchedule linear_lr(float lr, int64_t warmup_steps, int64_t total_steps, float min_lr = 0.0f);
LrSchedule cosine_lr(float lr, int64_t warmup_steps, int64_t total_steps, float min_lr = 0.0f);

}  // namespace bl::nn
