// The verification suite on the CPU: the committed expected hashes are reproduced at thread counts
// 1, 2 and 3, and every check reacts to a one-bit change of one input (its negative control).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "bitlearn/verify.h"
#include "core/isa.h"

namespace bl::verify {
namespace {

void expect_all_identical(const DeviceRun& run, const std::string& context) {
  ASSERT_FALSE(run.checks.empty()) << context;
  for (const CheckResult& c : run.checks) {
    EXPECT_EQ(c.state, State::identical)
        << context << ": " << c.name << " " << state_name(c.state) << " hash " << c.hash
        << " expected " << c.expected << " " << c.reason;
  }
}

TEST(VerifySuite, QuickSuiteGivesExpectedHashesAtThreads1To3) {
  for (int threads : {1, 2, 3})
    expect_all_identical(run_suite(Suite::quick, DeviceId{}, threads),
                         "quick, threads " + std::to_string(threads));
}

TEST(VerifySuite, FullSuiteGivesExpectedHashesAtThreads3) {
  expect_all_identical(run_suite(Suite::full, DeviceId{}, 3), "full, threads 3");
}

// Every CPU kernel variant this machine can run reproduces the same hashes.
TEST(VerifySuite, QuickSuiteGivesExpectedHashesOnEveryCpuVariant) {
  const Isa before = active_isa();
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon}) {
    if (!isa_supported(isa)) continue;
    set_active_isa(isa);
    expect_all_identical(run_suite(Suite::quick, DeviceId{}, 2),
                         std::string("quick, isa ") + isa_name(isa));
  }
  set_active_isa(before);
}

TEST(VerifySuite, EveryCheckHasAnExpectedHashInBothSuites) {
  for (const std::string& name : list_checks(Suite::full))
    EXPECT_EQ(expected_hash(name, Suite::full).size(), 64u) << name;
  for (const std::string& name : list_checks(Suite::quick))
    EXPECT_EQ(expected_hash(name, Suite::quick).size(), 64u) << name;
}

// Negative control, check by check (quick-sized workloads, also for checks only in the full suite):
// one flipped input bit must move the hash.
TEST(VerifySuite, NegativeControlMovesEveryCheckHash) {
  Perturbation flip;
  flip.enabled = true;
  for (const std::string& name : list_checks(Suite::full)) {
    std::string plain = run_check_hash(name, Suite::quick, DeviceId{}, 2);
    std::string perturbed = run_check_hash(name, Suite::quick, DeviceId{}, 2, flip);
    EXPECT_NE(plain, perturbed) << name << ": flipping one input bit did not change the hash";
  }
}

// The same perturbation through the suite runner turns every check DIVERGENT and moves the digest.
TEST(VerifySuite, NegativeControlMakesEveryQuickCheckDivergent) {
  Perturbation flip;
  flip.enabled = true;
  DeviceRun plain = run_suite(Suite::quick, DeviceId{}, 2);
  DeviceRun run = run_suite(Suite::quick, DeviceId{}, 2, flip);
  for (const CheckResult& c : run.checks)
    EXPECT_EQ(c.state, State::divergent) << c.name << ": " << state_name(c.state) << " " << c.reason;
  EXPECT_NE(run.digest, plain.digest);
}

TEST(VerifySuite, DigestIsSha256OfCheckHashesInOrder) {
  CheckResult a, b, skipped;
  a.hash = std::string(64, 'a');
  b.hash = std::string(63, '0') + "1";
  // Order matters, and a skipped check counts as 32 zero bytes.
  EXPECT_NE(suite_digest({a, b}), suite_digest({b, a}));
  CheckResult zero;
  zero.hash = std::string(64, '0');
  EXPECT_EQ(suite_digest({a, skipped}), suite_digest({a, zero}));
  // SHA-256 of the empty message.
  EXPECT_EQ(suite_digest({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(VerifySuite, ChecksAreListedOnceAndQuickIsASubsetOfFull) {
  std::vector<std::string> full = list_checks(Suite::full);
  std::vector<std::string> quick = list_checks(Suite::quick);
  EXPECT_GE(full.size(), quick.size());
  for (size_t i = 0; i < full.size(); ++i)
    for (size_t j = i + 1; j < full.size(); ++j) EXPECT_NE(full[i], full[j]);
  for (const std::string& q : quick) EXPECT_NE(std::find(full.begin(), full.end(), q), full.end()) << q;
}

TEST(VerifySuite, DeviceNamesParseAndBadOnesThrow) {
  EXPECT_FALSE(parse_device("cpu").is_cuda);
  EXPECT_TRUE(parse_device("cuda").is_cuda);
  EXPECT_EQ(parse_device("cuda:3").index, 3);
  EXPECT_THROW(parse_device("gpu"), std::exception);
  EXPECT_THROW(parse_device("cuda:"), std::exception);
  EXPECT_THROW(parse_device("cuda:x"), std::exception);
  EXPECT_THROW(run_check_hash("no.such.check", Suite::quick, DeviceId{}, 1), std::exception);
}

}  // namespace
}  // namespace bl::verify
