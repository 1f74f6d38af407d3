// The exit status of `bitlearn verify` (exit_code): a CPU-only check skipped on a GPU is reported
// SKIPPED with cpu_only and still exits 0; any other skip exits 3, a divergence exits 1. The skips
// come from the real checks run on a CUDA device id, so no GPU is needed.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <unistd.h>

#include "bitlearn/verify.h"

namespace bl::verify {
namespace {

// The checks that require_cpu marks as CPU-only by design.
const char* const kCpuOnlyChecks[] = {"ml.random_forest", "ml.ensembles"};

bool is_cpu_only_check(const std::string& name) {
  for (const char* c : kCpuOnlyChecks)
    if (name == c) return true;
  return false;
}

CheckResult identical_result(const std::string& name, const std::string& device, char fill) {
  CheckResult c;
  c.name = name;
  c.device = device;
  c.state = State::identical;
  c.hash = std::string(64, fill);
  c.expected = c.hash;
  return c;
}

// A CPU run and a cuda:0 run of the quick suite in which every check agrees, except that the
// CPU-only checks on cuda:0 carry the SkipCheck their real check function throws there.
Report cpu_and_gpu_report() {
  Report report;
  report.suite = Suite::quick;
  DeviceRun cpu, gpu;
  cpu.device = "cpu";
  gpu.device = "cuda:0";
  char fill = 'a';
  for (const std::string& name : list_checks(Suite::quick)) {
    cpu.checks.push_back(identical_result(name, "cpu", fill));
    CheckResult g = identical_result(name, "cuda:0", fill);
    fill = fill == 'f' ? 'a' : static_cast<char>(fill + 1);
    if (is_cpu_only_check(name)) {
      try {
        run_check_hash(name, Suite::quick, DeviceId{true, 0}, 1);
        ADD_FAILURE() << name << " ran on cuda:0; expected a cpu_only SkipCheck";
      } catch (const SkipCheck& s) {
        g.state = State::skipped;
        g.hash.clear();
        g.reason = s.reason;
        g.cpu_only = s.cpu_only;
      }
    }
    gpu.checks.push_back(g);
  }
  cpu.digest = suite_digest(cpu.checks);
  gpu.digest = suite_digest(gpu.checks);
  report.runs = {cpu, gpu};
  compare_devices(report);
  return report;
}

TEST(VerifyExitCode, CpuOnlyChecksThrowCpuOnlySkipOnCuda) {
  for (const char* name : kCpuOnlyChecks) {
    bool skipped = false;
    try {
      run_check_hash(name, Suite::quick, DeviceId{true, 0}, 1);
    } catch (const SkipCheck& s) {
      skipped = true;
      EXPECT_TRUE(s.cpu_only) << name;
      EXPECT_NE(s.reason.find(name), std::string::npos) << s.reason;
      EXPECT_NE(s.reason.find("CPU-only"), std::string::npos) << s.reason;
    }
    EXPECT_TRUE(skipped) << name;
  }
}

TEST(VerifyExitCode, CpuOnlySkipOnGpuIsReportedSkippedAndExitsZero) {
  Report report = cpu_and_gpu_report();
  int cpu_only = 0;
  for (const CheckResult& c : report.runs[1].checks) {
    if (!c.cpu_only) continue;
    ++cpu_only;
    EXPECT_STREQ(state_name(c.state), "SKIPPED") << c.name;
    EXPECT_TRUE(c.hash.empty()) << c.name;
  }
  EXPECT_EQ(cpu_only, 2);
  EXPECT_TRUE(report.cross_device_divergences.empty());
  EXPECT_EQ(exit_code(report), 0);

  // The JSON report keeps the flag, so the status read back is the same.
  const std::string path = testing::TempDir() + "bl_verify_exit_" + std::to_string(::getpid()) + ".json";
  write_report_json(report, path);
  Report back = read_report_json(path);
  std::remove(path.c_str());
  EXPECT_EQ(exit_code(back), 0);
}

// Sabotage arm: the same skips without the cpu_only flag make the run incomplete.
TEST(VerifyExitCode, SkipWithoutCpuOnlyExitsThree) {
  Report report = cpu_and_gpu_report();
  for (CheckResult& c : report.runs[1].checks) c.cpu_only = false;
  EXPECT_EQ(exit_code(report), 3);
}

TEST(VerifyExitCode, SkippedDeviceExitsThree) {
  Report report = cpu_and_gpu_report();
  EXPECT_EQ(exit_code(report), 0);
  report.skipped_devices.push_back("cuda: bitlearn was built without CUDA");
  EXPECT_EQ(exit_code(report), 3);
}

TEST(VerifyExitCode, DivergenceExitsOneEvenWithSkips) {
  Report report = cpu_and_gpu_report();
  report.runs[0].checks[0].state = State::divergent;
  EXPECT_EQ(exit_code(report), 1);
  for (CheckResult& c : report.runs[1].checks) c.cpu_only = false;
  EXPECT_EQ(exit_code(report), 1);

  Report cross = cpu_and_gpu_report();
  cross.runs[1].checks[0].hash = std::string(64, '0');
  compare_devices(cross);
  EXPECT_FALSE(cross.cross_device_divergences.empty());
  EXPECT_EQ(exit_code(cross), 1);
}

TEST(VerifyExitCode, EmptyReportExitsZero) { EXPECT_EQ(exit_code(Report{}), 0); }

}  // namespace
}  // namespace bl::verify
