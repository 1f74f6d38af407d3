// Hostile model folders and config.json files: shard names that leave the folder, non-finite
// weights, sizes beyond the config limits, and a generation length that overflows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/lm.h"
#include "bitlearn/models.h"
#include "bitlearn/safetensors.h"
#include "core/error.h"

namespace bl::models {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(BITLEARN_SOURCE_DIR) + "/tests/data/hf/" + name; }

// A fresh, empty folder for one test.
std::string fresh_dir(const std::string& tag) {
  const std::string d = ::testing::TempDir() + "bl_hostile_models_" + std::to_string(::getpid()) + "_" + tag;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void write_text(const std::string& path, const std::string& text) { write_file_atomic(path, text, "test file"); }

// A llama folder whose weights are read through model.safetensors.index.json with this weight_map.
std::string indexed_folder(const std::string& tag, const std::string& weight_map_json) {
  const std::string d = fresh_dir(tag);
  fs::copy_file(fixture("llama") + "/config.json", d + "/config.json");
  write_text(d + "/model.safetensors.index.json", "{\"metadata\": {}, \"weight_map\": " + weight_map_json + "}");
  return d;
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(HostileModels, ShardNameWithDotDotIsRefusedBeforeAnyOpen) {
  // Keys are read in sorted order: the first names a missing file. Were files opened while the
  // index is read, the error would be that file's "cannot open".
  const std::string d = indexed_folder(
      "dotdot", R"({"a.weight": "missing.safetensors", "b.weight": "../../../../etc/passwd"})");
  const std::string e = error_of([&] { CausalLM::load(d); });
  EXPECT_HAS(e, "weight_map entry 'b.weight'");
  EXPECT_HAS(e, "../../../../etc/passwd");
  EXPECT_HAS(e, "'..'");
  EXPECT_EQ(e.find("cannot open"), std::string::npos) << e;
  const std::string inner = indexed_folder("dotdot_inner", R"({"w": "sub/../../x.safetensors"})");
  EXPECT_HAS(error_of([&] { CausalLM::load(inner); }), "'..'");
}

TEST(HostileModels, AbsoluteShardNameIsRefused) {
  const std::string d = indexed_folder("absolute", R"({"model.embed_tokens.weight": "/etc/passwd"})");
  const std::string e = error_of([&] { CausalLM::load(d); });
  EXPECT_HAS(e, "weight_map entry 'model.embed_tokens.weight'");
  EXPECT_HAS(e, "absolute path");
  const std::string empty = indexed_folder("empty_name", R"({"w": ""})");
  EXPECT_HAS(error_of([&] { CausalLM::load(empty); }), "empty file name");
}

TEST(HostileModels, ShardSymlinkOutsideTheFolderIsRefused) {
  const std::string base = fresh_dir("symlink");
  fs::copy_file(fixture("llama") + "/model.safetensors", base + "/outside.safetensors");
  const std::string d = base + "/model";
  fs::create_directories(d);
  fs::copy_file(fixture("llama") + "/config.json", d + "/config.json");
  fs::create_symlink("../outside.safetensors", d + "/model-00001-of-00001.safetensors");
  fs::create_directory_symlink("..", d + "/up");
  write_text(d + "/model.safetensors.index.json",
             R"({"weight_map": {"model.norm.weight": "model-00001-of-00001.safetensors"}})");
  std::string e = error_of([&] { CausalLM::load(d); });
  EXPECT_HAS(e, "weight_map entry 'model.norm.weight'");
  EXPECT_HAS(e, "outside the model folder");
  // A linked folder inside the model folder that points out of it.
  write_text(d + "/model.safetensors.index.json", R"({"weight_map": {"model.norm.weight": "up/outside.safetensors"}})");
  e = error_of([&] { CausalLM::load(d); });
  EXPECT_HAS(e, "outside the model folder");
}

TEST(HostileModels, ShardsInsideTheFolderAndHubSnapshotsStillLoad) {
  const Tensor expected = CausalLM::load(fixture("llama")).forward({{1, 2, 3, 4}});
  // A plain shard in the folder, reached through a harmless "./".
  const std::string d = indexed_folder("inside", R"({"model.norm.weight": "./model-00001-of-00001.safetensors"})");
  fs::copy_file(fixture("llama") + "/model.safetensors", d + "/model-00001-of-00001.safetensors");
  EXPECT_EQ(CausalLM::load(d).forward({{1, 2, 3, 4}}).digest(), expected.digest());
  // The Hugging Face hub cache: snapshots/<rev>/<file> -> ../../blobs/<hash>.
  const std::string repo = fresh_dir("hub");
  fs::create_directories(repo + "/blobs");
  fs::create_directories(repo + "/snapshots/abc123");
  fs::copy_file(fixture("llama") + "/model.safetensors", repo + "/blobs/0f1e2d");
  const std::string snap = repo + "/snapshots/abc123";
  fs::copy_file(fixture("llama") + "/config.json", snap + "/config.json");
  fs::create_symlink("../../blobs/0f1e2d", snap + "/model-00001-of-00001.safetensors");
  write_text(snap + "/model.safetensors.index.json",
             R"({"weight_map": {"model.norm.weight": "model-00001-of-00001.safetensors"}})");
  EXPECT_EQ(CausalLM::load(snap).forward({{1, 2, 3, 4}}).digest(), expected.digest());
}

// The llama fixture with one element of one tensor replaced by `value`, written to a new folder.
std::string folder_with_value(const std::string& tag, const std::string& tensor, float value) {
  const std::string d = fresh_dir(tag);
  fs::copy_file(fixture("llama") + "/config.json", d + "/config.json");
  const SafetensorsFile f = SafetensorsFile::open(fixture("llama") + "/model.safetensors");
  std::map<std::string, Tensor> tensors;
  for (const auto& name : f.names()) tensors[name] = f.get(name);
  std::vector<float> v = tensors[tensor].to_vector<float>();
  v[7] = value;
  tensors[tensor] = Tensor::from_vector(v, tensors[tensor].shape());
  save_safetensors(d + "/model.safetensors", tensors);
  return d;
}

TEST(HostileModels, NonFiniteWeightsAreRefusedAtLoadNamingTheTensor) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::string name = "model.layers.1.mlp.down_proj.weight";
  std::string e = error_of([&] { CausalLM::load(folder_with_value("nan", name, std::nanf(""))); });
  EXPECT_HAS(e, "tensor '" + name + "' holds NaN at element 7");
  e = error_of([&] { CausalLM::load(folder_with_value("inf", "model.norm.weight", inf)); });
  EXPECT_HAS(e, "tensor 'model.norm.weight' holds +inf");
  e = error_of([&] { CausalLM::load(folder_with_value("ninf", "model.embed_tokens.weight", -inf)); });
  EXPECT_HAS(e, "tensor 'model.embed_tokens.weight' holds -inf");
  // The trainer's loader of a Hugging Face folder refuses them too.
  e = error_of([&] { lm::Transformer::from_hf_dir(folder_with_value("nan_lm", name, std::nanf(""))); });
  EXPECT_HAS(e, "tensor '" + name + "' holds NaN");
  // And so do the Mamba weights (from_tensors, no folder).
  const SafetensorsFile m = SafetensorsFile::open(fixture("mamba2") + "/model.safetensors");
  std::map<std::string, Tensor> t;
  for (const auto& n : m.names()) t[n] = m.get(n);
  std::vector<float> a = t["backbone.layers.0.mixer.A_log"].to_vector<float>();
  a[0] = inf;
  t["backbone.layers.0.mixer.A_log"] = Tensor::from_vector(a, t["backbone.layers.0.mixer.A_log"].shape());
  e = error_of([&] { CausalLM::from_tensors(load_config(fixture("mamba2") + "/config.json"), t); });
  EXPECT_HAS(e, "tensor 'backbone.layers.0.mixer.A_log' holds +inf");
}

TEST(HostileModels, GenerationLengthThatOverflowsIsRefusedWithTheRightNumbers) {
  const CausalLM model = CausalLM::load(fixture("llama"));
  GenerateOptions o;
  o.max_new_tokens = std::numeric_limits<int64_t>::max();
  const std::string e = error_of([&] { generate(model, {1, 2}, o); });
  EXPECT_HAS(e, "max_new_tokens (9223372036854775807) exceeds max_position_embeddings 128");
  EXPECT_EQ(e.find("-9223372036854775"), std::string::npos) << e;
  const std::string c = error_of([&] { model.new_cache(1, std::numeric_limits<int64_t>::min() + 1); });
  EXPECT_HAS(c, "new_cache: capacity -9223372036854775807 must lie in [1, 128]");
}

// The fixture's config.json with fields replaced.
std::string config_with(const std::string& model, const nlohmann::json& changes) {
  nlohmann::json j = nlohmann::json::parse(read_file_text(fixture(model) + "/config.json"));
  for (auto it = changes.begin(); it != changes.end(); ++it) {
    if (it.value().is_null()) {
      j.erase(it.key());
    } else {
      j[it.key()] = it.value();
    }
  }
  return j.dump();
}

std::string config_error(const std::string& model, const nlohmann::json& changes) {
  return error_of([&] { parse_config(config_with(model, changes), "config.json"); });
}

TEST(HostileConfig, SizesAboveTheLimitsAreRefusedBeforeAllocation) {
  EXPECT_HAS(config_error("llama", {{"max_position_embeddings", 10000000}}),
             "field 'max_position_embeddings' = 10000000 exceeds the limit of 1048576");
  EXPECT_HAS(config_error("llama", {{"max_position_embeddings", 1000000000}}), "exceeds the limit of 1048576");
  // Within the position limit, but the rotary tables would be 2^28 elements.
  EXPECT_HAS(config_error("llama", {{"max_position_embeddings", 1048576}, {"head_dim", 256}}),
             "rotary table elements exceeds the limit of 134217728");
  EXPECT_HAS(config_error("llama", {{"vocab_size", int64_t{1} << 40}}), "field 'vocab_size'");
  EXPECT_HAS(config_error("llama", {{"hidden_size", int64_t{1} << 21}}), "field 'hidden_size'");
  EXPECT_HAS(config_error("llama", {{"num_hidden_layers", 100000}}), "field 'num_hidden_layers'");
  EXPECT_HAS(config_error("llama", {{"num_attention_heads", int64_t{1} << 17}}), "field 'num_attention_heads'");
  EXPECT_HAS(config_error("llama", {{"head_dim", int64_t{1} << 40}}), "field 'head_dim'");
  EXPECT_HAS(config_error("llama", {{"intermediate_size", int64_t{1} << 23}}), "field 'intermediate_size'");
  EXPECT_HAS(config_error("gpt2", {{"n_positions", 10000000}}), "field 'n_positions'");
  EXPECT_HAS(config_error("gpt2", {{"n_inner", int64_t{1} << 23}}), "field 'n_inner'");
  EXPECT_HAS(config_error("mamba", {{"state_size", int64_t{1} << 17}}), "field 'state_size'");
  EXPECT_HAS(config_error("mamba", {{"conv_kernel", 100000}}), "field 'conv_kernel'");
  EXPECT_HAS(config_error("mamba", {{"expand", 1e300}}), "exceeds the inner-width limit");
  EXPECT_HAS(config_error("mamba", {{"time_step_rank", int64_t{1} << 40}}), "field 'time_step_rank'");
  EXPECT_HAS(config_error("mamba2", {{"n_groups", int64_t{1} << 40}}), "field 'n_groups'");
  // The limits leave the fixtures alone.
  for (const char* m : {"llama", "gpt2", "mamba", "mamba2", "gemma", "qwen2", "phi3", "mistral"})
    EXPECT_EQ(config_error(m, nlohmann::json::object()), "(no error)") << m;
}

TEST(HostileConfig, Mamba2HugeHeadDimIsRefusedWithoutOverflow) {
  // 8 * 2305843009213693968 overflows int64 (undefined behaviour before the limit was checked).
  const std::string e = config_error("mamba2", {{"head_dim", 2305843009213693968LL}});
  EXPECT_HAS(e, "field 'head_dim' = 2305843009213693968 exceeds the limit of 65536");
  EXPECT_HAS(config_error("mamba2", {{"num_heads", 2305843009213693968LL}}), "field 'num_heads'");
}

}  // namespace
}  // namespace bl::models
