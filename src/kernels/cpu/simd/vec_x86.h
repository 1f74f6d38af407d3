// vec_x86.h: the members of the AVX2 and AVX-512 traits whose intrinsics differ only in the register
// width: the prefix P (_mm256 or _mm512) and the integer register suffix SI (si256 or si512). Each
// macro is expanded inside the traits struct (vec_avx2.h, vec_avx512.h, exp_vec_avx2.h,
// exp_vec_avx512.h), which defines F, I (and D, Q for the binary64 members) before it; the
// expansion names exactly the intrinsics the struct would spell out itself.
#pragma once

// Loads, stores and the float arithmetic of every leaf (vec_scalar.h lists the operation set), and
// the total-order key bits ^ ((bits >> 31) & 0x7FFFFFFF) with its int32 operations.
#define BL_SIMD_X86_VEC_OPS(P, SI)                                                                  \
  static F zero() { return P##_setzero_ps(); }                                                      \
  static F set1(float v) { return P##_set1_ps(v); }                                                 \
  static F loadu(const float* p) { return P##_loadu_ps(p); }                                        \
  static void store(float* aligned, F v) { P##_store_ps(aligned, v); }                              \
  static void storeu(float* p, F v) { P##_storeu_ps(p, v); }                                        \
  static F add(F a, F b) { return P##_add_ps(a, b); }                                               \
  static F sub(F a, F b) { return P##_sub_ps(a, b); }                                               \
  static F fma(F a, F b, F c) { return P##_fmadd_ps(a, b, c); }                                     \
  static I key(F v) {                                                                               \
    const I u = P##_castps_##SI(v);                                                                 \
    return P##_xor_##SI(u, P##_and_##SI(P##_srai_epi32(u, 31), P##_set1_epi32(0x7FFFFFFF)));       \
  }                                                                                                 \
  static I set1_i32(int32_t v) { return P##_set1_epi32(v); }                                        \
  static I max_i32(I a, I b) { return P##_max_epi32(a, b); }                                        \
  static I min_i32(I a, I b) { return P##_min_epi32(a, b); }

// The block loads and stores of the binary64 exp traits and their binary64 / 64-bit integer
// arithmetic (exp_f64_table.h names the operations).
#define BL_SIMD_X86_EXP_OPS(P, SI)                                                                  \
  static F load(const float* aligned) { return P##_load_ps(aligned); }                              \
  static void stream(float* aligned, F v) { P##_stream_ps(aligned, v); }                            \
  static void stream_fence() { _mm_sfence(); } /* streamed lines visible to other threads */        \
  static void prefetch(const float* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); } \
  static D set1_d(double v) { return P##_set1_pd(v); }                                              \
  static D fma_d(D a, D b, D c) { return P##_fmadd_pd(a, b, c); }   /* a * b + c */                 \
  static D fnma_d(D a, D b, D c) { return P##_fnmadd_pd(a, b, c); } /* c - a * b */                 \
  static D sub_d(D a, D b) { return P##_sub_pd(a, b); }                                             \
  static D mul_d(D a, D b) { return P##_mul_pd(a, b); }                                             \
  static Q as_q(D v) { return P##_castpd_##SI(v); }                                                 \
  static D as_d(Q v) { return P##_cast##SI##_pd(v); }                                               \
  static Q and_q(Q a, Q b) { return P##_and_##SI(a, b); }                                           \
  static Q add_q(Q a, Q b) { return P##_add_epi64(a, b); }                                          \
  static Q sub_q(Q a, Q b) { return P##_sub_epi64(a, b); }                                          \
  static Q shl48_q(Q a) { return P##_slli_epi64(a, 48); }
