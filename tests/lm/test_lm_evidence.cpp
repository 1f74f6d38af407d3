// test_lm_evidence.cpp: the language-model training evidence (bitlearn/lm_evidence.h) on its CPU
// routes, with a small model and two small fortune files so it takes seconds: the routes agree
// step by step and in the checkpoint, the switching route really switches, the hashes can be
// recomputed from the per-route report, and a changed record is caught.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/lm_evidence.h"
#include "core/error.h"
#include "lm/lm_test_util.h"

namespace bl::lm {
namespace {

namespace fs = std::filesystem;

bool have_fortunes() { return fs::is_directory(kFortunesDir); }

// 6 steps of the tiny Llama config (2 layers, width 64, context 32, vocabulary 384), switching
// every 2 steps, on two small fortune files.
EvidenceOptions small_options(const std::string& dir) {
  EvidenceOptions o;
  o.scratch_dir = dir + "/scratch";
  o.corpus_files = {"goedel", "pets"};
  o.vocab_size = 384;
  o.model = "llama";
  o.config_path = testing::tiny_config(dir, "llama");
  o.batch = 4;
  o.seq_len = 32;
  o.steps = 6;
  o.switch_every = 2;
  o.routes = {"cpu-1t", "cpu-2t", "cpu-cuda-cpu"};
  return o;
}

TEST(LmEvidence, CpuRoutesGiveTheSameRecordsAndCheckpoint) {
  if (!have_fortunes()) GTEST_SKIP() << kFortunesDir << " is missing (apt-get install fortunes)";
  const std::string dir = testing::temp_dir("evidence");
  const EvidenceOptions o = small_options(dir);
  const EvidenceResult r = run_lm_evidence(o);
  ASSERT_EQ(r.routes.size(), 3u);
  EXPECT_TRUE(r.identical) << (r.divergences.empty() ? "" : r.divergences[0]);
  EXPECT_EQ(r.corpus_files, (std::vector<std::string>{"goedel", "pets"}));
  EXPECT_FALSE(r.tokenizer_reused);
  EXPECT_GT(r.parameters, 0);
  for (const RouteResult& route : r.routes) {
    ASSERT_TRUE(route.ran) << route.name;
    ASSERT_EQ(route.steps.size(), 6u) << route.name;
    for (const StepRecord& s : route.steps) EXPECT_EQ(s.params_sha256.size(), 64u);
    EXPECT_EQ(route.records_sha256, r.routes[0].records_sha256) << route.name;
    EXPECT_EQ(route.checkpoint_sha256, r.routes[0].checkpoint_sha256) << route.name;
    EXPECT_EQ(route.checkpoint_sha256.size(), 64u);
  }
  // Training moved the weights: the step hashes differ from each other.
  EXPECT_NE(r.routes[0].steps[0].params_sha256, r.routes[0].steps[5].params_sha256);
  // The switching route ran three segments of two steps.
  const RouteResult& sw = r.routes[2];
  ASSERT_EQ(sw.segments.size(), 3u);
  EXPECT_NE(sw.segments[0].find("steps 1-2"), std::string::npos) << sw.segments[0];
  EXPECT_NE(sw.segments[2].find("steps 5-6"), std::string::npos) << sw.segments[2];
  if (cuda_device_count() == 0) {
    EXPECT_NE(sw.note.find("1 and 2 threads"), std::string::npos) << sw.note;
    EXPECT_NE(sw.segments[1].find("cpu 2 threads"), std::string::npos) << sw.segments[1];
  }
  EXPECT_EQ(r.digest, evidence_digest(r.routes[0]));
  EXPECT_EQ(r.digest.size(), 64u);

  // A user can recompute the record hash from the route's report JSON.
  const std::vector<uint8_t> bytes = read_file_bytes(sw.report_path, "report");
  const nlohmann::json rep = nlohmann::json::parse(bytes.begin(), bytes.end());
  ASSERT_EQ(rep["steps"].size(), 6u);
  std::vector<StepRecord> from_report;
  for (const auto& s : rep["steps"]) {
    StepRecord x;
    x.step = s["step"].get<int64_t>();
    const uint32_t lb = static_cast<uint32_t>(std::stoul(s["loss_bits"].get<std::string>(), nullptr, 16));
    const uint32_t gb = static_cast<uint32_t>(std::stoul(s["grad_norm_bits"].get<std::string>(), nullptr, 16));
    std::memcpy(&x.loss, &lb, 4);
    std::memcpy(&x.grad_norm, &gb, 4);
    x.params_sha256 = s["params_sha256"].get<std::string>();
    from_report.push_back(x);
  }
  EXPECT_EQ(step_records_sha256(from_report), sw.records_sha256);
  EXPECT_EQ(rep["checkpoint_sha256"].get<std::string>(), sw.checkpoint_sha256);
  EXPECT_EQ(rep["device"].get<std::string>(), "cpu,cpu,cpu");

  // The whole-result JSON names every route and its records.
  const nlohmann::json all = nlohmann::json::parse(evidence_json(r));
  EXPECT_EQ(all["routes"].size(), 3u);
  EXPECT_EQ(all["routes"][1]["records"].size(), 6u);
  EXPECT_EQ(all["digest"].get<std::string>(), r.digest);

  // Sabotage: one changed loss bit, then one changed checkpoint hash, are reported as divergent.
  EvidenceResult bad = r;
  bad.routes[1].steps[3].loss = std::nextafter(bad.routes[1].steps[3].loss, 100.0f);
  compare_routes(&bad);
  EXPECT_FALSE(bad.identical);
  ASSERT_EQ(bad.divergences.size(), 1u);
  EXPECT_NE(bad.divergences[0].find("cpu-2t"), std::string::npos) << bad.divergences[0];
  EXPECT_NE(bad.divergences[0].find("step 4 (loss bits)"), std::string::npos) << bad.divergences[0];
  bad = r;
  bad.routes[2].checkpoint_sha256[0] = bad.routes[2].checkpoint_sha256[0] == '0' ? '1' : '0';
  compare_routes(&bad);
  EXPECT_FALSE(bad.identical);
  ASSERT_EQ(bad.divergences.size(), 1u);
  EXPECT_NE(bad.divergences[0].find("checkpoint"), std::string::npos) << bad.divergences[0];

  // A second run in the same folder reuses the tokenizer; the CUDA route is skipped, not failed,
  // without a CUDA device.
  EvidenceOptions again = o;
  again.routes = {"cuda"};
  again.steps = 1;
  const EvidenceResult r2 = run_lm_evidence(again);
  EXPECT_TRUE(r2.tokenizer_reused);
  EXPECT_EQ(r2.tokenizer_sha256, r.tokenizer_sha256);
  if (cuda_device_count() == 0) {
    ASSERT_EQ(r2.routes.size(), 1u);
    EXPECT_FALSE(r2.routes[0].ran);
    EXPECT_NE(r2.routes[0].skip_reason.find("no CUDA device"), std::string::npos);
    EXPECT_TRUE(r2.divergences.empty());
  }
}

TEST(LmEvidence, BadOptionsGiveClearErrors) {
  const std::string dir = testing::temp_dir("evidence_bad");
  EvidenceOptions o = small_options(dir);
  o.corpus_source = dir + "/no-such-folder";
  try {
    run_lm_evidence(o);
    FAIL() << "a missing corpus folder was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get install fortunes"), std::string::npos) << e.what();
  }
  o = small_options(dir);
  o.routes = {"cpu-3t"};
  EXPECT_THROW(run_lm_evidence(o), Error);
  o = small_options(dir);
  o.routes = {"cpu-1t", "cpu-1t"};
  EXPECT_THROW(run_lm_evidence(o), Error);
  o = small_options(dir);
  o.steps = 0;
  EXPECT_THROW(run_lm_evidence(o), Error);
  o = small_options(dir);
  o.switch_every = 0;
  EXPECT_THROW(run_lm_evidence(o), Error);
  if (have_fortunes()) {
    o = small_options(dir);
    o.corpus_files = {"no-such-fortune"};
    EXPECT_THROW(run_lm_evidence(o), Error);
    // A route that stops with an error (here: a tokenizer larger than the model's vocabulary) is
    // reported with its error and makes the evidence fail.
    o = small_options(dir);
    o.vocab_size = 512;
    o.routes = {"cpu-1t"};
    const EvidenceResult r = run_lm_evidence(o);
    ASSERT_EQ(r.routes.size(), 1u);
    EXPECT_FALSE(r.routes[0].ran);
    EXPECT_NE(r.routes[0].error.find("vocab_size"), std::string::npos) << r.routes[0].error;
    EXPECT_FALSE(r.identical);
    ASSERT_EQ(r.divergences.size(), 1u);
    EXPECT_NE(r.divergences[0].find("route cpu-1t failed"), std::string::npos) << r.divergences[0];
  }
}

}  // namespace
}  // namespace bl::lm
