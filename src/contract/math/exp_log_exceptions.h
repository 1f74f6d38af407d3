// exp_log_exceptions.h: name##_exception(x, y), the correctly rounded result of the exp/log family
// for the inputs whose float-float result rounds the wrong way (y where x is not in the table).
//
// The tables are generated data and stand in exp_log_exceptions.inc (how they were found is told
// there; see docs/contract.md for the ranges searched). Each entry becomes one function holding its
// own keys and values as function-local constants, so that the same code serves host and device.
#pragma once

#include "contract/math/exp_log_core.h"

namespace bl {
namespace exp_log_detail {

#define BL_EXP_LOG_LIST(...) __VA_ARGS__
#define BL_EXP_LOG_EXCEPTIONS(name, count, keys, values)                        \
  BL_EXP_LOG_INLINE float name##_exception(float x, float y) {                  \
    static const uint32_t kKeys[(count) + 1] = {BL_EXP_LOG_LIST keys};          \
    static const uint32_t kValues[(count) + 1] = {BL_EXP_LOG_LIST values};      \
    return exception_lookup(kKeys, kValues, (count), x, y);                     \
  }

#include "contract/math/exp_log_exceptions.inc"

#undef BL_EXP_LOG_EXCEPTIONS
#undef BL_EXP_LOG_LIST

}  // namespace exp_log_detail
}  // namespace bl
