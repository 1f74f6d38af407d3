// cuda_memory_stub.cpp: bitlearn/cuda_memory.h in a build without CUDA (no devices, nothing held).
#include "bitlearn/cuda_memory.h"

#include "core/error.h"

namespace bl {

CudaMemoryStats cuda_memory_stats(int device) {
  BL_CHECK(device >= 0, "cuda_memory_stats: device must be >= 0, got ", device);
  return CudaMemoryStats{};
}

size_t cuda_empty_cache() { return 0; }

}  // namespace bl
