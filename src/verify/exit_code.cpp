// exit_code.cpp: the exit status of a verify run (see bitlearn/verify.h).
#include "bitlearn/verify.h"

namespace bl::verify {

int exit_code(const Report& report) {
  bool any_divergent = !report.cross_device_divergences.empty();
  bool any_skipped = !report.skipped_devices.empty();
  for (const DeviceRun& run : report.runs) {
    for (const CheckResult& c : run.checks) {
      any_divergent = any_divergent || c.state == State::divergent;
      any_skipped = any_skipped || (c.state == State::skipped && !c.cpu_only);
    }
  }
  if (any_divergent) return 1;
  if (any_skipped) return 3;
  return 0;
}

}  // namespace bl::verify
