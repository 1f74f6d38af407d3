// fp_probe_stub.cpp: core/fp_probe.h's CUDA probe in a build without CUDA.
#include "core/error.h"
#include "core/fp_probe.h"

namespace bl {

float probe_mul_add_cuda(float, float, float) {
  throw Error("probe_mul_add: this build has no CUDA backend");
}

}  // namespace bl
