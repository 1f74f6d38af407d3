// `bitlearn doctor`: what this build and this machine are, and whether the numerical contract can
// hold here.
//
// Prints the version and contract profile, the compiler and contract flags of the build, the CPU
// (features, floating-point control state, how the scalar fma is done), the thread count and the
// CUDA devices, then runs the self-checks: FP control state, the contraction probes (baseline,
// AVX2+FMA when the CPU has it, CUDA when a device is present), the scalar fma, and the Philox and
// SHA-256 known answers. Exit code 0 when every check passes, 1 when one fails. `--json` prints the
// same facts as one JSON object.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.h"
#include "contract/arith.h"
#include "contract/rng.h"
#include "core/allocator.h"
#include "core/cpu_features.h"
#include "core/device_info.h"
#include "core/digest.h"
#include "core/fp_probe.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "bitlearn/version.h"

#if !defined(BITLEARN_BUILD_COMPILER)
#define BITLEARN_BUILD_COMPILER __VERSION__
#endif
#if !defined(BITLEARN_BUILD_TYPE)
#define BITLEARN_BUILD_TYPE "unknown"
#endif
#if !defined(BITLEARN_BUILD_CONTRACT_FLAGS)
#define BITLEARN_BUILD_CONTRACT_FLAGS "unknown"
#endif
#if !defined(BITLEARN_BUILD_CONTRACT_CUDA_FLAGS)
#define BITLEARN_BUILD_CONTRACT_CUDA_FLAGS "unknown"
#endif
#if !defined(BITLEARN_BUILD_CUDA_COMPILER)
#define BITLEARN_BUILD_CUDA_COMPILER ""
#endif

namespace {

enum class Outcome { ok, fail, skip };

const char* outcome_name(Outcome o) {
  return o == Outcome::ok ? "OK" : o == Outcome::fail ? "FAIL" : "SKIP";
}

struct Check {
  std::string name;
  Outcome outcome;
  std::string detail;
};

// Inputs read through volatile so the compiler cannot fold the probes at build time.
volatile float g_probe_a = bl::kProbeA;
volatile float g_probe_b = bl::kProbeB;
volatile float g_probe_c = bl::kProbeC;

std::string float_text(float x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a (bits 0x%08x)", static_cast<double>(x), bl::bits_of(x));
  return buf;
}

// The library's scalar code is compiled without -mfma on x86-64, so bl::fma becomes a call to the
// C library's correctly rounded fmaf there; AArch64 always has a fused instruction.
std::string scalar_fma_kind() {
#if defined(__FMA__) || defined(__aarch64__)
  return "hardware fused multiply-add instruction";
#else
  return "C library fmaf (correctly rounded; no FMA instruction in the baseline build)";
#endif
}

Check check_contraction(const char* name, float value) {
  // Unfused a*b+c gives exactly 0 on the probe inputs; a contracted build gives 2^-24.
  return {name, value == 0.0f ? Outcome::ok : Outcome::fail,
          "a*b+c = " + float_text(value) + (value == 0.0f ? "" : ", expected 0: contraction")};
}

std::vector<Check> run_checks(const bl::FpState& fp, const bl::CudaStatus& cuda) {
  std::vector<Check> checks;
  std::string fp_message;
  bool fp_ok = bl::fp_state_ok(&fp_message);
  checks.push_back({"fp control state", fp_ok ? Outcome::ok : Outcome::fail, fp_message});

  checks.push_back(check_contraction("contraction probe (baseline)",
                                     bl::probe_mul_add(g_probe_a, g_probe_b, g_probe_c)));
  if (bl::cpu_has_avx2_fma()) {
    checks.push_back(check_contraction("contraction probe (avx2+fma)",
                                       bl::probe_mul_add_avx2(g_probe_a, g_probe_b, g_probe_c)));
  } else {
    checks.push_back({"contraction probe (avx2+fma)", Outcome::skip, "CPU has no AVX2+FMA"});
  }
  if (bl::isa_supported(bl::Isa::avx512)) {
    checks.push_back(check_contraction("contraction probe (avx512)",
                                       bl::probe_mul_add_avx512(g_probe_a, g_probe_b, g_probe_c)));
  } else {
    checks.push_back({"contraction probe (avx512)", Outcome::skip, "CPU has no AVX-512F/BW/DQ/VL"});
  }
  if (!bl::cuda_backend_built()) {
    checks.push_back({"contraction probe (cuda:0)", Outcome::skip, "CUDA not built"});
  } else if (!cuda.devices.empty()) {
    try {
      checks.push_back(check_contraction("contraction probe (cuda:0)",
                                         bl::probe_mul_add_cuda(g_probe_a, g_probe_b, g_probe_c)));
    } catch (const std::exception& e) {
      checks.push_back({"contraction probe (cuda:0)", Outcome::fail, e.what()});
    }
  } else {
    checks.push_back({"contraction probe (cuda:0)", Outcome::skip, "no CUDA device"});
  }

  float fused = bl::fma(g_probe_a, g_probe_b, g_probe_c);
  checks.push_back({"scalar fma is fused", fused == 0x1p-24f ? Outcome::ok : Outcome::fail,
                    "fma(a, b, c) = " + float_text(fused) + ", expected 0x1p-24"});

  // Random123 known answer for Philox4x32-10 (tests/contract/test_rng.cpp has all three).
  bl::PhiloxBlock ctr = {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
  bl::PhiloxBlock out = bl::philox4x32_10(ctr, 0xa4093822u, 0x299f31d0u);
  bool philox_ok = out.w[0] == 0xd16cfe09u && out.w[1] == 0x94fdccebu &&
                   out.w[2] == 0x5001e420u && out.w[3] == 0x24126ea1u;
  checks.push_back({"philox4x32-10 known answer", philox_ok ? Outcome::ok : Outcome::fail,
                    philox_ok ? "" : "output differs from the published vector"});

  // FIPS 180-2 "abc".
  std::string abc = bl::sha256_hex("abc", 3);
  bool sha_ok = abc == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  checks.push_back({"sha-256 known answer", sha_ok ? Outcome::ok : Outcome::fail,
                    sha_ok ? "" : "sha256(\"abc\") = " + abc});
  return checks;
}

std::string gib_text(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

std::string cuda_version_text(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : " ") + p;
  return s;
}

// The CPU kernel variant in use (BITLEARN_ISA or the best one detected) and what it means.
std::string kernel_variant_text() {
  const bl::Isa isa = bl::active_isa();
  std::string text = bl::isa_name(isa);
  switch (isa) {
    case bl::Isa::scalar: text += " (portable kernels)"; break;
    case bl::Isa::avx2: text += " (AVX2+FMA GEMM tile, reductions, math maps)"; break;
    case bl::Isa::avx512:
      text += " (AVX-512 GEMM tile, skinny GEMM, reductions, math maps; AVX2+FMA elsewhere)";
      break;
    case bl::Isa::neon: text += " (NEON GEMM tile, skinny GEMM, reductions)"; break;
  }
  if (std::getenv("BITLEARN_ISA") && *std::getenv("BITLEARN_ISA")) text += ", forced by BITLEARN_ISA";
  return text;
}

void print_text(const bl::CpuFeatures& cpu, const bl::FpState& fp, const bl::CudaStatus& cuda,
                const std::vector<Check>& checks) {
  auto row = [](const char* key, const std::string& value) {
    std::printf("  %-18s %s\n", key, value.c_str());
  };
  std::printf("bitlearn doctor\n");
  row("version", bl::kVersion);
  row("contract profile", bl::kContractProfile);
  row("compiler", BITLEARN_BUILD_COMPILER);
  row("build type", BITLEARN_BUILD_TYPE);
  row("contract flags", BITLEARN_BUILD_CONTRACT_FLAGS);
  if (cuda.built) {
    row("cuda compiler", BITLEARN_BUILD_CUDA_COMPILER);
    row("cuda flags", BITLEARN_BUILD_CONTRACT_CUDA_FLAGS);
  }
  std::printf("cpu\n");
  row("arch", cpu.arch);
  row("vendor", cpu.vendor.empty() ? "unknown" : cpu.vendor);
  if (!cpu.brand.empty()) row("brand", cpu.brand);
  row("isa", cpu.isa.empty() ? "none detected" : join(cpu.isa));
  row("kernel variant", kernel_variant_text());
  row("fp control", fp.describe());
  if (!fp.ok()) {
    std::string message;
    bl::fp_state_ok(&message);
    std::printf("WARNING: floating-point control state breaks the contract: %s\n", message.c_str());
  }
  row("scalar fma", scalar_fma_kind());
  row("threads", std::to_string(bl::num_threads()));
  std::printf("cuda\n");
  if (!cuda.built) {
    row("status", "CUDA: not built");
  } else {
    row("runtime", cuda_version_text(cuda.runtime_version));
    row("driver", cuda_version_text(cuda.driver_version));
    if (cuda.devices.empty())
      row("status", cuda.error.empty() || cuda.error == "no CUDA device"
                        ? std::string("no device")
                        : "no device (" + cuda.error + ")");
    for (const bl::CudaDeviceInfo& d : cuda.devices) {
      std::string key = "device " + std::to_string(d.index);
      row(key.c_str(), d.name + ", compute " + std::to_string(d.cc_major) + "." +
                           std::to_string(d.cc_minor) + ", " + gib_text(d.total_memory_bytes) +
                           ", " + std::to_string(d.multiprocessors) + " SMs");
    }
  }
  std::printf("checks\n");
  int failed = 0;
  for (const Check& c : checks) {
    if (c.outcome == Outcome::fail) ++failed;
    std::printf("  %-4s %s%s%s\n", outcome_name(c.outcome), c.name.c_str(),
                c.detail.empty() ? "" : ": ", c.detail.c_str());
  }
  if (failed == 0)
    std::printf("result: all checks passed\n");
  else
    std::printf("result: %d check%s FAILED\n", failed, failed == 1 ? "" : "s");
}

void print_json(const bl::CpuFeatures& cpu, const bl::FpState& fp, const bl::CudaStatus& cuda,
                const std::vector<Check>& checks) {
  nlohmann::ordered_json j;
  j["version"] = bl::kVersion;
  j["contract_profile"] = bl::kContractProfile;
  j["build"] = {{"compiler", BITLEARN_BUILD_COMPILER},
                {"build_type", BITLEARN_BUILD_TYPE},
                {"contract_flags", BITLEARN_BUILD_CONTRACT_FLAGS}};
  if (cuda.built) {
    j["build"]["cuda_compiler"] = BITLEARN_BUILD_CUDA_COMPILER;
    j["build"]["cuda_flags"] = BITLEARN_BUILD_CONTRACT_CUDA_FLAGS;
  }
  j["cpu"] = {{"arch", cpu.arch}, {"vendor", cpu.vendor}, {"brand", cpu.brand}, {"isa", cpu.isa}};
  j["cpu"]["kernel_variant"] = bl::isa_name(bl::active_isa());
  j["fp_control"] = {{"register", fp.register_name},
                     {"raw", fp.raw},
                     {"rounding", fp.rounding},
                     {"flush_to_zero", fp.flush_to_zero},
                     {"denormals_are_zero", fp.denormals_are_zero},
                     {"alternate_handling", fp.alternate_handling},
                     {"ok", fp.ok()}};
  j["scalar_fma"] = scalar_fma_kind();
  j["threads"] = bl::num_threads();
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const bl::CudaDeviceInfo& d : cuda.devices)
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                       {"memory_bytes", d.total_memory_bytes},
                       {"multiprocessors", d.multiprocessors}});
  j["cuda"] = {{"built", cuda.built},
               {"runtime", cuda_version_text(cuda.runtime_version)},
               {"driver", cuda_version_text(cuda.driver_version)},
               {"error", cuda.error},
               {"devices", devices}};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  bool all_ok = true;
  for (const Check& c : checks) {
    if (c.outcome == Outcome::fail) all_ok = false;
    list.push_back({{"name", c.name}, {"result", outcome_name(c.outcome)}, {"detail", c.detail}});
  }
  j["checks"] = list;
  j["ok"] = all_ok;
  std::printf("%s\n", j.dump(2).c_str());
}

void setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "doctor", "Report the build, CPU, FP control state and CUDA devices, and run the self-checks");
  auto* json = cmd->add_flag("--json", "Print the report as one JSON object");
  cmd->callback([json] {
    bl::CpuFeatures cpu = bl::detect_cpu_features();
    bl::FpState fp = bl::read_fp_state();
    bl::CudaStatus cuda = bl::cuda_status();
    std::vector<Check> checks = run_checks(fp, cuda);
    if (json->count() > 0)
      print_json(cpu, fp, cuda, checks);
    else
      print_text(cpu, fp, cuda, checks);
    std::fflush(stdout);
    for (const Check& c : checks)
      if (c.outcome == Outcome::fail) throw bl::cli::CommandExit{1};
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
