// CPU feature detection and the floating-point control state, per architecture.
#include "core/cpu_features.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#if defined(__x86_64__) || defined(_M_X64)
#define BL_CPU_X86_64 1
#include <cpuid.h>
#include <xmmintrin.h>
#elif defined(__aarch64__)
#define BL_CPU_AARCH64 1
#if defined(__linux__)
#include <sys/auxv.h>
#endif
#endif

namespace bl {

bool CpuFeatures::has(const std::string& name) const {
  for (const std::string& s : isa)
    if (s == name) return true;
  return false;
}

#if defined(BL_CPU_X86_64)
namespace {

struct CpuidRegs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

CpuidRegs cpuid(unsigned leaf, unsigned subleaf) {
  CpuidRegs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.a, &r.b, &r.c, &r.d)) r = CpuidRegs{};
  return r;
}

// XCR0: which register states the operating system saves on a context switch. Read only after
// cpuid reports OSXSAVE.
uint64_t read_xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool bit(unsigned word, int n) { return ((word >> n) & 1u) != 0; }

}  // namespace

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
  f.arch = "x86_64";
  CpuidRegs r0 = cpuid(0, 0);
  unsigned max_leaf = r0.a;
  char vendor[13] = {};
  std::memcpy(vendor + 0, &r0.b, 4);
  std::memcpy(vendor + 4, &r0.d, 4);
  std::memcpy(vendor + 8, &r0.c, 4);
  f.vendor = vendor;

  CpuidRegs ext = cpuid(0x80000000u, 0);
  if (ext.a >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      CpuidRegs r = cpuid(0x80000002u + i, 0);
      std::memcpy(brand + 16 * i + 0, &r.a, 4);
      std::memcpy(brand + 16 * i + 4, &r.b, 4);
      std::memcpy(brand + 16 * i + 8, &r.c, 4);
      std::memcpy(brand + 16 * i + 12, &r.d, 4);
    }
    std::string s = brand;
    size_t first = s.find_first_not_of(' ');
    size_t last = s.find_last_not_of(' ');
    f.brand = first == std::string::npos ? "" : s.substr(first, last - first + 1);
  }

  CpuidRegs r1 = max_leaf >= 1 ? cpuid(1, 0) : CpuidRegs{};
  CpuidRegs r7 = max_leaf >= 7 ? cpuid(7, 0) : CpuidRegs{};
  CpuidRegs r71 = (max_leaf >= 7 && r7.a >= 1) ? cpuid(7, 1) : CpuidRegs{};
  uint64_t xcr0 = bit(r1.c, 27) ? read_xcr0() : 0;  // OSXSAVE
  bool os_avx = (xcr0 & 0x6u) == 0x6u;             // XMM and YMM state
  bool os_avx512 = os_avx && (xcr0 & 0xE0u) == 0xE0u;  // opmask, ZMM_Hi256, Hi16_ZMM state

  auto add = [&f](bool present, const char* name) {
    if (present) f.isa.push_back(name);
  };
  add(bit(r1.d, 26), "sse2");
  add(bit(r1.c, 0), "sse3");
  add(bit(r1.c, 9), "ssse3");
  add(bit(r1.c, 19), "sse4.1");
  add(bit(r1.c, 20), "sse4.2");
  add(bit(r1.c, 23), "popcnt");
  add(os_avx && bit(r1.c, 28), "avx");
  add(os_avx && bit(r7.b, 5), "avx2");
  add(os_avx && bit(r1.c, 12), "fma");
  add(os_avx && bit(r1.c, 29), "f16c");
  add(bit(r7.b, 3), "bmi1");
  add(bit(r7.b, 8), "bmi2");
  add(os_avx && bit(r71.a, 4), "avx-vnni");
  add(os_avx512 && bit(r7.b, 16), "avx512f");
  add(os_avx512 && bit(r7.b, 17), "avx512dq");
  add(os_avx512 && bit(r7.b, 28), "avx512cd");
  add(os_avx512 && bit(r7.b, 30), "avx512bw");
  add(os_avx512 && bit(r7.b, 31), "avx512vl");
  add(os_avx512 && bit(r7.c, 11), "avx512vnni");
  add(os_avx512 && bit(r71.a, 5), "avx512bf16");
  add(os_avx512 && bit(r7.d, 23), "avx512fp16");
  return f;
}

uint64_t fp_control_word() { return _mm_getcsr(); }
void set_fp_control_word(uint64_t value) { _mm_setcsr(static_cast<unsigned>(value)); }

FpState read_fp_state() {
  FpState s;
  s.register_name = "MXCSR";
  s.known = true;
  // Bits 0-5 are sticky exception flags that any computation may set; only the control bits
  // (masks, DAZ, rounding, FTZ) describe the state, so the flags are left out of raw.
  uint32_t csr = _mm_getcsr() & ~0x3Fu;
  s.raw = csr;
  s.flush_to_zero = (csr >> 15) & 1u;
  s.denormals_are_zero = (csr >> 6) & 1u;
  static const char* const kModes[4] = {"nearest", "down", "up", "toward-zero"};
  s.rounding = kModes[(csr >> 13) & 3u];
  return s;
}

#elif defined(BL_CPU_AARCH64)
namespace {
// ARM's implementer codes (MIDR_EL1 bits 31-24) as printed in /proc/cpuinfo.
std::string implementer_name(unsigned code) {
  switch (code) {
    case 0x41: return "ARM";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4E: return "NVIDIA";
    case 0x50: return "APM";
    case 0x51: return "Qualcomm";
    case 0x61: return "Apple";
    case 0x63: return "Arm China";
    case 0xC0: return "Ampere";
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "implementer 0x%02x", code);
      return buf;
    }
  }
}
}  // namespace

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
  f.arch = "aarch64";
  f.isa.push_back("neon");  // Advanced SIMD is part of the AArch64 base architecture
#if defined(__linux__)
  unsigned long hw = getauxval(AT_HWCAP);
  unsigned long hw2 = getauxval(AT_HWCAP2);
  // Bit numbers of the Linux AArch64 HWCAP/HWCAP2 words (arch/arm64/include/uapi/asm/hwcap.h).
  auto add = [&f](bool present, const char* name) {
    if (present) f.isa.push_back(name);
  };
  add((hw >> 0) & 1ul, "fp");
  add((hw >> 1) & 1ul, "asimd");
  add((hw >> 10) & 1ul, "asimdhp");
  add((hw >> 20) & 1ul, "asimddp");
  add((hw >> 23) & 1ul, "asimdfhm");
  add((hw >> 22) & 1ul, "sve");
  add((hw2 >> 1) & 1ul, "sve2");
  add((hw2 >> 13) & 1ul, "i8mm");
  add((hw2 >> 14) & 1ul, "bf16");
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("CPU implementer", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        f.vendor = implementer_name(static_cast<unsigned>(std::stoul(line.substr(colon + 1), nullptr, 0)));
      break;
    }
  }
#endif
  return f;
}

uint64_t fp_control_word() {
  uint64_t v = 0;
  __asm__ volatile("mrs %0, fpcr" : "=r"(v));
  return v;
}

void set_fp_control_word(uint64_t value) { __asm__ volatile("msr fpcr, %0" : : "r"(value)); }

FpState read_fp_state() {
  FpState s;
  s.register_name = "FPCR";
  s.known = true;
  uint64_t fpcr = fp_control_word();
  s.raw = fpcr;
  s.flush_to_zero = (fpcr >> 24) & 1u;       // FZ
  s.denormals_are_zero = (fpcr >> 0) & 1u;   // FIZ (FEAT_AFP; reads 0 without it)
  s.alternate_handling = (fpcr >> 1) & 1u;   // AH (FEAT_AFP)
  static const char* const kModes[4] = {"nearest", "up", "down", "toward-zero"};
  s.rounding = kModes[(fpcr >> 22) & 3u];
  return s;
}

#else
CpuFeatures detect_cpu_features() {
  CpuFeatures f;
  f.arch = "unknown";
  return f;
}
uint64_t fp_control_word() { return 0; }
void set_fp_control_word(uint64_t) {}
FpState read_fp_state() {
  FpState s;
  s.register_name = "none";
  s.rounding = "nearest";
  return s;
}
#endif

bool FpState::ok() const {
  return !known ||
         (!flush_to_zero && !denormals_are_zero && !alternate_handling && rounding == "nearest");
}

std::string FpState::describe() const {
  if (!known) return "FP control register not readable on this architecture";
  std::ostringstream s;
  char raw_hex[24];
  std::snprintf(raw_hex, sizeof raw_hex, "0x%llx", static_cast<unsigned long long>(raw));
  bool arm = register_name == "FPCR";
  s << register_name << "=" << raw_hex << " rounding=" << rounding << (arm ? " FZ=" : " FTZ=")
    << (flush_to_zero ? "on" : "off") << (arm ? " FIZ=" : " DAZ=")
    << (denormals_are_zero ? "on" : "off");
  if (arm) s << " AH=" << (alternate_handling ? "on" : "off");
  return s.str();
}

bool fp_state_ok(std::string* message) {
  FpState s = read_fp_state();
  if (s.ok()) {
    if (message) *message = s.describe();
    return true;
  }
  if (message) {
    bool arm = s.register_name == "FPCR";
    std::string problems;
    auto note = [&problems](const std::string& p) {
      problems += problems.empty() ? p : "; " + p;
    };
    if (s.flush_to_zero)
      note(std::string(arm ? "FZ" : "FTZ") + " is set (subnormal results flushed to zero)");
    if (s.denormals_are_zero)
      note(std::string(arm ? "FIZ" : "DAZ") + " is set (subnormal inputs read as zero)");
    if (s.alternate_handling) note("AH is set (alternate floating-point behaviour)");
    if (s.rounding != "nearest") note("rounding mode is " + s.rounding + ", not nearest-even");
    *message = problems + " [" + s.describe() + "]";
  }
  return false;
}

}  // namespace bl
