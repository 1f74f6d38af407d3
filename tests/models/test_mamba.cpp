// Tests of Mamba and Mamba-2 beyond the shared fixture suite (test_hf_models.cpp): a cache fed in
// chunks of several tokens equals the prefill, the cache's capacity is enforced, config fields
// that change the computation are honoured or refused by name, and missing or misshapen tensors
// name the tensor and the config fields.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "bitlearn/io.h"
#include "bitlearn/models.h"
#include "bitlearn/ops.h"
#include "bitlearn/safetensors.h"
#include "core/error.h"

namespace bl::models {
namespace {

namespace fs = std::filesystem;

std::string fixture_dir(const std::string& name) {
  return std::string(BITLEARN_SOURCE_DIR) + "/tests/data/hf/" + name;
}

std::vector<int32_t> fixture_ids(const std::string& name) {
  const auto v = SafetensorsFile::open(fixture_dir(name) + "/reference.safetensors").get("input_ids").to_vector<int64_t>();
  return std::vector<int32_t>(v.begin(), v.end());
}

nlohmann::json fixture_config(const std::string& name) {
  return nlohmann::json::parse(read_file_text(fixture_dir(name) + "/config.json"));
}

std::map<std::string, Tensor> fixture_tensors(const std::string& name) {
  SafetensorsFile f = SafetensorsFile::open(fixture_dir(name) + "/model.safetensors");
  std::map<std::string, Tensor> t;
  for (const auto& n : f.names()) t[n] = f.get(n);
  return t;
}

// The message of the bl::Error that body throws ("" when it throws none).
template <class Body>
std::string error_of(Body body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class MambaModel : public ::testing::TestWithParam<std::string> {};

TEST_P(MambaModel, ChunkedCacheEqualsPrefill) {
  const std::string name = GetParam();
  const CausalLM model = CausalLM::load(fixture_dir(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  const Tensor prefill = model.forward({ids});
  KvCache cache = model.new_cache(1, 48);
  int64_t start = 0;
  for (int64_t n : {1, 2, 3, 5, 8, 13, 16}) {  // 48 tokens in chunks, one token first
    const std::vector<int32_t> chunk(ids.begin() + start, ids.begin() + start + n);
    const Tensor part = model.forward({chunk}, &cache);
    ASSERT_EQ(part.digest(), prefill.slice(1, start, start + n).contiguous().digest()) << name << " at " << start;
    start += n;
  }
  EXPECT_EQ(cache.lengths()[0], 48);
  EXPECT_THROW(model.forward({{1}}, &cache), Error);  // beyond the capacity of 48
}

TEST_P(MambaModel, BatchedChunksOfMixedLengthsEqualEachAlone) {
  const std::string name = GetParam();
  const CausalLM model = CausalLM::load(fixture_dir(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  const std::vector<int32_t> a(ids.begin(), ids.begin() + 30), b(ids.begin() + 30, ids.begin() + 37);
  KvCache cache = model.new_cache(3, 48);
  model.forward({{a.begin(), a.begin() + 20}, {b.begin(), b.begin() + 3}, {ids[47]}}, &cache);
  // Second call: sequence 2 adds nothing (an empty row), the others add chunks of different sizes.
  const Tensor step = model.forward({{a.begin() + 20, a.end()}, {b.begin() + 3, b.end()}, {}}, &cache);
  EXPECT_EQ(step.slice(0, 0, 1).contiguous().digest(), model.forward({a}).slice(1, 20, 30).contiguous().digest());
  EXPECT_EQ(step.slice(0, 1, 2).slice(1, 0, 4).contiguous().digest(),
            model.forward({b}).slice(1, 3, 7).contiguous().digest());
  EXPECT_EQ(sum(abs(step.slice(0, 2, 3))).item(), 0.0);
  EXPECT_EQ((std::vector<int64_t>{30, 7, 1}), cache.lengths());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MambaModel, ::testing::Values("mamba", "mamba2"));

TEST(MambaConfig, ParsesTheFixtures) {
  const ModelConfig m = load_config(fixture_dir("mamba") + "/config.json");
  EXPECT_TRUE(m.is_ssm());
  EXPECT_EQ(m.intermediate_size, 128);
  EXPECT_EQ(m.ssm_heads, 128);
  EXPECT_EQ(m.ssm_head_dim, 1);
  EXPECT_EQ(m.ssm_state_size, 8);
  EXPECT_EQ(m.time_step_rank, 4);
  EXPECT_TRUE(m.tie_word_embeddings);
  const ModelConfig m2 = load_config(fixture_dir("mamba2") + "/config.json");
  EXPECT_EQ(m2.ssm_heads, 8);
  EXPECT_EQ(m2.ssm_head_dim, 16);
  EXPECT_EQ(m2.ssm_groups, 1);
  EXPECT_EQ(m2.time_step_min, 0.0f);
  EXPECT_TRUE(std::isinf(m2.time_step_max));  // {"__float__": "Infinity"}
  EXPECT_FALSE(m2.tie_word_embeddings);
  auto rank = fixture_config("mamba");
  rank["time_step_rank"] = "auto";
  EXPECT_EQ(parse_config(rank.dump()).time_step_rank, 4);  // ceil(64 / 16)
}

TEST(MambaConfig, UnsupportedFieldsAreNamed) {
  auto act = fixture_config("mamba");
  act["hidden_act"] = "gelu";
  EXPECT_NE(error_of([&] { parse_config(act.dump()); }).find("'hidden_act' = \"gelu\""), std::string::npos);
  auto rank = fixture_config("mamba");
  rank["time_step_rank"] = "big";
  EXPECT_NE(error_of([&] { parse_config(rank.dump()); }).find("'time_step_rank'"), std::string::npos);
  auto heads = fixture_config("mamba2");
  heads["num_heads"] = 6;
  EXPECT_NE(error_of([&] { parse_config(heads.dump()); }).find("num_heads 6"), std::string::npos);
  auto groups = fixture_config("mamba2");
  groups["n_groups"] = 3;
  EXPECT_NE(error_of([&] { parse_config(groups.dump()); }).find("n_groups 3"), std::string::npos);
  auto hybrid = fixture_config("mamba2");
  hybrid["layer_types"] = {"mamba", "attention"};
  EXPECT_NE(error_of([&] { parse_config(hybrid.dump()); }).find("'layer_types'"), std::string::npos);
  auto limit = fixture_config("mamba2");
  limit["time_step_limit"] = {0.5, 0.1};
  EXPECT_NE(error_of([&] { parse_config(limit.dump()); }).find("'time_step_limit'"), std::string::npos);
  auto state = fixture_config("mamba");
  state.erase("state_size");
  EXPECT_NE(error_of([&] { parse_config(state.dump()); }).find("'state_size' is missing"), std::string::npos);
}

TEST(MambaConfig, TimeStepLimitClampsDt) {
  // A finite limit changes the logits (dt is clamped) and stays deterministic.
  auto cfg = fixture_config("mamba2");
  const auto tensors = fixture_tensors("mamba2");
  const std::vector<int32_t> ids = fixture_ids("mamba2");
  const CausalLM plain = CausalLM::from_tensors(parse_config(cfg.dump()), tensors);
  cfg["time_step_limit"] = {0.05, 0.2};
  const CausalLM clamped = CausalLM::from_tensors(parse_config(cfg.dump()), tensors);
  const std::string d = clamped.forward({ids}).digest();
  EXPECT_NE(d, plain.forward({ids}).digest());
  EXPECT_EQ(d, clamped.forward({ids}).digest());
}

TEST(MambaWeights, MissingOrMisshapenTensorsAreNamed) {
  const ModelConfig c = load_config(fixture_dir("mamba") + "/config.json");
  auto missing = fixture_tensors("mamba");
  missing.erase("backbone.layers.1.mixer.dt_proj.bias");
  const std::string m = error_of([&] { CausalLM::from_tensors(c, missing, Device::cpu(), "mamba test"); });
  EXPECT_NE(m.find("'backbone.layers.1.mixer.dt_proj.bias' is missing"), std::string::npos) << m;
  EXPECT_NE(m.find("time_step_rank 4"), std::string::npos) << m;
  const ModelConfig c2 = load_config(fixture_dir("mamba2") + "/config.json");
  auto shape = fixture_tensors("mamba2");
  shape["backbone.layers.0.mixer.A_log"] = Tensor::zeros({7});
  const std::string s = error_of([&] { CausalLM::from_tensors(c2, shape, Device::cpu(), "mamba2 test"); });
  EXPECT_NE(s.find("'backbone.layers.0.mixer.A_log' has shape [7]"), std::string::npos) << s;
  EXPECT_NE(s.find("num_heads 8"), std::string::npos) << s;
  auto untied = load_config(fixture_dir("mamba") + "/config.json");
  untied.tie_word_embeddings = false;  // then lm_head.weight is required
  EXPECT_NE(error_of([&] { CausalLM::from_tensors(untied, fixture_tensors("mamba")); }).find("'lm_head.weight'"),
            std::string::npos);
}

TEST(MambaWeights, GroupsShareBAndCAcrossHeads) {
  // n_groups 2 on the mamba2 fixture's shapes: in_proj and conv grow by 2 * state_size rows each;
  // the model runs, decode equals prefill, and the result differs from one group.
  auto cfg = fixture_config("mamba2");
  cfg["n_groups"] = 2;
  const ModelConfig c = parse_config(cfg.dump());
  auto t = fixture_tensors("mamba2");
  for (int l = 0; l < 2; ++l) {
    const std::string m = "backbone.layers." + std::to_string(l) + ".mixer.";
    // Rows of in_proj: z (128), x (128), B (2 x 16), C (2 x 16), dt (8): duplicate the group rows.
    const Tensor w = t[m + "in_proj.weight"];
    const Tensor b_rows = w.slice(0, 256, 272), c_rows = w.slice(0, 272, 288);
    t[m + "in_proj.weight"] = concat({w.slice(0, 0, 256), b_rows, mul(b_rows, Tensor::scalar(0.5)), c_rows,
                                      mul(c_rows, Tensor::scalar(-1.0)), w.slice(0, 288, 296)}, 0);
    const Tensor cw = t[m + "conv1d.weight"], cb = t[m + "conv1d.bias"];
    t[m + "conv1d.weight"] = concat({cw.slice(0, 0, 144), cw.slice(0, 128, 144), cw.slice(0, 144, 160),
                                     cw.slice(0, 144, 160)}, 0);
    t[m + "conv1d.bias"] = concat({cb.slice(0, 0, 144), cb.slice(0, 128, 144), cb.slice(0, 144, 160),
                                   cb.slice(0, 144, 160)}, 0);
  }
  const CausalLM model = CausalLM::from_tensors(c, t);
  const std::vector<int32_t> ids = fixture_ids("mamba2");
  const Tensor prefill = model.forward({ids});
  KvCache cache = model.new_cache(1, 48);
  model.forward({{ids.begin(), ids.begin() + 40}}, &cache);
  EXPECT_EQ(model.forward({{ids[40]}}, &cache).digest(), prefill.slice(1, 40, 41).contiguous().digest());
  EXPECT_NE(prefill.digest(), CausalLM::load(fixture_dir("mamba2")).forward({ids}).digest());
}

}  // namespace
}  // namespace bl::models
