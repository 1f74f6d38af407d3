// elementwise_cpu.cpp: CPU entry points of the unary, binary, compare, where, cast and copy kernels.
// Each (op, dtype) pair gets its own instantiation of the map loops (map_cpu.h), picked from a
// table, so the element function is inlined into a loop without per-element dispatch.
#include <array>
#include <utility>

#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/cpu/map_cpu.h"
#include "kernels/elementwise_functors.h"

namespace bl {

// The shared loop helpers of the CPU backend (kernels/cpu/*.h) live in bl::cpu.
using namespace cpu;

namespace {

// ---- unary ----
using UnaryFn = void (*)(const void*, const StridedView&, void*, int64_t, ThreadPool&);

template <int OP>
void unary_f32_one(const void* in, const StridedView& v, void* out, int64_t n, ThreadPool& pool) {
  map1(static_cast<const float*>(in), v, static_cast<float*>(out), n, pool, UnaryF32Fn<OP>());
}
template <int OP, typename I, typename U>
void unary_int_one(const void* in, const StridedView& v, void* out, int64_t n, ThreadPool& pool) {
  map1(static_cast<const I*>(in), v, static_cast<I*>(out), n, pool, UnaryIntFn<OP, I, U>());
}
template <int... OPS>
constexpr std::array<UnaryFn, sizeof...(OPS)> unary_f32_table(std::integer_sequence<int, OPS...>) {
  return {&unary_f32_one<OPS>...};
}
template <typename I, typename U, int... OPS>
constexpr std::array<UnaryFn, sizeof...(OPS)> unary_int_table(std::integer_sequence<int, OPS...>) {
  return {&unary_int_one<OPS, I, U>...};
}

// ---- binary ----
using BinaryFn = void (*)(const void*, const StridedView&, const void*, const StridedView&, void*,
                          int64_t, ThreadPool&);
constexpr int kBinaryOpCount = static_cast<int>(BinaryOp::count_);
constexpr int kCompareOpCount = static_cast<int>(CompareOp::count_);

template <int OP>
void binary_f32_one(const void* a, const StridedView& va, const void* b, const StridedView& vb,
                    void* out, int64_t n, ThreadPool& pool) {
  map2(static_cast<const float*>(a), va, static_cast<const float*>(b), vb, static_cast<float*>(out),
       n, pool, BinaryF32Fn<OP>());
}
template <int OP, typename I, typename U>
void binary_int_one(const void* a, const StridedView& va, const void* b, const StridedView& vb,
                    void* out, int64_t n, ThreadPool& pool) {
  map2(static_cast<const I*>(a), va, static_cast<const I*>(b), vb, static_cast<I*>(out), n, pool,
       BinaryIntFn<OP, I, U>());
}
template <int OP, typename T>
void compare_one(const void* a, const StridedView& va, const void* b, const StridedView& vb,
                 void* out, int64_t n, ThreadPool& pool) {
  map2(static_cast<const T*>(a), va, static_cast<const T*>(b), vb, static_cast<uint8_t*>(out), n,
       pool, CompareFn<OP, T>());
}
template <int... OPS>
constexpr std::array<BinaryFn, sizeof...(OPS)> binary_f32_table(std::integer_sequence<int, OPS...>) {
  return {&binary_f32_one<OPS>...};
}
template <typename I, typename U, int... OPS>
constexpr std::array<BinaryFn, sizeof...(OPS)> binary_int_table(std::integer_sequence<int, OPS...>) {
  return {&binary_int_one<OPS, I, U>...};
}
template <typename T, int... OPS>
constexpr std::array<BinaryFn, sizeof...(OPS)> compare_table(std::integer_sequence<int, OPS...>) {
  return {&compare_one<OPS, T>...};
}

// ---- cast ----
template <typename From, typename To>
void cast_typed(const void* in, const StridedView& v, void* out, int64_t n, ThreadPool& pool) {
  map1(static_cast<const From*>(in), v, static_cast<To*>(out), n, pool, CastFn<From, To>());
}
template <typename From>
void cast_from(DType to, const void* in, const StridedView& v, void* out, int64_t n,
               ThreadPool& pool) {
  switch (to) {
    case DType::f32: cast_typed<From, float>(in, v, out, n, pool); return;
    case DType::i32: cast_typed<From, int32_t>(in, v, out, n, pool); return;
    case DType::i64: cast_typed<From, int64_t>(in, v, out, n, pool); return;
    case DType::u8: cast_typed<From, uint8_t>(in, v, out, n, pool); return;
    case DType::boolean:
      map1(static_cast<const From*>(in), v, static_cast<uint8_t*>(out), n, pool, CastBoolFn<From>());
      return;
  }
}

}  // namespace

void unary_cpu(UnaryOp op, DType dtype, const void* in, const StridedView& v, void* out, int64_t n,
               ThreadPool& pool) {
  static constexpr auto f32 = unary_f32_table(std::make_integer_sequence<int, kUnaryOpCount>());
  static constexpr auto i32 =
      unary_int_table<int32_t, uint32_t>(std::make_integer_sequence<int, kUnaryOpCount>());
  static constexpr auto i64 =
      unary_int_table<int64_t, uint64_t>(std::make_integer_sequence<int, kUnaryOpCount>());
  int k = static_cast<int>(op);
  switch (dtype) {
    case DType::f32: f32[k](in, v, out, n, pool); return;
    case DType::i32: i32[k](in, v, out, n, pool); return;
    case DType::i64: i64[k](in, v, out, n, pool); return;
    default: throw Error(detail::concat(unary_op_name(op), ": no CPU kernel for ", dtype_name(dtype)));
  }
}

void binary_cpu(BinaryOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                const StridedView& vb, void* out, int64_t n, ThreadPool& pool) {
  static constexpr auto f32 = binary_f32_table(std::make_integer_sequence<int, kBinaryOpCount>());
  static constexpr auto i32 =
      binary_int_table<int32_t, uint32_t>(std::make_integer_sequence<int, kBinaryOpCount>());
  static constexpr auto i64 =
      binary_int_table<int64_t, uint64_t>(std::make_integer_sequence<int, kBinaryOpCount>());
  int k = static_cast<int>(op);
  switch (dtype) {
    case DType::f32: f32[k](a, va, b, vb, out, n, pool); return;
    case DType::i32: i32[k](a, va, b, vb, out, n, pool); return;
    case DType::i64: i64[k](a, va, b, vb, out, n, pool); return;
    default: throw Error(detail::concat(binary_op_name(op), ": no CPU kernel for ", dtype_name(dtype)));
  }
}

void compare_cpu(CompareOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                 const StridedView& vb, uint8_t* out, int64_t n, ThreadPool& pool) {
  static constexpr auto f32 = compare_table<float>(std::make_integer_sequence<int, kCompareOpCount>());
  static constexpr auto i32 = compare_table<int32_t>(std::make_integer_sequence<int, kCompareOpCount>());
  static constexpr auto i64 = compare_table<int64_t>(std::make_integer_sequence<int, kCompareOpCount>());
  static constexpr auto u8 = compare_table<uint8_t>(std::make_integer_sequence<int, kCompareOpCount>());
  int k = static_cast<int>(op);
  switch (dtype) {
    case DType::f32: f32[k](a, va, b, vb, out, n, pool); return;
    case DType::i32: i32[k](a, va, b, vb, out, n, pool); return;
    case DType::i64: i64[k](a, va, b, vb, out, n, pool); return;
    case DType::u8:
    case DType::boolean: u8[k](a, va, b, vb, out, n, pool); return;
  }
}

void where_cpu(size_t element_size, const uint8_t* cond, const StridedView& vc, const void* a,
               const StridedView& va, const void* b, const StridedView& vb, void* out, int64_t n,
               ThreadPool& pool) {
  switch (element_size) {
    case 1:
      map3(cond, vc, static_cast<const uint8_t*>(a), va, static_cast<const uint8_t*>(b), vb,
           static_cast<uint8_t*>(out), n, pool, WhereFn<uint8_t>());
      return;
    case 4:
      map3(cond, vc, static_cast<const uint32_t*>(a), va, static_cast<const uint32_t*>(b), vb,
           static_cast<uint32_t*>(out), n, pool, WhereFn<uint32_t>());
      return;
    case 8:
      map3(cond, vc, static_cast<const uint64_t*>(a), va, static_cast<const uint64_t*>(b), vb,
           static_cast<uint64_t*>(out), n, pool, WhereFn<uint64_t>());
      return;
    default: throw Error("where: unsupported element size");
  }
}

void cast_cpu(DType from, DType to, const void* in, const StridedView& v, void* out, int64_t n,
              ThreadPool& pool) {
  switch (from) {
    case DType::f32: cast_from<float>(to, in, v, out, n, pool); return;
    case DType::i32: cast_from<int32_t>(to, in, v, out, n, pool); return;
    case DType::i64: cast_from<int64_t>(to, in, v, out, n, pool); return;
    case DType::u8:
    case DType::boolean: cast_from<uint8_t>(to, in, v, out, n, pool); return;
  }
}

namespace {
template <typename T>
void strided_copy_typed(const T* src, const StridedView& sv, T* dst, const StridedView& dv,
                        int64_t n, ThreadPool& pool) {
  if (strided_is_identity(dv)) {
    map1(src, sv, dst, n, pool, IdentityFn<T>());
    return;
  }
  int64_t last = last_extent(sv), ss = last_stride(sv), ds = last_stride(dv);
  run_chunks(n, pool, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end;) {
      int64_t len = std::min(last - i % last, end - i);
      const T* ps = src + strided_offset(sv, i);
      T* pd = dst + strided_offset(dv, i);
      for (int64_t k = 0; k < len; ++k) pd[k * ds] = ps[k * ss];
      i += len;
    }
  });
}
}  // namespace

void strided_copy_cpu(size_t element_size, const void* src, const StridedView& sv, void* dst,
                      const StridedView& dv, int64_t n, ThreadPool& pool) {
  switch (element_size) {
    case 1:
      strided_copy_typed(static_cast<const uint8_t*>(src), sv, static_cast<uint8_t*>(dst), dv, n, pool);
      return;
    case 4:
      strided_copy_typed(static_cast<const uint32_t*>(src), sv, static_cast<uint32_t*>(dst), dv, n, pool);
      return;
    case 8:
      strided_copy_typed(static_cast<const uint64_t*>(src), sv, static_cast<uint64_t*>(dst), dv, n, pool);
      return;
    default: throw Error("copy: unsupported element size");
  }
}

}  // namespace bl
