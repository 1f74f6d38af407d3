// compat.h: the few macros that let one kernel source compile for every backend.
//
// The contract headers (src/contract/) and the kernel bodies keep to the subset of C++14 that
// g++/clang, nvcc, hipcc and the Metal Shading Language all accept: no lambdas in device code, no
// virtual functions, no exceptions, no std:: calls in device code, no float64 arithmetic.
#pragma once

#include <stdint.h>
#include <string.h>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>  // __host__, __device__, __forceinline__ come from the HIP runtime
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
#define BL_GPU_COMPILER 1
#define BL_HD __host__ __device__ __forceinline__
#define BL_DEVICE __device__ __forceinline__
#define BL_GLOBAL_PTR /* CUDA and HIP use a flat address space */
#else
#define BL_GPU_COMPILER 0
#define BL_HD inline
#define BL_DEVICE inline
#define BL_GLOBAL_PTR
#endif

// True while compiling code that runs on a GPU (as opposed to the host pass of nvcc).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define BL_DEVICE_PASS 1
#else
#define BL_DEVICE_PASS 0
#endif

// `device` while compiling device code, `host` otherwise: for the operations whose two versions
// differ only in the intrinsic or the copy of a table they name.
#if BL_DEVICE_PASS
#define BL_DEVICE_OR_HOST(device, host) device
#else
#define BL_DEVICE_OR_HOST(device, host) host
#endif

// A constant table of `size` values of `type` from one value list: name##Host for host code and,
// under a GPU compiler, name##Device in constant memory for device code. BL_CONSTANT_TABLE(name)
// is the copy of the code being compiled.
#if BL_GPU_COMPILER
#define BL_DEVICE_TABLE_DEFINE(type, name, size, ...) static __constant__ type name##Device[size] = {__VA_ARGS__};
#else
#define BL_DEVICE_TABLE_DEFINE(type, name, size, ...)
#endif
#define BL_CONSTANT_TABLE_DEFINE(type, name, size, ...) \
  BL_DEVICE_TABLE_DEFINE(type, name, size, __VA_ARGS__) constexpr type name##Host[size] = {__VA_ARGS__};
#define BL_CONSTANT_TABLE(name) BL_DEVICE_OR_HOST(name##Device, name##Host)

namespace bl {

// The bits of `from` as a `To` of the same size (host code; device code names the intrinsic).
template <typename To, typename From>
BL_HD To bit_copy(From from) {
  static_assert(sizeof(To) == sizeof(From), "bit_copy: the two types differ in size");
  To to;
  memcpy(&to, &from, sizeof to);
  return to;
}

// Bit casts between binary32 and its 32-bit pattern.
BL_HD uint32_t bits_of(float x) { return BL_DEVICE_OR_HOST(__float_as_uint(x), bit_copy<uint32_t>(x)); }
BL_HD float float_of(uint32_t u) { return BL_DEVICE_OR_HOST(__uint_as_float(u), bit_copy<float>(u)); }

}  // namespace bl
