#include "core/isa.h"

#include <atomic>
#include <cstdlib>

#include "core/error.h"

namespace bl {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::neon: return "neon";
  }
  return "unknown";
}

Isa parse_isa(const std::string& name) {
  if (name == "scalar") return Isa::scalar;
  if (name == "avx2") return Isa::avx2;
  if (name == "avx512") return Isa::avx512;
  if (name == "neon") return Isa::neon;
  throw Error("unknown ISA variant '" + name + "': expected scalar, avx2, avx512 or neon");
}

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::scalar: return true;
#if defined(__x86_64__) || defined(_M_X64)
    case Isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512:
      return isa_supported(Isa::avx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
    case Isa::neon: return false;
#elif defined(__aarch64__)
    case Isa::neon: return true;
    case Isa::avx2:
    case Isa::avx512: return false;
#else
    default: return false;
#endif
  }
  return false;
}

Isa detected_isa() {
  if (isa_supported(Isa::avx512)) return Isa::avx512;
  if (isa_supported(Isa::avx2)) return Isa::avx2;
  if (isa_supported(Isa::neon)) return Isa::neon;
  return Isa::scalar;
}

namespace {
std::atomic<int> g_forced{-1};

Isa from_environment() {
  const char* env = std::getenv("BITLEARN_ISA");
  if (!env || !*env) return detected_isa();
  Isa isa = parse_isa(env);
  BL_CHECK(isa_supported(isa), "BITLEARN_ISA=", env, " requested, but this CPU cannot run it (best: ",
           isa_name(detected_isa()), ")");
  return isa;
}
}  // namespace

Isa active_isa() {
  int forced = g_forced.load();
  if (forced >= 0) return static_cast<Isa>(forced);
  static const Isa from_env = from_environment();
  return from_env;
}

void set_active_isa(Isa isa) {
  BL_CHECK(isa_supported(isa), "set_active_isa: this CPU cannot run the ", isa_name(isa), " variant");
  g_forced.store(static_cast<int>(isa));
}

}  // namespace bl
