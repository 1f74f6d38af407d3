// gemm_profile.cpp: the process-wide GEMM profile (include/bitlearn/ops_matmul.h), read once from
// BITLEARN_GEMM_PROFILE and then set by set_gemm_profile.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "bitlearn/ops_matmul.h"
#include "core/error.h"

namespace bl {
namespace {

std::atomic<int> g_profile{-1};  // -1: not read from the environment yet
std::mutex g_env_mutex;

}  // namespace

GemmProfile parse_gemm_profile(const std::string& name, const char* what) {
  if (name == "contract" || name == "bitlearn.identical.v1") return GemmProfile::contract;
  if (name == "exact" || name == "bitlearn.exact_gemm.v1") return GemmProfile::exact;
  throw Error(detail::concat(what, ": unknown GEMM profile '", name, "' (expected contract or exact)"));
}

void set_gemm_profile(GemmProfile profile) { g_profile.store(static_cast<int>(profile)); }

GemmProfile gemm_profile() {
  int p = g_profile.load();
  if (p >= 0) return static_cast<GemmProfile>(p);
  std::lock_guard<std::mutex> lock(g_env_mutex);
  p = g_profile.load();
  if (p < 0) {
    const char* env = std::getenv("BITLEARN_GEMM_PROFILE");
    p = static_cast<int>(env && *env ? parse_gemm_profile(env, "BITLEARN_GEMM_PROFILE") : GemmProfile::contract);
    g_profile.store(p);
  }
  return static_cast<GemmProfile>(p);
}

const char* gemm_profile_name(GemmProfile profile) {
  return profile == GemmProfile::exact ? "bitlearn.exact_gemm.v1" : "bitlearn.identical.v1";
}

const char* gemm_profile_short_name(GemmProfile profile) {
  return profile == GemmProfile::exact ? "exact" : "contract";
}

}  // namespace bl
