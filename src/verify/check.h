// check.h: how a verification check is written (internal to src/verify/).
//
// A check is a function of a CheckContext (device, thread count, suite) that generates its FIXED
// inputs through the context (src/verify/inputs.h), runs its workload on the context's device and
// writes every output into an OutputWriter. The check hash is the SHA-256 of the writer's bytes.
//
// Canonical serialization (what is hashed), one record per output, in the order written:
//   u32 label length, label bytes (ASCII), u8 element kind ('f' binary32, 'i' int64, 'u' uint32),
//   u64 element count, then the elements, little-endian. Floats are written as their bit patterns,
//   unchanged: a non-canonical NaN stored by an op is a contract violation and must change the hash.
// Checks write their outputs, not their inputs: the negative control (a flipped input bit) must move
// the hash through the workload, not merely because the input itself was hashed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bitlearn/verify.h"

namespace bl::verify {

// What a check is run with.
class CheckContext {
 public:
  CheckContext(const DeviceId& device, int threads, Suite suite, const Perturbation& perturbation)
      : device_(device), threads_(threads), suite_(suite), perturbation_(perturbation) {}

  const DeviceId& device() const { return device_; }
  bool on_cuda() const { return device_.is_cuda; }
  int threads() const { return threads_; }
  Suite suite() const { return suite_; }
  // The workload size for this suite: quick_n under --quick, full_n otherwise.
  int64_t size(int64_t quick_n, int64_t full_n) const { return suite_ == Suite::quick ? quick_n : full_n; }

  // Negative-control hook: true exactly once (for the first input generated) when the run is perturbed.
  // Input generators call this and flip one bit of their element 0 when it answers true.
  bool take_perturbation() {
    if (!perturbation_.enabled || perturbed_) return false;
    perturbed_ = true;
    return true;
  }
  // Whether the perturbation was applied (a perturbed run that never applied it is an error).
  bool perturbation_applied() const { return perturbed_; }

 private:
  DeviceId device_;
  int threads_;
  Suite suite_;
  Perturbation perturbation_;
  bool perturbed_ = false;
};

// Collects a check's outputs in the canonical serialization described above.
class OutputWriter {
 public:
  void add_f32(const std::string& label, const float* data, int64_t n);
  void add_f32(const std::string& label, const std::vector<float>& v) {
    add_f32(label, v.data(), static_cast<int64_t>(v.size()));
  }
  void add_i64(const std::string& label, const int64_t* data, int64_t n);
  void add_i64(const std::string& label, const std::vector<int64_t>& v) {
    add_i64(label, v.data(), static_cast<int64_t>(v.size()));
  }
  void add_u32(const std::string& label, const uint32_t* data, int64_t n);
  void add_u32(const std::string& label, const std::vector<uint32_t>& v) {
    add_u32(label, v.data(), static_cast<int64_t>(v.size()));
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  void header(const std::string& label, char kind, int64_t n);
  void put_u32(uint32_t v);
  void put_u64(uint64_t v);
  std::vector<uint8_t> bytes_;
};

using CheckFunction = void (*)(CheckContext& ctx, OutputWriter& out);

// One registered check. in_quick: also part of the --quick suite (every check is in the full suite).
struct CheckDef {
  const char* name;
  bool in_quick;
  CheckFunction run;
};

// Each family of checks appends its checks, in suite order, from its own checks_<family>.cpp.
// registry.cpp calls these explicitly (static registration would be dropped from a static library).
void add_math_checks(std::vector<CheckDef>& checks);
void add_rng_checks(std::vector<CheckDef>& checks);
void add_op_checks(std::vector<CheckDef>& checks);
void add_reduce_checks(std::vector<CheckDef>& checks);
void add_row_checks(std::vector<CheckDef>& checks);
void add_gemm_checks(std::vector<CheckDef>& checks);
void add_model_checks(std::vector<CheckDef>& checks);
void add_llm_checks(std::vector<CheckDef>& checks);
void add_llm_mamba_checks(std::vector<CheckDef>& checks);  // checks_llm_mamba.cpp
void add_ml_trees_checks(std::vector<CheckDef>& checks);  // checks_ml_trees.cpp
void add_ml_linear_checks(std::vector<CheckDef>& checks);  // checks_ml_linear.cpp

// Throws SkipCheck (cpu_only) naming the check when it runs on CUDA: the algorithm is CPU-only by design.
void require_cpu(const CheckContext& ctx, const char* what);

}  // namespace bl::verify
