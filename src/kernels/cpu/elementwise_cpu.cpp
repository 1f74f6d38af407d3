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

using UnaryFn = void (*)(const void*, const StridedView&, void*, int64_t, ThreadPool&);
using BinaryFn = void (*)(const void*, const StridedView&, const void*, const StridedView&, void*,
                          int64_t, ThreadPool&);
constexpr int kBinaryOpCount = static_cast<int>(BinaryOp::count_);
constexpr int kCompareOpCount = static_cast<int>(CompareOp::count_);

// One entry point per (element types, element function F): the map loop with F inlined.
template <typename In, typename Out, typename F>
void map1_entry(const void* in, const StridedView& v, void* out, int64_t n, ThreadPool& pool) {
  map1(static_cast<const In*>(in), v, static_cast<Out*>(out), n, pool, F());
}
template <typename In, typename Out, typename F>
void map2_entry(const void* a, const StridedView& va, const void* b, const StridedView& vb, void* out, int64_t n,
                ThreadPool& pool) {
  map2(static_cast<const In*>(a), va, static_cast<const In*>(b), vb, static_cast<Out*>(out), n, pool, F());
}

// The entry points of one kernel and dtype by op: element function F<OP> for OP = 0, 1, ...
template <typename In, typename Out, template <int> class F, int... OPS>
constexpr std::array<UnaryFn, sizeof...(OPS)> map1_table(std::integer_sequence<int, OPS...>) {
  return {&map1_entry<In, Out, F<OPS>>...};
}
template <typename In, typename Out, template <int> class F, int... OPS>
constexpr std::array<BinaryFn, sizeof...(OPS)> map2_table(std::integer_sequence<int, OPS...>) {
  return {&map2_entry<In, Out, F<OPS>>...};
}
// F<OP, Args...> as a template of OP alone (for the tables above).
template <template <int, typename...> class F, typename... Args>
struct BindOp {
  template <int OP>
  using type = F<OP, Args...>;
};

// The entry of op k in the f32, i32 or i64 table; a named error for any other dtype.
template <class Fn, size_t N>
Fn typed_entry(const std::array<Fn, N>& f32, const std::array<Fn, N>& i32, const std::array<Fn, N>& i64,
               DType dtype, int k, const char* op_name) {
  switch (dtype) {
    case DType::f32: return f32[k];
    case DType::i32: return i32[k];
    case DType::i64: return i64[k];
    default: throw Error(detail::concat(op_name, ": no CPU kernel for ", dtype_name(dtype)));
  }
}

// ---- cast ----
template <typename From>
void cast_from(DType to, const void* in, const StridedView& v, void* out, int64_t n,
               ThreadPool& pool) {
  switch (to) {
    case DType::f32: map1_entry<From, float, CastFn<From, float>>(in, v, out, n, pool); return;
    case DType::i32: map1_entry<From, int32_t, CastFn<From, int32_t>>(in, v, out, n, pool); return;
    case DType::i64: map1_entry<From, int64_t, CastFn<From, int64_t>>(in, v, out, n, pool); return;
    case DType::u8: map1_entry<From, uint8_t, CastFn<From, uint8_t>>(in, v, out, n, pool); return;
    case DType::boolean: map1_entry<From, uint8_t, CastBoolFn<From>>(in, v, out, n, pool); return;
  }
}

}  // namespace

void unary_cpu(UnaryOp op, DType dtype, const void* in, const StridedView& v, void* out, int64_t n,
               ThreadPool& pool) {
  using Ops = std::make_integer_sequence<int, kUnaryOpCount>;
  static constexpr auto f32 = map1_table<float, float, UnaryF32Fn>(Ops());
  static constexpr auto i32 = map1_table<int32_t, int32_t, BindOp<UnaryIntFn, int32_t, uint32_t>::type>(Ops());
  static constexpr auto i64 = map1_table<int64_t, int64_t, BindOp<UnaryIntFn, int64_t, uint64_t>::type>(Ops());
  typed_entry(f32, i32, i64, dtype, static_cast<int>(op), unary_op_name(op))(in, v, out, n, pool);
}

void binary_cpu(BinaryOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                const StridedView& vb, void* out, int64_t n, ThreadPool& pool) {
  using Ops = std::make_integer_sequence<int, kBinaryOpCount>;
  static constexpr auto f32 = map2_table<float, float, BinaryF32Fn>(Ops());
  static constexpr auto i32 = map2_table<int32_t, int32_t, BindOp<BinaryIntFn, int32_t, uint32_t>::type>(Ops());
  static constexpr auto i64 = map2_table<int64_t, int64_t, BindOp<BinaryIntFn, int64_t, uint64_t>::type>(Ops());
  typed_entry(f32, i32, i64, dtype, static_cast<int>(op), binary_op_name(op))(a, va, b, vb, out, n, pool);
}

void compare_cpu(CompareOp op, DType dtype, const void* a, const StridedView& va, const void* b,
                 const StridedView& vb, uint8_t* out, int64_t n, ThreadPool& pool) {
  using Ops = std::make_integer_sequence<int, kCompareOpCount>;
  static constexpr auto f32 = map2_table<float, uint8_t, BindOp<CompareFn, float>::type>(Ops());
  static constexpr auto i32 = map2_table<int32_t, uint8_t, BindOp<CompareFn, int32_t>::type>(Ops());
  static constexpr auto i64 = map2_table<int64_t, uint8_t, BindOp<CompareFn, int64_t>::type>(Ops());
  static constexpr auto u8 = map2_table<uint8_t, uint8_t, BindOp<CompareFn, uint8_t>::type>(Ops());
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
