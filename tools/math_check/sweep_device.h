// sweep_device.h: the CUDA side of the sweep (sweep_cuda.cu), compiled only with CUDA.
#pragma once

#include <cstdint>

#include "kernels/math_map.h"

namespace mathcheck {

// Holds device buffers for one chunk; uploads inputs once and maps any function over them.
class CudaSweepDevice {
 public:
  explicit CudaSweepDevice(int64_t max_n);
  ~CudaSweepDevice();
  CudaSweepDevice(const CudaSweepDevice&) = delete;
  CudaSweepDevice& operator=(const CudaSweepDevice&) = delete;

  // Copies n inputs (and y for pow, may be null) to the device.
  void set_inputs(const float* x, const float* y, int64_t n);
  // Maps fn over the current inputs with math_map_cuda (default launch) and copies the results
  // to host memory out[0..n).
  void map(bl::MathFn fn, float* out);
  // A short description of device 0 ("NVIDIA H200, sm_90"), or throws bl::Error without a GPU.
  static const char* describe();

 private:
  float* x_ = nullptr;
  float* y_ = nullptr;
  float* out_ = nullptr;
  int64_t n_ = 0;
  int64_t max_n_ = 0;
};

}  // namespace mathcheck
