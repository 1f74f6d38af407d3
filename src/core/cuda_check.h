// cuda_check.h: error checking for CUDA runtime calls (host code in .cu files only).
#pragma once

#include <cuda_runtime.h>

#include "core/error.h"

#define BL_CUDA_CHECK(call)                                                              \
  do {                                                                                   \
    cudaError_t bl_cuda_status_ = (call);                                                \
    if (bl_cuda_status_ != cudaSuccess)                                                  \
      throw ::bl::Error(::bl::detail::concat("CUDA error in ", #call, ": ",              \
                                             cudaGetErrorString(bl_cuda_status_)));      \
  } while (0)
