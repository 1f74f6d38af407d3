// schedule.cpp: learning-rate schedules in binary32 contract arithmetic.
#include "bitlearn/nn/schedule.h"

#include "contract/arith.h"
#include "contract/math.h"
#include "core/error.h"

namespace bl::nn {

namespace {
constexpr float kPi = 3.14159265358979323846f;
}

float LrSchedule::lr(int64_t step) const {
  BL_CHECK(step >= 0, "LrSchedule::lr: step must be >= 0, got ", step);
  switch (kind) {
    case Kind::constant:
      return base_lr;
    case Kind::step: {
      BL_CHECK(step_size >= 1, "step_lr: step_size must be >= 1, got ", step_size);
      float lr = base_lr;
      for (int64_t k = step / step_size; k > 0; --k) lr = bl::mul(lr, gamma);
      return lr;
    }
    case Kind::linear:
    case Kind::cosine: {
      if (step < warmup_steps)
        return bl::div(bl::mul(base_lr, static_cast<float>(step + 1)), static_cast<float>(warmup_steps));
      int64_t span = total_steps - warmup_steps;
      if (span <= 0 || step >= total_steps) return min_lr;
      float progress = bl::div(static_cast<float>(step - warmup_steps), static_cast<float>(span));
      float range = bl::sub(base_lr, min_lr);
      if (kind == Kind::linear) return bl::add(min_lr, bl::mul(range, bl::sub(1.0f, progress)));
      float c = bl::add(1.0f, bl::cos(bl::mul(kPi, progress)));
      return bl::add(min_lr, bl::mul(bl::mul(0.5f, range), c));
    }
  }
  return base_lr;
}

LrSchedule constant_lr(float lr) {
  LrSchedule s;
  s.kind = LrSchedule::Kind::constant;
  s.base_lr = lr;
  return s;
}

LrSchedule step_lr(float lr, int64_t step_size, float gamma) {
  LrSchedule s;
  s.kind = LrSchedule::Kind::step;
  s.base_lr = lr;
  s.step_size = step_size;
  s.gamma = gamma;
  return s;
}

LrSchedule linear_lr(float lr, int64_t warmup, int64_t total, float min_lr) {
  LrSchedule s;
  s.kind = LrSchedule::Kind::linear;
  s.base_lr = lr;
  s.warmup_steps = warmup;
  s.total_steps = total;
  s.min_lr = min_lr;
  return s;
}

LrSchedule cosine_lr(float lr, int64_t warmup, int64_t total, float min_lr) {
  LrSchedule s = linear_lr(lr, warmup, total, min_lr);
  s.kind = LrSchedule::Kind::cosine;
  return s;
}

}  // namespace bl::nn
