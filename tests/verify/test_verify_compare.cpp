// Reports and `compare`: a JSON report survives a round trip, a changed hash is found and named,
// and unreadable or corrupt reports give a clear bl::Error.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

#include "bitlearn/verify.h"
#include "core/error.h"

namespace bl::verify {
namespace {

std::string temp_path(const std::string& tag) {
  return testing::TempDir() + "bl_verify_" + tag + "_" + std::to_string(::getpid()) + ".json";
}

Report sample_report() {
  Report r;
  r.version = "0.1.0";
  r.contract_profile = "bitlearn.identical.v1";
  r.suite = Suite::quick;
  r.threads = 2;
  DeviceRun run;
  run.device = "cpu";
  const char* names[] = {"math.exp", "rng.normal", "op.softmax"};
  for (int i = 0; i < 3; ++i) {
    CheckResult c;
    c.name = names[i];
    c.device = "cpu";
    c.state = State::identical;
    c.hash = std::string(64, static_cast<char>('a' + i));
    c.expected = c.hash;
    run.checks.push_back(c);
  }
  run.digest = suite_digest(run.checks);
  r.runs.push_back(run);
  return r;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

TEST(VerifyCompare, ReportRoundTripsAndComparesIdentical) {
  std::string path = temp_path("roundtrip");
  Report r = sample_report();
  write_report_json(r, path);
  Report back = read_report_json(path);
  ASSERT_EQ(back.runs.size(), 1u);
  ASSERT_EQ(back.runs[0].checks.size(), 3u);
  EXPECT_EQ(back.runs[0].checks[1].name, "rng.normal");
  EXPECT_EQ(back.runs[0].checks[1].hash, r.runs[0].checks[1].hash);
  EXPECT_EQ(back.runs[0].digest, r.runs[0].digest);
  EXPECT_TRUE(compare_reports(r, back).empty());
  std::remove(path.c_str());
}

TEST(VerifyCompare, ChangedHashIsFoundAndNamedFirst) {
  Report a = sample_report();
  Report b = sample_report();
  b.runs[0].checks[1].hash[10] = '0';
  std::vector<std::string> diffs = compare_reports(a, b);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].rfind("rng.normal:", 0), 0u) << diffs[0];
  b.runs[0].checks[2].hash[0] = '0';
  diffs = compare_reports(a, b);
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0].rfind("rng.normal:", 0), 0u) << diffs[0];
  EXPECT_EQ(diffs[1].rfind("op.softmax:", 0), 0u) << diffs[1];
}

TEST(VerifyCompare, MissingAndSkippedChecksAreDifferences) {
  Report a = sample_report();
  Report b = sample_report();
  b.runs[0].checks.pop_back();
  b.runs[0].checks[0].hash.clear();
  b.runs[0].checks[0].state = State::skipped;
  std::vector<std::string> diffs = compare_reports(a, b);
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_NE(diffs[0].find("math.exp"), std::string::npos);
  EXPECT_NE(diffs[1].find("op.softmax: only in A"), std::string::npos) << diffs[1];
}

TEST(VerifyCompare, CrossDeviceComparisonNamesBothDevices) {
  Report r = sample_report();
  DeviceRun gpu = r.runs[0];
  gpu.device = "cuda:0";
  for (auto& c : gpu.checks) c.device = "cuda:0";
  gpu.checks[2].hash[5] = '9';
  r.runs.push_back(gpu);
  compare_devices(r);
  ASSERT_EQ(r.cross_device_divergences.size(), 1u);
  EXPECT_NE(r.cross_device_divergences[0].find("op.softmax"), std::string::npos);
  EXPECT_NE(r.cross_device_divergences[0].find("cpu"), std::string::npos);
  EXPECT_NE(r.cross_device_divergences[0].find("cuda:0"), std::string::npos);
  EXPECT_EQ(r.runs[1].checks[2].state, State::divergent);
  EXPECT_EQ(r.runs[1].checks[0].state, State::identical);
}

TEST(VerifyCompare, CorruptJsonGivesAClearError) {
  std::string path = temp_path("corrupt");
  write_report_json(sample_report(), path);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();

  struct Case {
    std::string text;
    std::string message_part;
  };
  std::string bad_hash = text;
  bad_hash.replace(bad_hash.find(std::string(64, 'b')), 3, "xyz");
  const Case cases[] = {
      {text.substr(0, text.size() / 2), "not valid JSON"},
      {"", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {"{\"format\": \"something.else\"}", "format"},
      {bad_hash, "malformed hash"},
  };
  for (const Case& c : cases) {
    write_text(path, c.text);
    try {
      read_report_json(path);
      ADD_FAILURE() << "no error for: " << c.text.substr(0, 40);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  std::remove(path.c_str());
  EXPECT_THROW(read_report_json(path + ".does-not-exist"), Error);
}

// A report must agree with itself: an edited check hash no longer gives the digest the report
// claims, and a check marked IDENTICAL must hold the expected hash. Both are refused on reading.
TEST(VerifyCompare, SelfContradictingReportsAreRefused) {
  std::string path = temp_path("selfcheck");
  struct Case {
    const char* what;
    void (*edit)(Report&);
    const char* message_part;
  };
  const Case cases[] = {
      {"edited hash, state and expected kept",
       [](Report& r) {
         r.runs[0].checks[1].hash[3] = '0';
         r.runs[0].checks[1].expected = r.runs[0].checks[1].hash;
       },
       "claims digest"},
      {"IDENTICAL with another hash than the expected one",
       [](Report& r) {
         r.runs[0].checks[1].hash[3] = '0';
         r.runs[0].digest = suite_digest(r.runs[0].checks);
       },
       "is marked IDENTICAL but its hash"},
      {"IDENTICAL without a hash",
       [](Report& r) {
         r.runs[0].checks[0].hash.clear();
         r.runs[0].digest = suite_digest(r.runs[0].checks);
       },
       "is marked IDENTICAL but its hash is empty"},
      {"DIVERGENT without a hash",
       [](Report& r) {
         r.runs[0].checks[0].hash.clear();
         r.runs[0].checks[0].state = State::divergent;
         r.runs[0].digest = suite_digest(r.runs[0].checks);
       },
       "marked DIVERGENT but has no hash"},
      {"digest of another run", [](Report& r) { r.runs[0].digest = std::string(64, 'c'); }, "claims digest"},
  };
  for (const Case& c : cases) {
    Report r = sample_report();
    c.edit(r);
    write_report_json(r, path);
    try {
      read_report_json(path);
      ADD_FAILURE() << "no error for: " << c.what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos) << c.what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("self-contradicting"), std::string::npos) << e.what();
    }
  }
  // The top-level digest must be the first run's.
  write_report_json(sample_report(), path);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::string digest = sample_report().runs[0].digest;
  const size_t last = text.rfind(digest);
  ASSERT_NE(last, std::string::npos);
  ASSERT_NE(text.find(digest), last);  // the run's digest and the top-level one
  text.replace(last, 64, std::string(64, 'd'));
  write_text(path, text);
  EXPECT_THROW(read_report_json(path), Error);
  // Sabotage arm: the untouched report still reads.
  write_report_json(sample_report(), path);
  EXPECT_NO_THROW(read_report_json(path));
  std::remove(path.c_str());
}

TEST(VerifyCompare, JsonIsWrittenAtomically) {
  std::string path = temp_path("atomic");
  write_report_json(sample_report(), path);
  // No temporary file is left beside the report.
  std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  std::ifstream t(tmp);
  EXPECT_FALSE(t.good());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace bl::verify
