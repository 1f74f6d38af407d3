// cuda_runtime.h for HIP builds: the alias header through which the CUDA sources of bitlearn
// compile for AMD GPUs with hipcc (scripts/hip-compile.sh puts this folder first on the include
// path). It maps the CUDA runtime names the sources use onto their HIP equivalents; kernels are
// unchanged. Warp-level code passes its group width (32) explicitly, so 64-wide AMD wavefronts run
// it as two independent groups and the schedule stays that of the contract.
#pragma once

#include <hip/hip_runtime.h>

#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMallocAsync hipMallocAsync
#define cudaFreeAsync hipFreeAsync
#define cudaMemcpy hipMemcpy
#define cudaMemcpyKind hipMemcpyKind
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaStream_t hipStream_t
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaSetDevice hipSetDevice
#define cudaGetDevice hipGetDevice
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDeviceAttr hipDeviceAttribute_t
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaDevAttrMaxSharedMemoryPerBlockOptin hipDeviceAttributeSharedMemPerBlockOptin
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceProp hipDeviceProp_t
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaFuncAttributes hipFuncAttributes
#define cudaFuncGetAttributes(attr, fn) hipFuncGetAttributes(attr, reinterpret_cast<const void*>(fn))
#define cudaFuncSetAttribute(fn, attr, value) \
  hipFuncSetAttribute(reinterpret_cast<const void*>(fn), attr, value)
#define cudaFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor

// Warp shuffles: HIP of this generation has no *_sync forms; the mask is implied (every lane of
// the group takes part, which is how bitlearn's kernels call them).
#define __shfl_down_sync(mask, value, delta, width) __shfl_down(value, delta, width)
#define __shfl_sync(mask, value, lane, width) __shfl(value, lane, width)
#define __shfl_xor_sync(mask, value, lane_mask, width) __shfl_xor(value, lane_mask, width)
