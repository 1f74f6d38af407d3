// Tests of the contract's exp/log family (src/contract/math/exp_log.h).
//
// The expected results below were computed outside this program with MPFR (256-bit working
// precision, then one rounding to binary32 with subnormals): the per-function FNV-1a digests of the
// results on 32768 sampled inputs, a few of those (input, result) pairs in clear, and edge probes.
// Every function is meant to be correctly rounded, so the digests must match exactly.
// The sabotage arms rebuild a function from the same building blocks with one step broken and
// check that the same comparison catches it.
#include <gtest/gtest.h>

#include <cstdint>

#include "contract/math.h"

namespace {

using unary_fn = float (*)(float);
using fast_fn = float (*)(float, bool*);

struct function_info {
  const char* name;
  unary_fn fn;
  fast_fn fast;
  unary_fn with_table;  // the split form: fast path, then the exception table where flagged
  float range_lo;
  float range_hi;
  uint64_t expected_digest;  // MPFR, see above
};

#define BL_SPLIT_FORM(name)                                                 \
  float name##_with_table(float x) {                                        \
    bool hard;                                                              \
    float y = bl::exp_log_detail::name##_fast(x, &hard);                    \
    return hard ? bl::exp_log_detail::name##_exception(x, y) : y;          \
  }                                                                         \
  float f_##name(float x) { return bl::name(x); }
BL_SPLIT_FORM(exp)
BL_SPLIT_FORM(expm1)
BL_SPLIT_FORM(log)
BL_SPLIT_FORM(log1p)
BL_SPLIT_FORM(log2)
BL_SPLIT_FORM(tanh)
BL_SPLIT_FORM(sigmoid)
BL_SPLIT_FORM(silu)
BL_SPLIT_FORM(softplus)
BL_SPLIT_FORM(gelu_tanh)
#undef BL_SPLIT_FORM

const function_info kFunctions[10] = {
    {"exp", f_exp, bl::exp_log_detail::exp_fast, exp_with_table, -1.0f, 110.0f, 0x52499696F7965DC6ull},
    {"expm1", f_expm1, bl::exp_log_detail::expm1_fast, expm1_with_table, -1.0f, 100.0f, 0xD829C9443E915812ull},
    {"log", f_log, bl::exp_log_detail::log_fast, log_with_table, 0.5f, 4.0f, 0x016D56749C31584Bull},
    {"log1p", f_log1p, bl::exp_log_detail::log1p_fast, log1p_with_table, -1.0f, 3.4e38f, 0x1963F0DF8F6CD5FEull},
    {"log2", f_log2, bl::exp_log_detail::log2_fast, log2_with_table, 0.0f, 3.4e38f, 0x1C1636C92F0F3087ull},
    {"tanh", f_tanh, bl::exp_log_detail::tanh_fast, tanh_with_table, -1.0f, 12.0f, 0x92984CBE06918772ull},
    {"sigmoid", f_sigmoid, bl::exp_log_detail::sigmoid_fast, sigmoid_with_table, -1.0f, 120.0f, 0xB5008E917FB2A200ull},
    {"silu", f_silu, bl::exp_log_detail::silu_fast, silu_with_table, -1.0f, 120.0f, 0x16F4856061E0F39Full},
    {"softplus", f_softplus, bl::exp_log_detail::softplus_fast, softplus_with_table, -1.0f, 120.0f, 0x82ED8831C62841EEull},
    {"gelu_tanh", f_gelu_tanh, bl::exp_log_detail::gelu_tanh_fast, gelu_tanh_with_table, -1.0f, 14.0f, 0xEA5F5FAC548EB104ull},
};

// Input i of a function's sample (xorshift32 state s): even i: any bit pattern; odd i: a finite
// value with |x| <= range_hi (x >= range_lo when range_lo >= 0), spread evenly over the bit patterns.
uint32_t next_random(uint32_t* s) {
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *s = x;
  return x;
}

uint32_t sample_input(uint32_t* s, int i, float range_lo, float range_hi) {
  uint32_t r = next_random(s);
  if ((i & 1) == 0) return r;
  uint32_t hi_bits = bl::bits_of(range_hi);
  if (range_lo >= 0.0f) {
    uint32_t lo_bits = bl::bits_of(range_lo);
    return lo_bits + r % (hi_bits - lo_bits + 1u);
  }
  return (r % (hi_bits + 1u)) | (next_random(s) & 0x80000000u);
}

uint64_t fnv1a_update(uint64_t h, uint32_t v) {
  for (int k = 0; k < 4; ++k) {
    h ^= (v >> (8 * k)) & 0xFFu;
    h *= 1099511628211ull;
  }
  return h;
}

// FNV-1a digest of fn over the 32768 sampled inputs of function f.
uint64_t sample_digest(int f, unary_fn fn) {
  uint32_t s = 0x9E3779B9u ^ static_cast<uint32_t>(f * 0x85EBCA6Bu);
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 32768; ++i) {
    float x = bl::float_of(sample_input(&s, i, kFunctions[f].range_lo, kFunctions[f].range_hi));
    h = fnv1a_update(h, bl::bits_of(fn(x)));
  }
  return h;
}

// Number of sampled inputs where fn and the real function differ.
int sample_differences(int f, unary_fn fn) {
  uint32_t s = 0x9E3779B9u ^ static_cast<uint32_t>(f * 0x85EBCA6Bu);
  int n = 0;
  for (int i = 0; i < 32768; ++i) {
    float x = bl::float_of(sample_input(&s, i, kFunctions[f].range_lo, kFunctions[f].range_hi));
    n += bl::bits_of(fn(x)) != bl::bits_of(kFunctions[f].fn(x)) ? 1 : 0;
  }
  return n;
}

struct bits_case {
  int f;
  uint32_t x;
  uint32_t y;
};

// (function index, input bits, correctly rounded result bits) from the sample above: MPFR.
const bits_case kMpfrCases[] = {
    {0, 0x510C4619u, 0x7F800000u},
    {0, 0x179A553Bu, 0x3F800000u},
    {0, 0x0183A8B5u, 0x3F800000u},
    {0, 0x9D9F6D1Cu, 0x3F800000u},
    {0, 0xBA2529D0u, 0x3F7FD6B9u},
    {0, 0xB467EDBCu, 0x3F7FFFFCu},
    {0, 0xB55A53B8u, 0x3F7FFFF2u},
    {0, 0x9A88A9EEu, 0x3F800000u},
    {0, 0x92551F5Bu, 0x3F800000u},
    {0, 0x2F371D47u, 0x3F800000u},
    {0, 0x97BEF769u, 0x3F800000u},
    {0, 0x38C991BCu, 0x3F800326u},
    {0, 0xA1ABB63Du, 0x3F800000u},
    {0, 0x40124D4Au, 0x411D5CF6u},
    {0, 0x02FFB1C3u, 0x3F800000u},
    {1, 0x39701521u, 0x39701C2Au},
    {1, 0xC15131ABu, 0xBF7FFFDDu},
    {1, 0x76279D1Eu, 0x7F800000u},
    {1, 0xB507E45Cu, 0xB507E45Au},
    {1, 0x349AB2C1u, 0x349AB2C2u},
    {1, 0xBA96D7A0u, 0xBA96C16Au},
    {1, 0xF68CB8D1u, 0xBF800000u},
    {1, 0x907BAB59u, 0x907BAB59u},
    {1, 0x2EAD0089u, 0x2EAD0089u},
    {1, 0xAEEA08E4u, 0xAEEA08E4u},
    {1, 0x920FBF12u, 0x920FBF12u},
    {1, 0x1B1D5D5Cu, 0x1B1D5D5Cu},
    {1, 0x8625A054u, 0x8625A054u},
    {1, 0x34E30F66u, 0x34E30F69u},
    {1, 0x3CAED967u, 0x3CB0BA83u},
    {2, 0x81E46069u, 0x7FC00000u},
    {2, 0x404194C8u, 0x3F8DAC14u},
    {2, 0xCEA8F5CEu, 0x7FC00000u},
    {2, 0x3F3AE47Au, 0xBEA11902u},
    {2, 0x5DD62B2Bu, 0x42286A0Du},
    {2, 0x3F53E8D3u, 0xBE418E03u},
    {2, 0x8D4FC9C8u, 0x7FC00000u},
    {2, 0x3F288CECu, 0xBED5FC84u},
    {2, 0x3FE9E23Cu, 0x3F1A50B2u},
    {2, 0x3F5DC7D6u, 0xBE12EEBAu},
    {2, 0x3F70F91Fu, 0xBD77C679u},
    {2, 0x3F15D432u, 0xBF09228Fu},
    {2, 0x3FAD5313u, 0x3E9B348Eu},
    {2, 0x3FDC7229u, 0x3F0B2AD3u},
    {2, 0x3F24CAFDu, 0xBEE1879Du},
    {3, 0xEE470ECDu, 0x7FC00000u},
    {3, 0x7CCBBFA3u, 0x42AA0EC1u},
    {3, 0x8B24E663u, 0x8B24E663u},
    {3, 0x6B7975D8u, 0x4273E261u},
    {3, 0x9AC8048Bu, 0x9AC8048Bu},
    {3, 0x51FC53A8u, 0x41CD0E52u},
    {3, 0x8D8D86F2u, 0x8D8D86F2u},
    {3, 0x17A9099Cu, 0x17A9099Cu},
    {3, 0xE0AC9586u, 0x7FC00000u},
    {3, 0xB3DE9EF1u, 0xB3DE9EF2u},
    {3, 0xDE15B7EFu, 0x7FC00000u},
    {3, 0xFDBDA875u, 0x7FC00000u},
    {3, 0x080C62D1u, 0x080C62D1u},
    {3, 0x4A35472Cu, 0x416E772Au},
    {3, 0x4D2D5D05u, 0x4198258Cu},
    {4, 0xF0CC8AD8u, 0x7FC00000u},
    {4, 0x5360F873u, 0x421F411Eu},
    {4, 0xC1B976C4u, 0x7FC00000u},
    {4, 0x0351AFF4u, 0xC2F09368u},
    {4, 0xE349A0C3u, 0x7FC00000u},
    {4, 0x3D64C60Bu, 0xC08530EFu},
    {4, 0x111B6FF9u, 0xC2B9708Bu},
    {4, 0x60EA774Cu, 0x4285BF19u},
    {4, 0x0A92D76Du, 0xC2D39A91u},
    {4, 0x0BF245B3u, 0xC2CE28B6u},
    {4, 0x0771F1A6u, 0xC2E029B7u},
    {4, 0x47680A9Cu, 0x417DBB58u},
    {4, 0x3803FEB2u, 0xC16F4A64u},
    {4, 0x48ADDC9Du, 0x419388CDu},
    {4, 0x32FD9A0Fu, 0xC1C81BCFu},
    {5, 0xF11A80E2u, 0xBF800000u},
    {5, 0x40949C40u, 0x3F7FF3E0u},
    {5, 0x41A549A2u, 0x3F800000u},
    {5, 0x36FEC0A7u, 0x36FEC0A7u},
    {5, 0x01578D52u, 0x01578D52u},
    {5, 0x2B8B10A9u, 0x2B8B10A9u},
    {5, 0x2D4CACA7u, 0x2D4CACA7u},
    {5, 0xA15A09A9u, 0xA15A09A9u},
    {5, 0x0AF38059u, 0x0AF38059u},
    {5, 0xBC1C2A1Fu, 0xBC1C28E9u},
    {5, 0x220CA44Bu, 0x220CA44Bu},
    {5, 0x226CB1CBu, 0x226CB1CBu},
    {5, 0xBBDAE165u, 0xBBDAE090u},
    {5, 0x26CCC167u, 0x26CCC167u},
    {5, 0x2446FB35u, 0x2446FB35u},
    {6, 0x2F8A5790u, 0x3F000000u},
    {6, 0x01A4C0A9u, 0x3F000000u},
    {6, 0x34FD83FBu, 0x3F000002u},
    {6, 0x14D696FAu, 0x3F000000u},
    {6, 0x296F9942u, 0x3F000000u},
    {6, 0x0CD1383Fu, 0x3F000000u},
    {6, 0x36628DA6u, 0x3F00000Eu},
    {6, 0x9739B7EBu, 0x3F000000u},
    {6, 0xAA69CED8u, 0x3F000000u},
    {6, 0x2AA6F00Du, 0x3F000000u},
    {6, 0x1A3AA302u, 0x3F000000u},
    {6, 0x2E2B02FCu, 0x3F000000u},
    {6, 0x97BEC305u, 0x3F000000u},
    {6, 0x8FCFFFE4u, 0x3F000000u},
    {6, 0x1C24D454u, 0x3F000000u},
    {7, 0xA4898983u, 0xA4098983u},
    {7, 0xA28DC8BFu, 0xA20DC8BFu},
    {7, 0x07A2EEAAu, 0x0722EEAAu},
    {7, 0x9487F1B1u, 0x9407F1B1u},
    {7, 0x6C3E96F7u, 0x6C3E96F7u},
    {7, 0x9FF51966u, 0x9F751966u},
    {7, 0x15157F00u, 0x14957F00u},
    {7, 0x9B816D37u, 0x9B016D37u},
    {7, 0x1CF33849u, 0x1C733849u},
    {7, 0x81CD961Eu, 0x814D961Eu},
    {7, 0x41D6732Du, 0x41D6732Du},
    {7, 0x13A82350u, 0x13282350u},
    {7, 0x8B565480u, 0x8AD65480u},
    {7, 0x3520EDC7u, 0x34A0EDCAu},
    {7, 0x873285CAu, 0x86B285CAu},
    {8, 0x129D5F9Bu, 0x3F317218u},
    {8, 0x0EC206AAu, 0x3F317218u},
    {8, 0xBDD60E75u, 0x3F246AA4u},
    {8, 0x363A9F56u, 0x3F31722Fu},
    {8, 0x82EAAC47u, 0x3F317218u},
    {8, 0xBB26D936u, 0x3F311EB9u},
    {8, 0x7786CAEFu, 0x7786CAEFu},
    {8, 0x32C4CDC1u, 0x3F317218u},
    {8, 0xBC4FFE3Fu, 0x3F2FD36Du},
    {8, 0xC0DF4362u, 0x3A747F82u},
    {8, 0x37654635u, 0x3F31728Bu},
    {8, 0x3FD128D4u, 0x3FE7FA0Du},
    {8, 0xB996931Cu, 0x3F3168AFu},
    {8, 0x22A0736Bu, 0x3F317218u},
    {8, 0x09EBEBB7u, 0x3F317218u},
    {9, 0x79BE97E3u, 0x79BE97E3u},
    {9, 0xC056EA00u, 0xBA8AED25u},
    {9, 0x04EE2348u, 0x046E2348u},
    {9, 0x8C4F2268u, 0x8BCF2268u},
    {9, 0xCB4515DDu, 0x80000000u},
    {9, 0x94CEA561u, 0x944EA561u},
    {9, 0xCD172EACu, 0x80000000u},
    {9, 0x3095E36Du, 0x3015E36Du},
    {9, 0x3C093A1Cu, 0x3B8A24E0u},
    {9, 0x39EB07B8u, 0x396B1D3Du},
    {9, 0xB4624931u, 0xB3E2492Fu},
    {9, 0xB3D2629Au, 0xB3526299u},
    {9, 0x2850C829u, 0x27D0C829u},
    {9, 0x3B811C70u, 0x3B018459u},
    {9, 0x87F36F8Au, 0x87736F8Au},
};

// Edge probes (subnormal results, overflow and underflow thresholds, tiny inputs): MPFR.
const bits_case kMpfrProbes[] = {
    {0, 0xC2C80000u, 0x0000001Bu},  // exp(-100) = 3.78350585e-44
    {0, 0xC2CF0000u, 0x00000001u},  // exp(-103.5) = 1.40129846e-45
    {0, 0xC2AF0000u, 0x006CB2BCu},  // exp(-87.5) = 9.9823514e-39
    {0, 0x42B17217u, 0x7F7FFF84u},  // exp(88.7228317) = 3.40279852e+38
    {0, 0x42B17218u, 0x7F800000u},  // exp(88.7228394) = inf
    {0, 0xC2CFF1B4u, 0x00000001u},  // exp(-103.972076) = 1.40129846e-45
    {0, 0xC2CFF1B5u, 0x00000000u},  // exp(-103.972084) = 0
    {0, 0x0DA24260u, 0x3F800000u},  // exp(1e-30) = 1
    {0, 0x8DA24260u, 0x3F800000u},  // exp(-1e-30) = 1
    {1, 0x8DA24260u, 0x8DA24260u},  // expm1(-1e-30) = -1e-30
    {1, 0x42B16666u, 0x7F7A37FCu},  // expm1(88.6999969) = 3.32597686e+38
    {1, 0xC1880000u, 0xBF7FFFFFu},  // expm1(-17) = -0.99999994
    {1, 0x2EDBE6FFu, 0x2EDBE6FFu},  // expm1(1.00000001e-10) = 1.00000001e-10
    {1, 0x3F000000u, 0x3F261299u},  // expm1(0.5) = 0.648721278
    {2, 0x00000001u, 0xC2CE8ED0u},  // log(1.40129846e-45) = -103.278931
    {2, 0x000116C2u, 0xC2B834F2u},  // log(9.9999461e-41) = -92.1034088
    {2, 0x7F7FFFFFu, 0x42B17218u},  // log(3.40282347e+38) = 88.7228394
    {2, 0x3F7FFFFFu, 0xB3800000u},  // log(0.99999994) = -5.96046448e-08
    {2, 0x3F800001u, 0x33FFFFFFu},  // log(1.00000012) = 1.19209282e-07
    {3, 0xBF7FFFFFu, 0xC1851592u},  // log1p(-0.99999994) = -16.6355324
    {3, 0x000116C2u, 0x000116C2u},  // log1p(9.9999461e-41) = 9.9999461e-41
    {3, 0x9E3CE508u, 0x9E3CE508u},  // log1p(-9.99999968e-21) = -9.99999968e-21
    {3, 0x7F7FFFFFu, 0x42B17218u},  // log1p(3.40282347e+38) = 88.7228394
    {4, 0x000116C2u, 0xC304E08Cu},  // log2(9.9999461e-41) = -132.877136
    {4, 0x7F7FFFFFu, 0x43000000u},  // log2(3.40282347e+38) = 128
    {4, 0x3F7FFFFFu, 0xB3B8AA3Cu},  // log2(0.99999994) = -8.59913314e-08
    {5, 0x000116C2u, 0x000116C2u},  // tanh(9.9999461e-41) = 9.9999461e-41
    {5, 0x800116C2u, 0x800116C2u},  // tanh(-9.9999461e-41) = -9.9999461e-41
    {5, 0x41000000u, 0x3F7FFFFCu},  // tanh(8) = 0.999999762
    {5, 0xBF000000u, 0xBEEC9A9Fu},  // tanh(-0.5) = -0.462117165
    {6, 0xC2C80000u, 0x0000001Bu},  // sigmoid(-100) = 3.78350585e-44
    {6, 0xC2B00000u, 0x0041EDC4u},  // sigmoid(-88) = 6.05460149e-39
    {6, 0x41800000u, 0x3F7FFFFEu},  // sigmoid(16) = 0.999999881
    {6, 0x800116C2u, 0x3F000000u},  // sigmoid(-9.9999461e-41) = 0.5
    {7, 0xC2C80000u, 0x80000A5Fu},  // silu(-100) = -3.72044742e-42
    {7, 0xC2CE0000u, 0x80000088u},  // silu(-103) = -1.90576591e-43
    {7, 0x000116C2u, 0x00008B61u},  // silu(9.9999461e-41) = 4.99997305e-41
    {7, 0x800116C2u, 0x80008B61u},  // silu(-9.9999461e-41) = -4.99997305e-41
    {7, 0x807FFFFFu, 0x803FFFFFu},  // silu(-1.17549421e-38) = -5.87747035e-39
    {7, 0x41A00000u, 0x41A00000u},  // silu(20) = 20
    {8, 0xC2C80000u, 0x0000001Bu},  // softplus(-100) = 3.78350585e-44
    {8, 0xC2B40000u, 0x0008EC28u},  // softplus(-90) = 8.19400869e-40
    {8, 0x417E6666u, 0x417E6666u},  // softplus(15.8999996) = 15.8999996
    {8, 0x800116C2u, 0x3F317218u},  // softplus(-9.9999461e-41) = 0.693147182
    {8, 0x000116C2u, 0x3F317218u},  // softplus(9.9999461e-41) = 0.693147182
    {9, 0xC1200000u, 0x8223E47Fu},  // gelu_tanh(-10) = -1.20409239e-37
    {9, 0xC1280000u, 0x80000212u},  // gelu_tanh(-10.5) = -7.42688186e-43
    {9, 0x000116C2u, 0x00008B61u},  // gelu_tanh(9.9999461e-41) = 4.99997305e-41
    {9, 0x800116C2u, 0x80008B61u},  // gelu_tanh(-9.9999461e-41) = -4.99997305e-41
    {9, 0x807FFFFFu, 0x803FFFFFu},  // gelu_tanh(-1.17549421e-38) = -5.87747035e-39
    {9, 0x40A00000u, 0x40A00000u},  // gelu_tanh(5) = 5
};

// Exact results defined by IEEE 754 / C99 Annex F, or by the formula at the limits.
const uint32_t kNan = 0x7FC00000u;
const uint32_t kPosInf = 0x7F800000u;
const uint32_t kNegInf = 0xFF800000u;
const bits_case kSpecialCases[] = {
    // exp
    {0, 0x7FC00000u, kNan}, {0, 0xFFC00001u, kNan}, {0, 0x7F800001u, kNan}, {0, 0x00000000u, 0x3F800000u},
    {0, 0x80000000u, 0x3F800000u}, {0, kPosInf, kPosInf}, {0, kNegInf, 0x00000000u},
    {0, 0x43480000u, kPosInf}, {0, 0xC3480000u, 0x00000000u},
    // expm1
    {1, 0xFFC00001u, kNan}, {1, 0x00000000u, 0x00000000u}, {1, 0x80000000u, 0x80000000u},
    {1, kPosInf, kPosInf}, {1, kNegInf, 0xBF800000u}, {1, 0x00000001u, 0x00000001u}, {1, 0x80000001u, 0x80000001u},
    // log
    {2, 0xFFC00001u, kNan}, {2, 0x00000000u, kNegInf}, {2, 0x80000000u, kNegInf}, {2, 0x3F800000u, 0x00000000u},
    {2, 0xBF800000u, kNan}, {2, 0x80000001u, kNan}, {2, kNegInf, kNan}, {2, kPosInf, kPosInf},
    // log1p
    {3, 0xFFC00001u, kNan}, {3, 0x00000000u, 0x00000000u}, {3, 0x80000000u, 0x80000000u},
    {3, 0xBF800000u, kNegInf}, {3, 0xC0000000u, kNan}, {3, kNegInf, kNan}, {3, kPosInf, kPosInf},
    {3, 0x80000001u, 0x80000001u},
    // log2
    {4, 0xFFC00001u, kNan}, {4, 0x3F800000u, 0x00000000u}, {4, 0x40000000u, 0x3F800000u},
    {4, 0x3F000000u, 0xBF800000u}, {4, 0x00000001u, 0xC3150000u}, {4, 0x7F000000u, 0x42FE0000u},
    {4, 0x00000000u, kNegInf}, {4, 0x80000000u, kNegInf}, {4, 0xBF800000u, kNan}, {4, kPosInf, kPosInf},
    // tanh
    {5, 0xFFC00001u, kNan}, {5, 0x00000000u, 0x00000000u}, {5, 0x80000000u, 0x80000000u},
    {5, kPosInf, 0x3F800000u}, {5, kNegInf, 0xBF800000u}, {5, 0x00000001u, 0x00000001u},
    {5, 0x80000001u, 0x80000001u}, {5, 0x42C80000u, 0x3F800000u}, {5, 0xC2C80000u, 0xBF800000u},
    // sigmoid
    {6, 0xFFC00001u, kNan}, {6, 0x00000000u, 0x3F000000u}, {6, 0x80000000u, 0x3F000000u},
    {6, kPosInf, 0x3F800000u}, {6, kNegInf, 0x00000000u}, {6, 0x43480000u, 0x3F800000u}, {6, 0xC3480000u, 0x00000000u},
    // silu
    {7, 0xFFC00001u, kNan}, {7, 0x00000000u, 0x00000000u}, {7, 0x80000000u, 0x80000000u},
    {7, kPosInf, kPosInf}, {7, kNegInf, 0x80000000u}, {7, 0x43480000u, 0x43480000u}, {7, 0xC3480000u, 0x80000000u},
    // softplus
    {8, 0xFFC00001u, kNan}, {8, kPosInf, kPosInf}, {8, kNegInf, 0x00000000u}, {8, 0x00000000u, 0x3F317218u},
    {8, 0x80000000u, 0x3F317218u}, {8, 0x42C80000u, 0x42C80000u}, {8, 0x7F7FFFFFu, 0x7F7FFFFFu},
    // gelu_tanh
    {9, 0xFFC00001u, kNan}, {9, 0x00000000u, 0x00000000u}, {9, 0x80000000u, 0x80000000u},
    {9, kPosInf, kPosInf}, {9, kNegInf, 0x80000000u}, {9, 0x42C80000u, 0x42C80000u}, {9, 0xC2C80000u, 0x80000000u},
};

void expect_cases(const bits_case* cases, size_t n, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    const bits_case& c = cases[i];
    float y = kFunctions[c.f].fn(bl::float_of(c.x));
    EXPECT_EQ(bl::bits_of(y), c.y) << what << ": " << kFunctions[c.f].name << "(bits 0x" << std::hex << c.x
                                   << ") gave 0x" << bl::bits_of(y) << ", expected 0x" << c.y;
  }
}

TEST(MathExpLog, SpecialValues) {
  expect_cases(kSpecialCases, sizeof(kSpecialCases) / sizeof(kSpecialCases[0]), "special value");
}

TEST(MathExpLog, MatchesMpfrOnSampledPairs) {
  expect_cases(kMpfrCases, sizeof(kMpfrCases) / sizeof(kMpfrCases[0]), "MPFR pair");
}

TEST(MathExpLog, MatchesMpfrOnEdgeProbes) {
  expect_cases(kMpfrProbes, sizeof(kMpfrProbes) / sizeof(kMpfrProbes[0]), "MPFR probe");
}

TEST(MathExpLog, MatchesMpfrDigestOnSamples) {
  for (int f = 0; f < 10; ++f) {
    EXPECT_EQ(sample_digest(f, kFunctions[f].fn), kFunctions[f].expected_digest)
        << kFunctions[f].name << ": results on the sampled inputs are not the correctly rounded ones";
  }
}

TEST(MathExpLog, SplitFormEqualsPublicForm) {
  for (int f = 0; f < 10; ++f) {
    EXPECT_EQ(sample_differences(f, kFunctions[f].with_table), 0) << kFunctions[f].name;
  }
}

TEST(MathExpLog, Log2OfPowersOfTwoIsExact) {
  for (int k = -149; k <= 127; ++k) {
    float x = k < -126 ? bl::float_of(1u << (k + 149)) : bl::float_of(static_cast<uint32_t>(k + 127) << 23);
    EXPECT_EQ(bl::log2(x), static_cast<float>(k)) << "k = " << k;
  }
}

TEST(MathExpLog, TanhIsOddAndSigmoidComplements) {
  uint32_t s = 12345u;
  for (int i = 0; i < 20000; ++i) {
    float x = bl::float_of(sample_input(&s, 1, -1.0f, 12.0f));
    EXPECT_EQ(bl::bits_of(bl::tanh(bl::neg(x))), bl::bits_of(bl::tanh(x)) ^ 0x80000000u) << x;
    // sigmoid(-x) = 1 - sigmoid(x) in reals; both results are correctly rounded, so they miss
    // the identity by at most half an ulp of each (1 - big is exact for big >= 1/2, and
    // half an ulp of big is at most 2^-25).
    float a = bl::sigmoid(x);
    float b = bl::sigmoid(bl::neg(x));
    float big = a > b ? a : b;
    float small = a > b ? b : a;
    float ulp_small = bl::sub(bl::float_of(bl::bits_of(small) + 1u), small);
    float bound = bl::add(2.98023224e-08f, bl::mul(0.5f, ulp_small));
    EXPECT_LE(bl::abs(bl::sub(bl::sub(1.0f, big), small)), bound) << x;
  }
}

// Increasing functions must not decrease between neighbouring floats (checked in windows).
TEST(MathExpLog, MonotoneOnConsecutiveFloats) {
  const int increasing[] = {0, 1, 2, 3, 4, 5, 6, 8};
  const float starts[] = {-104.0f, -88.0f, -20.0f, -1.0f, -1e-3f, 1e-30f, 0.5f, 0.999f, 1.0f, 2.0f, 80.0f, 1e30f};
  for (int f : increasing) {
    for (float start : starts) {
      float x = start;
      float prev = kFunctions[f].fn(x);
      for (int i = 0; i < 2000; ++i) {
        x = bl::float_of(x < 0.0f ? bl::bits_of(x) - 1u : bl::bits_of(x) + 1u);
        float y = kFunctions[f].fn(x);
        if (!bl::is_nan(prev) && !bl::is_nan(y)) {
          ASSERT_LE(prev, y) << kFunctions[f].name << " decreases at " << x;
        }
        prev = y;
      }
    }
  }
}

// Where the fast path does not flag an input as hard, its result is final (the exception tables
// are only searched for flagged inputs).
TEST(MathExpLog, UnflaggedResultsAreFinal) {
  for (int f = 0; f < 10; ++f) {
    uint32_t s = 777u + static_cast<uint32_t>(f);
    for (int i = 0; i < 4000; ++i) {
      float x = bl::float_of(sample_input(&s, i, kFunctions[f].range_lo, kFunctions[f].range_hi));
      bool hard = false;
      float y = kFunctions[f].fast(x, &hard);
      if (!hard) {
        EXPECT_EQ(bl::bits_of(y), bl::bits_of(kFunctions[f].fn(x))) << kFunctions[f].name;
      }
    }
  }
}

// Inputs whose float-float result rounds the wrong way (found by the exhaustive search, results
// from MPFR): the fast path must flag them, and the exception table must give the right result.
const bits_case kHardCases[] = {
    {0, 0x33800000u, 0x3F800001u},  // exp
    {0, 0x383A3EF1u, 0x3F800175u},  // exp
    {0, 0x39C6BE5Bu, 0x3F800C6Du},  // exp
    {0, 0x39E5BB1Du, 0x3F800E5Du},  // exp
    {1, 0x33B504F3u, 0x33B504F3u},  // expm1
    {1, 0x34000000u, 0x34000001u},  // expm1
    {1, 0x34CA62C1u, 0x34CA62C3u},  // expm1
    {1, 0x3566C158u, 0x3566C15Fu},  // expm1
    {2, 0x03B0FFA6u, 0xC2A5B505u},  // log
    {2, 0x03D2F29Fu, 0xC2A55B2Du},  // log
    {2, 0x0B265D7Bu, 0xC291095Fu},  // log
    {2, 0x0F61FF63u, 0xC2855565u},  // log
    {3, 0x35400003u, 0x353FFFFFu},  // log1p
    {3, 0x36AAD563u, 0x36AAD547u},  // log1p
    {3, 0x36DEDACEu, 0x36DEDA9Du},  // log1p
    {3, 0x3710001Bu, 0x370FFFF3u},  // log1p
    {4, 0x2FD54996u, 0xC1FA1B55u},  // log2
    {4, 0x30554996u, 0xC1F21B55u},  // log2
    {4, 0x30D54996u, 0xC1EA1B55u},  // log2
    {4, 0x31554996u, 0xC1E21B55u},  // log2
    {5, 0x3AC37DE2u, 0x3AC37DD9u},  // tanh
    {5, 0x3BAB6E65u, 0x3BAB6DFFu},  // tanh
    {5, 0x3BB5ECFFu, 0x3BB5EC85u},  // tanh
    {5, 0x3BC8B605u, 0x3BC8B561u},  // tanh
    {6, 0x34C00000u, 0x3F000001u},  // sigmoid
    {6, 0x35600000u, 0x3F000003u},  // sigmoid
    {6, 0x35B00000u, 0x3F000005u},  // sigmoid
    {6, 0x35F00000u, 0x3F000007u},  // sigmoid
};

TEST(MathExpLog, HardCasesAreFlaggedAndFixed) {
  for (const bits_case& c : kHardCases) {
    float x = bl::float_of(c.x);
    bool hard = false;
    float fast = kFunctions[c.f].fast(x, &hard);
    EXPECT_TRUE(hard) << kFunctions[c.f].name << "(bits 0x" << std::hex << c.x << ") not flagged";
    EXPECT_NE(bl::bits_of(fast), c.y) << kFunctions[c.f].name << ": not a hard case any more";
    EXPECT_EQ(bl::bits_of(kFunctions[c.f].fn(x)), c.y) << kFunctions[c.f].name << "(bits 0x" << std::hex << c.x << ")";
  }
}

// ---- sabotage arms: the same digests must catch a deliberately broken variant ----

// exp without the low part of the 2^(j/64) table.
float exp_without_table_lo(float x) {
  using namespace bl::exp_log_detail;
  float xc = bl::is_nan(x) ? 0.0f : clamp_float(x, -104.5f, 89.0f);
  exp_parts e = exp_reduce(xc, 0.0f);
  e.t.lo = 0.0f;
  bool hard;
  float y = round_scaled(exp_mantissa(e), e.m, kErrBitsExp, &hard);
  return bl::is_nan(x) ? bl::canonical_nan() : y;
}

// expm1 with the reduced argument r = x - k*c1 only (the c2, c3 terms and the low-part correction
// are missing).
float expm1_without_r_lo(float x) {
  using namespace bl::exp_log_detail;
  float xc = bl::is_nan(x) ? 0.0f : clamp_float(x, -30.0f, 89.0f);
  exp_parts e = exp_reduce(xc, 0.0f);
  const float shifter = 12582912.0f;
  float kf = bl::sub(bl::fma(xc, k_inv_ln2_x64(), shifter), shifter);
  e.p = expm1_poly(bl::fma(bl::neg(kf), k_ln2_div64_1(), xc));
  int s = e.m > 60 ? e.m - 60 : 0;
  bool hard;
  float y = round_scaled(expm1_from_parts(e, s), s, kErrBitsExpm1, &hard);
  y = bl::abs(x) < 2.98023224e-08f ? x : y;
  return bl::is_nan(x) ? bl::canonical_nan() : y;
}

// The ln(1 + r) part of log, with a given r/3 coefficient (no low part) and optionally without
// the low parts of the -ln(c) table.
float log_variant(float x, float third, bool table_lo) {
  using namespace bl::exp_log_detail;
  bool regular = x > 0.0f && x < bl::float_of(kPosInf);
  log_parts lp = log_reduce(regular ? x : 1.0f);
  float r = lp.r;
  float tail = bl::mul(bl::mul(r, r), bl::fma(bl::fma(bl::fma(r, 1.0f / 7.0f, -1.0f / 6.0f), r, 1.0f / 5.0f), r, -0.25f));
  bl::ff q = bl::ff_add_f(bl::two_prod(third, r), tail);
  bl::ff q2 = bl::fast_two_sum(-0.5f, q.hi);
  q2.lo = bl::add(q2.lo, q.lo);
  bl::ff rq = bl::ff_mul(bl::two_prod(r, r), q2);
  bl::ff p = bl::fast_two_sum(r, rq.hi);
  p.lo = bl::add(p.lo, rq.lo);
  p = bl::fast_two_sum(p.hi, p.lo);
  float l_lo = table_lo ? bl::float_of(log_table_bits(5 * lp.i + 2)) : 0.0f;
  bl::ff l = bl::ff{bl::float_of(log_table_bits(5 * lp.i + 1)), l_lo};
  bl::ff kl = bl::two_prod(lp.k, k_ln2().hi);
  kl.lo = bl::fma(lp.k, k_ln2().lo, kl.lo);
  bool hard;
  float y = round_scaled(bl::ff_add(bl::ff_add(kl, l), p), 0, kErrBitsLog, &hard);
  y = x == 0.0f ? bl::float_of(kNegInf) : y;
  y = x == bl::float_of(kPosInf) ? x : y;
  return (bl::is_nan(x) || x < 0.0f) ? bl::canonical_nan() : y;
}

// log with the r/3 coefficient written as 0.3f (10% off; a sampled test cannot see changes far
// below 2^-30 relative); log without the -ln(c) table low parts.
float log_with_perturbed_coefficient(float x) { return log_variant(x, 0.3f, true); }
float log_without_table_lo(float x) { return log_variant(x, 0.333333343f, false); }

TEST(MathExpLogSabotage, DigestCatchesBrokenVariants) {
  struct arm {
    int f;
    unary_fn broken;
    const char* what;
  };
  const arm arms[] = {{0, exp_without_table_lo, "exp without the table low part"},
                      {1, expm1_without_r_lo, "expm1 without the reduced-argument correction"},
                      {2, log_without_table_lo, "log without the table low part"},
                      {2, log_with_perturbed_coefficient, "log with a perturbed coefficient"}};
  for (const arm& a : arms) {
    EXPECT_NE(sample_digest(a.f, a.broken), kFunctions[a.f].expected_digest) << a.what;
    EXPECT_GT(sample_differences(a.f, a.broken), 0) << a.what;
  }
}

}  // namespace
