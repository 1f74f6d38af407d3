// driver.h: the one conformance driver. Every op's cases are described once (case_lists.h): inputs,
// the scalar reference, and how the public Tensor op is called. The driver runs each case on every
// backend present (CPU: each ISA variant this CPU supports x threads 1, 2, 3; CUDA: each launch shape
// of kConformanceLaunchConfigs) and demands equal bytes (memcmp) with the reference, naming op, case,
// backend and the first differing element on a mismatch.
//
// The driver is header-only on purpose: the CPU test program (tests/**/*.cpp) and the CUDA test
// program (tests/**/*.cu) include the same case lists, so CUDA runs exactly the CPU's cases.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "conformance/harness.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "kernels/launch.h"
#include "ops/op_util.h"

namespace bl::conformance {

using Tensors = std::vector<Tensor>;
using TensorsFn = std::function<Tensors(const Tensors&)>;

// One case of one op. inputs() builds host tensors (deterministic); reference() computes the
// expected outputs on the host with the kernel's scalar reference; run() calls the public op on
// inputs that live on the backend's device. sabotage (optional) is a deliberately broken variant
// of the reference (another schedule, a lost canonicalization, ...) that the comparison must reject.
struct OpCase {
  std::string op;
  std::string label;
  std::function<Tensors()> inputs;
  TensorsFn reference;
  TensorsFn run;
  TensorsFn sabotage;
  std::string sabotage_what;
};

// A named list of cases of one op family, and the support-matrix row it verifies.
struct CaseList {
  const char* name;
  const char* row;
  std::vector<OpCase> (*build)();
};

// Where a case runs: CPU with an ISA variant and a thread count, or a CUDA device with a launch shape.
struct BackendConfig {
  Device device = Device::cpu();
  Isa isa = Isa::scalar;
  int threads = 1;
  LaunchConfig launch;

  std::string label() const {
    if (device.is_cpu())
      return std::string("cpu ") + isa_name(isa) + " threads=" + std::to_string(threads);
    return device.str() + " launch{" + std::to_string(launch.block) + "," +
           std::to_string(launch.grid_cap) + "," + std::to_string(launch.variant) + "}";
  }
};

// Every CPU configuration: the ISA variants this CPU can run x kThreadCounts.
inline std::vector<BackendConfig> cpu_backend_configs() {
  std::vector<BackendConfig> out;
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon}) {
    if (!isa_supported(isa)) continue;
    for (int t : kThreadCounts) {
      BackendConfig b;
      b.isa = isa;
      b.threads = t;
      out.push_back(b);
    }
  }
  return out;
}

// Every CUDA configuration on device 0: one per launch shape of kConformanceLaunchConfigs.
inline std::vector<BackendConfig> cuda_backend_configs() {
  std::vector<BackendConfig> out;
  for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
    BackendConfig b;
    b.device = Device::cuda(0);
    b.launch = cfg;
    out.push_back(b);
  }
  return out;
}

// Applies a BackendConfig for a scope (ISA and pool size on the CPU, launch shape on CUDA) and
// restores what was there before.
class ScopedBackend {
 public:
  explicit ScopedBackend(const BackendConfig& b) : saved_isa_(active_isa()), saved_threads_(num_threads()) {
    if (b.device.is_cpu()) {
      set_active_isa(b.isa);
      set_num_threads(b.threads);
    } else {
      launch_.reset(new ScopedLaunchConfig(b.launch));
    }
  }
  ~ScopedBackend() {
    launch_.reset();
    set_active_isa(saved_isa_);
    set_num_threads(saved_threads_);
  }
  ScopedBackend(const ScopedBackend&) = delete;
  ScopedBackend& operator=(const ScopedBackend&) = delete;

 private:
  Isa saved_isa_;
  int saved_threads_;
  std::unique_ptr<ScopedLaunchConfig> launch_;
};

// The bytes of t in row-major view order, copied to the host.
inline std::vector<unsigned char> host_bytes_of(const Tensor& t) {
  Tensor h = t.device().is_cpu() ? t.contiguous() : t.to(Device::cpu()).contiguous();
  std::vector<unsigned char> out(static_cast<size_t>(h.numel()) * dtype_size(h.dtype()));
  if (!out.empty()) std::memcpy(out.data(), h.raw_data(), out.size());
  return out;
}

// Bitwise equality of every output (dtype, shape and bytes), with a message naming context, the
// output and the first differing element (index and both bit patterns).
inline ::testing::AssertionResult outputs_equal(const Tensors& expected, const Tensors& got,
                                                const std::string& context) {
  if (expected.size() != got.size())
    return ::testing::AssertionFailure() << context << ": " << got.size() << " outputs, expected "
                                         << expected.size();
  for (size_t o = 0; o < expected.size(); ++o) {
    const Tensor& e = expected[o];
    const Tensor& g = got[o];
    if (e.dtype() != g.dtype())
      return ::testing::AssertionFailure() << context << ": output " << o << " has dtype "
                                           << dtype_name(g.dtype()) << ", expected " << dtype_name(e.dtype());
    if (e.shape() != g.shape())
      return ::testing::AssertionFailure() << context << ": output " << o << " has shape "
                                           << shape_str(g.shape()) << ", expected " << shape_str(e.shape());
    std::vector<unsigned char> eb = host_bytes_of(e), gb = host_bytes_of(g);
    if (eb == gb) continue;
    const size_t es = dtype_size(e.dtype());
    size_t i = 0;
    while (std::memcmp(eb.data() + i * es, gb.data() + i * es, es) == 0) ++i;
    uint64_t ev = 0, gv = 0;
    std::memcpy(&ev, eb.data() + i * es, es);
    std::memcpy(&gv, gb.data() + i * es, es);
    char buf[160];
    std::snprintf(buf, sizeof buf, "output %zu, first difference at element %zu: expected bits 0x%llX, got 0x%llX",
                  o, i, static_cast<unsigned long long>(ev), static_cast<unsigned long long>(gv));
    return ::testing::AssertionFailure() << context << ": " << buf;
  }
  return ::testing::AssertionSuccess();
}

inline Tensors to_device(const Tensors& xs, Device device) {
  Tensors out;
  out.reserve(xs.size());
  for (const Tensor& x : xs) out.push_back(x.device() == device ? x : x.to(device));
  return out;
}

inline std::string case_context(const OpCase& c, const BackendConfig& b) {
  return c.op + " [" + c.label + "] on " + b.label();
}

// Runs every case of list on every backend of backends; each mismatch or error is a test failure
// (at most max_failures are reported per list, so a broken kernel does not flood the log).
inline void run_case_list(const CaseList& list, const std::vector<BackendConfig>& backends,
                          int max_failures = 12) {
  int failures = 0;
  for (const OpCase& c : list.build()) {
    Tensors inputs = c.inputs();
    Tensors expected = c.reference(inputs);
    for (const BackendConfig& b : backends) {
      ::testing::AssertionResult r = ::testing::AssertionSuccess();
      try {
        Tensors dev_inputs = to_device(inputs, b.device);
        ScopedBackend scoped(b);
        Tensors got = c.run(dev_inputs);
        r = outputs_equal(expected, got, case_context(c, b));
      } catch (const Error& e) {
        r = ::testing::AssertionFailure() << case_context(c, b) << ": threw " << e.what();
      }
      if (!r) {
        ADD_FAILURE() << r.message();
        if (++failures >= max_failures) {
          ADD_FAILURE() << list.name << ": stopped after " << failures << " failures";
          return;
        }
      }
    }
  }
}

// Changes the lowest bit of one element in the middle of t (a host copy): the "one ulp off" variant
// every float comparison must reject.
inline Tensor flip_lowest_bit(const Tensor& t) {
  Tensor h = t.to(Device::cpu()).contiguous();
  Tensor c = copy(h);
  const size_t es = dtype_size(c.dtype());
  unsigned char* p = static_cast<unsigned char*>(c.raw_data());
  p[(static_cast<size_t>(c.numel()) / 2) * es] ^= 1u;
  return c;
}

// The sabotage arms of a list: (1) each case's sabotaged reference must differ from the reference,
// and every list must have at least one; (2) on the given backend, the real output with one element
// one bit off must be rejected. Both use outputs_equal, the comparison the driver uses.
inline void expect_sabotage_rejected(const CaseList& list, const BackendConfig& backend) {
  int schedule_arms = 0;
  bool ulp_arm = false;
  for (const OpCase& c : list.build()) {
    if (!c.sabotage && ulp_arm) continue;
    Tensors inputs = c.inputs();
    Tensors expected = c.reference(inputs);
    if (c.sabotage) {
      ++schedule_arms;
      EXPECT_FALSE(outputs_equal(expected, c.sabotage(inputs), c.op + " [" + c.label + "]"))
          << list.name << ": sabotage '" << c.sabotage_what << "' of " << c.op << " [" << c.label
          << "] was not caught";
    }
    if (!ulp_arm && !expected.empty() && expected[0].numel() > 0) {
      Tensors got;
      {
        Tensors dev_inputs = to_device(inputs, backend.device);
        ScopedBackend scoped(backend);
        got = c.run(dev_inputs);
      }
      ASSERT_TRUE(outputs_equal(expected, got, case_context(c, backend)));
      got[0] = flip_lowest_bit(got[0]);
      EXPECT_FALSE(outputs_equal(expected, got, case_context(c, backend)))
          << list.name << ": one bit off in " << c.op << " [" << c.label << "] was not caught";
      ulp_arm = true;
    }
  }
  EXPECT_GT(schedule_arms, 0) << list.name << " has no sabotage arm";
  EXPECT_TRUE(ulp_arm) << list.name << " has no case with a non-empty output";
}

}  // namespace bl::conformance
