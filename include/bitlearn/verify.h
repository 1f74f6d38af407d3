// verify.h: bitlearn's verification suite, the program behind `bitlearn verify` and
// `bitlearn compare`.
//
// A check runs one fixed workload (inputs generated from Philox with a fixed seed, special values
// included) on one device and hashes its output: the check hash is the SHA-256 of the output's
// canonical serialization (src/verify/check.h). The expected hashes are compiled into the library
// (src/verify/expected_hashes.inc), so a binary alone can tell whether this machine reproduces them.
//
// Suite digest: SHA-256 over the 32-byte check hashes of one device, in suite order; a check that was
// skipped contributes 32 zero bytes. The order is the registry order (list_checks()).
//
// Regenerating the expected hashes after a change of results (on a CPU build):
//   build/bitlearn verify --write-expected src/verify/expected_hashes.inc
// (see src/verify/README.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bl::verify {

// Which workloads run: quick (a few seconds, smaller inputs) or full (the default suite).
enum class Suite { quick, full };

// IDENTICAL: the hash equals the expected one (and, across devices, each other's).
// DIVERGENT: it does not. SKIPPED: the check could not run here (reason says why).
enum class State { identical, divergent, skipped };

const char* suite_name(Suite suite);
const char* state_name(State state);

// A device to run on: "cpu" or "cuda:N".
struct DeviceId {
  bool is_cuda = false;
  int index = 0;
  std::string name() const;
};

// Parses "cpu" or "cuda:N" (also "cuda" = cuda:0); throws bl::Error otherwise.
DeviceId parse_device(const std::string& text);

// The CUDA devices this process can use (empty in a CPU-only build or without a GPU).
std::vector<DeviceId> cuda_devices();

// Test hook: flip one bit of one element of a check's first generated input (the "negative
// control"). A check whose hash does not move under this proves nothing.
struct Perturbation {
  bool enabled = false;
};

// Thrown by a check that cannot run on this device or build (e.g. an op with no CUDA path yet).
// cpu_only marks a check of a CPU-only algorithm run on a GPU: it is skipped by design and does
// not make the run incomplete (exit code 3 is only for checks that should have run).
struct SkipCheck {
  std::string reason;
  bool cpu_only = false;
};

// The result of one check on one device.
struct CheckResult {
  std::string name;
  std::string device;     // "cpu", "cuda:0", ...
  State state = State::skipped;
  std::string hash;       // 64 lower-case hex, empty when skipped
  std::string expected;   // 64 hex, empty when no expected hash is recorded
  std::string reason;     // why skipped or divergent (empty when identical)
  bool cpu_only = false;  // skipped because the algorithm has no GPU path by design
  double seconds = 0.0;
};

// One device's run of a suite.
struct DeviceRun {
  std::string device;
  std::vector<CheckResult> checks;
  std::string digest;  // 64 hex; see the header comment
  double seconds = 0.0;
};

// A whole `bitlearn verify` run.
struct Report {
  std::string version;           // bitlearn version
  std::string contract_profile;  // e.g. bitlearn.identical.v1
  Suite suite = Suite::full;
  int threads = 1;
  std::string cpu_isa;           // the CPU kernel variant that ran (scalar, avx2, ...)
  std::vector<DeviceRun> runs;
  // Devices that were asked for but could not run, each with the reason ("cuda: built without CUDA").
  std::vector<std::string> skipped_devices;
  // Device-versus-device mismatches found by --device all (each names both devices).
  std::vector<std::string> cross_device_divergences;
};

// Names of the checks of a suite, in suite order.
std::vector<std::string> list_checks(Suite suite);

// Runs one check on one device with `threads` CPU threads and returns its hash (64 hex).
// Throws bl::Error for an unknown check; a check that cannot run here throws SkipCheck.
std::string run_check_hash(const std::string& name, Suite suite, const DeviceId& device, int threads,
                           const Perturbation& perturbation = Perturbation{});

// Runs every check of the suite on one device and compares with the compiled-in expected hashes.
DeviceRun run_suite(Suite suite, const DeviceId& device, int threads,
                    const Perturbation& perturbation = Perturbation{});

// Compares the runs of a report with each other by check name and records every mismatch in
// report.cross_device_divergences (a check that differs becomes DIVERGENT in the later run).
void compare_devices(Report& report);

// The compiled-in expected hash of a check (empty when none is recorded).
std::string expected_hash(const std::string& name, Suite suite);

// SHA-256 over the check hashes in order (skipped checks count as 32 zero bytes); under the
// exact-integer GEMM profile (bitlearn/ops_matmul.h) the profile's name comes first. The expected
// hashes and the digest are those of the process's GEMM profile.
std::string suite_digest(const std::vector<CheckResult>& checks);

// The text of src/verify/expected_hashes.inc for the given CPU runs (quick and full, under the
// default GEMM profile and under the exact-integer one).
std::string expected_hashes_source(const DeviceRun& quick_run, const DeviceRun& full_run,
                                   const DeviceRun& quick_exact_run, const DeviceRun& full_exact_run);

// Writes the report as JSON to path atomically (a temporary file renamed into place).
void write_report_json(const Report& report, const std::string& path);
// Reads a report written by write_report_json; throws bl::Error naming the file on bad JSON or a
// corrupt report (a missing member, a malformed hash, a device run or a check named twice).
Report read_report_json(const std::string& path);

// The exit status of `bitlearn verify` for a finished report: 1 when a check is DIVERGENT or two
// devices differ; else 3 when the run is incomplete (a device in skipped_devices, or a check SKIPPED
// that should have run); else 0. A cpu_only skip (a CPU-only algorithm on a GPU) counts as done.
int exit_code(const Report& report);

// The differences between two reports (each a line naming the check); empty when identical.
// Every device run of a is compared with every device run of b, check by check.
std::vector<std::string> compare_reports(const Report& a, const Report& b);

}  // namespace bl::verify
