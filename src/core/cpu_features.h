// cpu_features.h: what the CPU offers (vendor, ISA extensions) and the state of its floating-point
// control register.
//
// The contract needs IEEE round-to-nearest-even with subnormals preserved. On x86-64 that is the
// MXCSR register (FTZ bit 15, DAZ bit 6, rounding bits 13-14); on AArch64 the FPCR register (FZ bit
// 24, rounding bits 22-23, and with FEAT_AFP FIZ bit 0 and AH bit 1). Any shared library built
// with -ffast-math that is loaded into the process may set FTZ/DAZ for everyone, so the library
// checks this state in tests and in `bitlearn doctor`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bl {

struct CpuFeatures {
  std::string arch;    // "x86_64", "aarch64" or "unknown"
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", implementer name on AArch64, or ""
  std::string brand;   // marketing name when the CPU reports one, else ""
  // Names of the ISA extensions present and usable (OS support checked for AVX state), in a
  // fixed order: e.g. "sse2", "avx", "avx2", "fma", "avx512f", ... or "neon", "sve", ...
  std::vector<std::string> isa;

  // True when isa holds name.
  bool has(const std::string& name) const;
};

// Detects the features of the CPU running this process (cpuid/xgetbv on x86-64, the auxiliary
// vector and /proc/cpuinfo on AArch64 Linux).
CpuFeatures detect_cpu_features();

// The floating-point control state of the calling thread.
struct FpState {
  std::string register_name;  // "MXCSR", "FPCR" or "none"
  uint64_t raw = 0;           // the register's control bits (MXCSR without its exception flags)
  bool flush_to_zero = false;         // results that would be subnormal become zero (FTZ / FZ)
  bool denormals_are_zero = false;    // subnormal inputs read as zero (DAZ / FIZ)
  bool alternate_handling = false;    // AArch64 FPCR.AH (FEAT_AFP): changes NaN and flush rules
  std::string rounding;       // "nearest", "up", "down", "toward-zero"
  bool known = false;         // false on architectures where the register cannot be read

  // True when the state is what the contract requires (or cannot be read: nothing to check).
  bool ok() const;
  // One line: "MXCSR=0x1f80 rounding=nearest FTZ=off DAZ=off", plus the problems when not ok.
  std::string describe() const;
};

// Reads the calling thread's floating-point control register.
FpState read_fp_state();

// True when the calling thread's FP control state meets the contract; otherwise false and, when
// message is not null, *message says what is wrong (e.g. "FTZ is set in MXCSR=0x9f80").
bool fp_state_ok(std::string* message = nullptr);

// Raw access to the control register (MXCSR or FPCR) of the calling thread, for tests that set a
// bad state on purpose and restore it; no-ops returning 0 on other architectures. Pass only a value
// read from fp_control_word() with documented bits changed: reserved MXCSR bits fault.
uint64_t fp_control_word();
void set_fp_control_word(uint64_t value);

}  // namespace bl
