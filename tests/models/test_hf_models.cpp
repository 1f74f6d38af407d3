// Tests of the Hugging Face fixture models (tests/data/hf): loading, logits against PyTorch's
// float64 run, greedy generation, decode == prefill, batch invariance, thread-count identity and
// clear errors on bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "bitlearn/io.h"
#include "bitlearn/models.h"
#include "bitlearn/ops.h"
#include "bitlearn/safetensors.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::models {
namespace {

namespace fs = std::filesystem;

std::string fixture_dir(const std::string& name) {
  return std::string(BITLEARN_SOURCE_DIR) + "/tests/data/hf/" + name;
}

std::vector<int32_t> ids_of(const SafetensorsFile& f, const std::string& name) {
  const auto v = f.get(name).to_vector<int64_t>();
  return std::vector<int32_t>(v.begin(), v.end());
}

double f32_vs_f64(const std::string& model) {
  const auto j = nlohmann::json::parse(read_file_text(std::string(BITLEARN_SOURCE_DIR) + "/tests/data/hf/report.json"));
  return j[model]["f32_vs_f64_max_abs"].get<double>();
}

class HfModel : public ::testing::TestWithParam<std::string> {};

TEST_P(HfModel, LogitsCloseToFloat64LikePyTorch) {
  const std::string name = GetParam();
  const CausalLM model = CausalLM::load(fixture_dir(name));
  const SafetensorsFile ref = SafetensorsFile::open(fixture_dir(name) + "/reference.safetensors");
  const std::vector<int32_t> ids = ids_of(ref, "input_ids");
  const Tensor logits = model.forward(Tensor::from_vector(ids, {static_cast<int64_t>(ids.size())}));
  const std::vector<float> ours = logits.to_vector<float>();
  const std::vector<double> f64 = ref.get_f64("logits_f64");
  ASSERT_EQ(ours.size(), f64.size());
  double worst = 0;
  for (size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(ours[i]) - f64[i]));
  const double torch = f32_vs_f64(name);
  std::printf("[ %s ] max |ours - f64| = %.3e, PyTorch f32: %.3e, ratio %.2f\n", name.c_str(), worst, torch,
              worst / torch);
  EXPECT_LE(worst, 4.0 * torch) << name;
}

TEST_P(HfModel, GreedyGenerationReproducesFloat64) {
  const std::string name = GetParam();
  const CausalLM model = CausalLM::load(fixture_dir(name));
  const SafetensorsFile ref = SafetensorsFile::open(fixture_dir(name) + "/reference.safetensors");
  const std::vector<int32_t> prompt = ids_of(ref, "greedy_prompt");
  const std::vector<int32_t> expected = ids_of(ref, "greedy_f64");
  GenerateOptions o;
  o.max_new_tokens = static_cast<int64_t>(expected.size() - prompt.size());
  o.stop_at_eos = false;
  EXPECT_EQ(generate(model, prompt, o), expected) << name;
}

TEST_P(HfModel, DecodeEqualsPrefill) {
  const std::string name = GetParam();
  const CausalLM model = CausalLM::load(fixture_dir(name));
  const SafetensorsFile ref = SafetensorsFile::open(fixture_dir(name) + "/reference.safetensors");
  const std::vector<int32_t> ids = ids_of(ref, "input_ids");
  const int64_t T = static_cast<int64_t>(ids.size());
  const Tensor prefill = model.forward({ids});  // [1, T, V]
  KvCache cache = model.new_cache(1, T);
  const int64_t first = 11;
  Tensor part = model.forward({std::vector<int32_t>(ids.begin(), ids.begin() + first)}, &cache);
  EXPECT_EQ(part.digest(), prefill.slice(1, 0, first).contiguous().digest()) << name;
  for (int64_t t = first; t < T; ++t) {
    Tensor step = model.forward({{ids[t]}}, &cache);
    ASSERT_EQ(step.digest(), prefill.slice(1, t, t + 1).contiguous().digest()) << name << " position " << t;
  }
  EXPECT_EQ(cache.lengths()[0], T);
}

TEST_P(HfModel, BatchInvariance) {
  const std::string name = GetParam();
  const CausalLM model = CausalLM::load(fixture_dir(name));
  const SafetensorsFile ref = SafetensorsFile::open(fixture_dir(name) + "/reference.safetensors");
  const std::vector<int32_t> ids = ids_of(ref, "input_ids");
  const std::vector<int32_t> mid(ids.begin() + 3, ids.begin() + 30);
  const std::vector<int32_t> tiny(ids.begin() + 40, ids.begin() + 45);
  const Tensor batch = model.forward({tiny, ids, mid});  // [3, 48, V], rows past each end are +0
  const int64_t n_mid = static_cast<int64_t>(mid.size());
  EXPECT_EQ(batch.slice(0, 1, 2).contiguous().digest(), model.forward({ids}).digest()) << name;
  EXPECT_EQ(batch.slice(0, 2, 3).slice(1, 0, n_mid).contiguous().digest(), model.forward({mid}).digest()) << name;
  EXPECT_EQ(batch.slice(0, 0, 1).slice(1, 0, 5).contiguous().digest(), model.forward({tiny}).digest()) << name;
  EXPECT_EQ(sum(abs(batch.slice(0, 2, 3).slice(1, n_mid, 48))).item(), 0.0) << name;
  // Batched decode with a cache of mixed lengths equals each sequence decoded alone.
  KvCache cache = model.new_cache(2, 48);
  model.forward({tiny, mid}, &cache);
  Tensor step = model.forward({{ids[0]}, {ids[1]}}, &cache);
  std::vector<int32_t> tiny_next = tiny, mid_next = mid;
  tiny_next.push_back(ids[0]);
  mid_next.push_back(ids[1]);
  EXPECT_EQ(step.slice(0, 0, 1).contiguous().digest(), model.forward({tiny_next}).slice(1, 5, 6).contiguous().digest());
  EXPECT_EQ(step.slice(0, 1, 2).contiguous().digest(),
            model.forward({mid_next}).slice(1, n_mid, n_mid + 1).contiguous().digest());
}

TEST_P(HfModel, SameBitsAtAnyThreadCount) {
  const std::string name = GetParam();
  const CausalLM model = CausalLM::load(fixture_dir(name));
  const SafetensorsFile ref = SafetensorsFile::open(fixture_dir(name) + "/reference.safetensors");
  const std::vector<int32_t> ids = ids_of(ref, "input_ids");
  const int saved = num_threads();
  std::string first;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    const std::string d = model.forward({ids}).digest();
    if (first.empty()) first = d;
    EXPECT_EQ(d, first) << name << " threads " << threads;
  }
  set_num_threads(saved);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfModel,
                         ::testing::Values("gpt2", "llama", "qwen2", "mistral", "phi3", "gemma", "mamba", "mamba2"));

// ---- bad input ----

std::string scratch_copy(const std::string& name, const std::string& tag) {
  const std::string dir = ::testing::TempDir() + "bl_hf_" + tag + "_" + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(fixture_dir(name) + "/" + f, dir + "/" + f);
  return dir;
}

void expect_load_error(const std::string& dir, const std::vector<std::string>& needles) {
  try {
    CausalLM::load(dir);
    FAIL() << "no error for " << dir;
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
  fs::remove_all(dir);
}

TEST(HfModelErrors, TruncatedSafetensors) {
  const std::string dir = scratch_copy("llama", "trunc");
  auto bytes = read_file_bytes(dir + "/model.safetensors");
  bytes.resize(bytes.size() / 2);
  write_file_atomic(dir + "/model.safetensors", bytes);
  expect_load_error(dir, {"model.safetensors", "beyond"});
}

TEST(HfModelErrors, CorruptHeader) {
  const std::string dir = scratch_copy("llama", "corrupt");
  auto bytes = read_file_bytes(dir + "/model.safetensors");
  bytes[8] = '#';  // the opening brace of the JSON header
  write_file_atomic(dir + "/model.safetensors", bytes);
  expect_load_error(dir, {"model.safetensors", "not valid JSON"});
}

TEST(HfModelErrors, MissingTensor) {
  const std::string dir = scratch_copy("llama", "missing");
  SafetensorsFile f = SafetensorsFile::open(dir + "/model.safetensors");
  std::map<std::string, Tensor> t;
  for (const auto& n : f.names())
    if (n != "model.layers.1.mlp.up_proj.weight") t[n] = f.get(n);
  save_safetensors(dir + "/model.safetensors", t);
  expect_load_error(dir, {"'model.layers.1.mlp.up_proj.weight' is missing", "intermediate_size 176"});
}

TEST(HfModelErrors, ShapeDisagreesWithConfig) {
  const std::string dir = scratch_copy("qwen2", "shape");
  auto j = nlohmann::json::parse(read_file_text(dir + "/config.json"));
  j["intermediate_size"] = 128;
  write_file_atomic(dir + "/config.json", j.dump());
  expect_load_error(dir, {"'model.layers.0.mlp.gate_proj.weight'", "[160, 64]", "[128, 64]", "intermediate_size 128"});
}

TEST(HfModelErrors, UnsupportedConfig) {
  auto base = nlohmann::json::parse(read_file_text(fixture_dir("llama") + "/config.json"));
  auto rope = base;
  rope["rope_parameters"]["rope_type"] = "linear";
  EXPECT_THROW(
      {
        try {
          parse_config(rope.dump());
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("rope_type"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  auto scaling = base;
  scaling["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_THROW(parse_config(scaling.dump()), Error);
  auto act = base;
  act["hidden_act"] = "mish";
  try {
    parse_config(act.dump());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'hidden_act' = \"mish\""), std::string::npos) << e.what();
  }
  auto arch = base;
  arch["model_type"] = "bert";
  EXPECT_THROW(parse_config(arch.dump()), Error);
  EXPECT_THROW(parse_config("{not json"), Error);
}

TEST(HfModelErrors, TokenIdOutOfRange) {
  const CausalLM model = CausalLM::load(fixture_dir("gpt2"));
  try {
    model.forward(Tensor::from_vector(std::vector<int64_t>{1, 512, 3}, {3}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("token id 512"), std::string::npos) << e.what();
  }
  EXPECT_THROW(model.forward({{1, -1}}), Error);
  GenerateOptions o;
  o.max_new_tokens = 200;
  EXPECT_THROW(generate(model, {1, 2}, o), Error);  // beyond n_positions
}

TEST(Sampling, ReproducibleAndKeyedBySeedAndPosition) {
  const CausalLM model = CausalLM::load(fixture_dir("llama"));
  GenerateOptions o;
  o.max_new_tokens = 12;
  o.temperature = 1.5f;
  o.seed = 42;
  o.stop_at_eos = false;
  const auto a = generate(model, {5, 6, 7}, o);
  EXPECT_EQ(a, generate(model, {5, 6, 7}, o));
  o.seed = 43;
  EXPECT_NE(a, generate(model, {5, 6, 7}, o));
  o.top_k = 1;  // top-1 sampling is greedy
  GenerateOptions g;
  g.max_new_tokens = 12;
  g.stop_at_eos = false;
  EXPECT_EQ(generate(model, {5, 6, 7}, o), generate(model, {5, 6, 7}, g));
  o.top_k = 0;
  o.top_p = 0.5f;
  EXPECT_EQ(generate(model, {5, 6, 7}, o).size(), 15u);
}

// Several prompts generated together: each sequence is what it gives alone (greedy, sampled with
// top-k / top-p / min-p and a repetition penalty, an early end-of-sequence for some), for every
// fixture family (the state-space ones run the prompts one after the other); a sabotage arm: a
// batch whose sequences share one sampling position stream must differ.
TEST(GenerateBatch, EachSequenceIsWhatItGivesAlone) {
  const std::vector<std::vector<int32_t>> prompts = {{5, 6, 7}, {1}, {9, 8, 7, 6, 5, 4, 3, 2}, {5, 6, 7}, {11, 12}};
  for (const char* name : {"gpt2", "llama", "qwen2", "mistral", "phi3", "gemma", "mamba", "mamba2"}) {
    const CausalLM model = CausalLM::load(fixture_dir(name));
    for (int mode = 0; mode < 3; ++mode) {
      GenerateOptions o;
      o.max_new_tokens = 10;
      o.stop_at_eos = mode != 2;
      if (mode >= 1) {
        o.temperature = 1.3f, o.seed = 17, o.top_k = 40, o.top_p = 0.9f, o.min_p = 0.02f;
        o.repetition_penalty = 1.2f;
      }
      if (mode == 2) o.eos_ids = {3, 7};  // some sequences end early on these
      std::vector<size_t> seen(prompts.size(), 0);
      const auto together = generate_batch(model, prompts, o, [&](size_t i, int32_t) {
        ++seen[i];
        return !(i == 4 && seen[i] == 3);  // the caller ends sequence 4 after its third token
      });
      ASSERT_EQ(together.size(), prompts.size());
      for (size_t i = 0; i < prompts.size(); ++i) {
        GenerateOptions alone = o;
        size_t n = 0;
        alone.on_token = [&](int32_t) { return !(i == 4 && ++n == 3); };
        EXPECT_EQ(together[i], generate(model, prompts[i], alone)) << name << " mode " << mode << " sequence " << i;
        EXPECT_EQ(seen[i], together[i].size() - prompts[i].size()) << name << " sequence " << i;
      }
    }
  }
  // Sabotage: the positions of all sequences taken from sequence 0 (one shared sampling stream).
  const CausalLM model = CausalLM::load(fixture_dir("llama"));
  GenerateOptions o;
  o.max_new_tokens = 8, o.temperature = 1.5f, o.seed = 3, o.stop_at_eos = false;
  const std::vector<std::vector<int32_t>> two = {{5, 6, 7}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
  const auto together = generate_batch(model, two, o);
  KvCache cache = model.new_cache(2, 32);
  Tensor logits = model.forward(two, &cache);
  std::vector<int32_t> wrong = two[1];
  for (int64_t step = 0; step < 8; ++step) {
    std::vector<float> row = logits.slice(0, 1, 2).slice(1, step == 0 ? 8 : 0, step == 0 ? 9 : 1).to_vector<float>();
    wrong.push_back(pick_token(row, static_cast<int64_t>(two[0].size()) + step, o));  // sequence 0's positions
    logits = model.forward({{}, {wrong.back()}}, &cache);
  }
  EXPECT_NE(wrong, together[1]) << "the shared position stream went unnoticed";
  EXPECT_THROW(generate_batch(model, {}, o), Error);
  EXPECT_THROW(generate_batch(model, {{1, 2}, {}}, o), Error);
}

}  // namespace
}  // namespace bl::models
