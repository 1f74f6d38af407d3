// matmul_cuda_util.cuh: what the CUDA GEMM conformance tests share (tests/cuda/test_matmul_cuda.cu,
// test_matmul_bias_cuda.cu): whether a GPU is present, a device copy of a host array, and one
// product of a generated problem run on the device (plain or with a bias row) or by the reference.
// Included from .cu test files only.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <vector>

#include "conformance/matmul_cases.h"
#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace bl::conformance {

// True when the CUDA runtime sees at least one device (CUDA tests skip themselves otherwise).
inline bool have_cuda_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// A device copy of host floats (4 bytes more, so an empty array still has a valid pointer);
// download(n) reads the first n back. Allocation and copy failures are test failures.
struct DeviceFloats {
  float* ptr = nullptr;
  explicit DeviceFloats(const std::vector<float>& host) {
    EXPECT_EQ(cudaMalloc(&ptr, host.size() * sizeof(float) + 4), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(ptr); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  std::vector<float> download(size_t n) const {
    std::vector<float> host(n);
    EXPECT_EQ(cudaMemcpy(host.data(), ptr, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
};

// C of problem p after bl::matmul_cuda under config, or after bl::matmul_bias_cuda when bias (N
// host floats) is given; C starts as p.c_init, so writes outside the windows show.
inline std::vector<float> run_matmul_cuda(const MatmulProblem& p, const LaunchConfig& config,
                                          const std::vector<float>* bias = nullptr) {
  DeviceFloats a(p.a), b(p.b), c(p.c_init);
  if (bias != nullptr) {
    DeviceFloats d_bias(*bias);
    matmul_bias_cuda(p.args, a.ptr, b.ptr, d_bias.ptr, c.ptr, config);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  } else {
    matmul_cuda(p.args, a.ptr, b.ptr, c.ptr, config);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  return c.download(p.c_init.size());
}

// C of problem p after the scalar reference (bl::matmul_reference).
inline std::vector<float> run_matmul_reference(const MatmulProblem& p) {
  std::vector<float> c = p.c_init;
  matmul_reference(p.args, p.a.data(), p.b.data(), c.data());
  return c;
}

}  // namespace bl::conformance
