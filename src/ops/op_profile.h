// op_profile.h: an opt-in per-op timer at the dispatch point, for finding where time goes.
//
// BITLEARN_OP_PROFILE=1 makes every kernel call of ops/dispatch.cpp wait for the device before
// and after it and add the wall time to its op's total; at exit the totals go to standard error,
// largest first. The waits slow a run down and never change a result bit. Off by default.
#pragma once

#include <cstdint>
#include <string>

#include "bitlearn/tensor.h"

namespace bl::op_profile {

// True when BITLEARN_OP_PROFILE=1 (read once).
bool enabled();

// Waits for all work queued on d (a no-op on the CPU).
void wait(Device d);

// Adds one call of `name` lasting `seconds` to the totals (thread-safe).
void add(const std::string& name, double seconds);

}  // namespace bl::op_profile
