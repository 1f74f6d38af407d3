// bench_llm: prefill and decode throughput (tokens/s) of bitlearn's language-model inference on the
// Hugging Face fixture models (tests/data/hf, transformers and Mamba) and on a random model shaped like GPT-2 124M.
// bench/llm_vs_torch.py runs this program and PyTorch side by side and prints the ratios.
//
//   bench_llm [--benchmark_format=json] [google benchmark flags]
//   env BL_LLM_DEVICE=cpu|cuda (default cpu), BL_LLM_ONLY=<model name> (one model only),
//       BL_LLM_PROMPT=<prefill tokens for gpt2-124m, default 128>, BL_LLM_DECODE=<decode steps, 32>,
//       BL_LLM_DIR=<a model folder> (that model only, named by the folder, BL_LLM_PROMPT tokens)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bitlearn/models.h"
#include "contract/rng.h"

namespace {

using bl::Tensor;
using bl::models::CausalLM;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

// Uniform weights in [-a, a) from Philox (seed, stream), so the model is the same everywhere.
Tensor random_weight(const bl::Shape& shape, uint64_t stream, float a) {
  const int64_t n = bl::shape_numel(shape);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = bl::uniform_ab(bl::random_u32_element(1234, stream, static_cast<uint64_t>(i)), -a, a);
  return Tensor::from_vector(v, shape);
}

CausalLM gpt2_124m(bl::Device device) {
  bl::models::ModelConfig c;
  c.model_type = "gpt2";
  c.vocab_size = 50257, c.hidden_size = 768, c.num_layers = 12, c.num_heads = 12, c.num_kv_heads = 12;
  c.head_dim = 64, c.intermediate_size = 3072, c.max_positions = 1024;
  c.norm = bl::models::NormKind::layer_norm, c.activation = bl::models::Activation::gelu_tanh;
  c.gated_mlp = false, c.learned_positions = true, c.rope = false, c.qkv_bias = true, c.output_bias = true;
  c.fused_qkv = true, c.tie_word_embeddings = true;
  std::map<std::string, Tensor> t;
  uint64_t s = 0;
  const int64_t C = 768, I = 3072;
  t["wte.weight"] = random_weight({c.vocab_size, C}, s++, 0.05f);
  t["wpe.weight"] = random_weight({c.max_positions, C}, s++, 0.02f);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string b = "h." + std::to_string(l) + ".";
    t[b + "ln_1.weight"] = Tensor::full({C}, 1.0);
    t[b + "ln_1.bias"] = Tensor::zeros({C});
    t[b + "attn.c_attn.weight"] = random_weight({C, 3 * C}, s++, 0.04f);
    t[b + "attn.c_attn.bias"] = random_weight({3 * C}, s++, 0.01f);
    t[b + "attn.c_proj.weight"] = random_weight({C, C}, s++, 0.02f);
    t[b + "attn.c_proj.bias"] = random_weight({C}, s++, 0.01f);
    t[b + "ln_2.weight"] = Tensor::full({C}, 1.0);
    t[b + "ln_2.bias"] = Tensor::zeros({C});
    t[b + "mlp.c_fc.weight"] = random_weight({C, I}, s++, 0.04f);
    t[b + "mlp.c_fc.bias"] = random_weight({I}, s++, 0.01f);
    t[b + "mlp.c_proj.weight"] = random_weight({I, C}, s++, 0.02f);
    t[b + "mlp.c_proj.bias"] = random_weight({C}, s++, 0.01f);
  }
  t["ln_f.weight"] = Tensor::full({C}, 1.0);
  t["ln_f.bias"] = Tensor::zeros({C});
  return CausalLM::from_tensors(c, t, device, "gpt2-124m-random");
}

std::vector<int32_t> prompt_ids(int64_t n, int64_t vocab) {
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>((i * 7919 + 13) % vocab));
  return ids;
}

void sync(const CausalLM& m, const Tensor& t) {
  // One element back to the host: the wait, without timing a copy of every logit (PyTorch's side
  // only synchronizes).
  if (m.device().is_cuda()) (void)t.reshape({-1}).slice(0, 0, 1).to(bl::Device::cpu());
}

void register_model(const std::string& name, std::shared_ptr<CausalLM> model, int64_t prompt, int64_t decode) {
  const std::string dev = model->device().is_cuda() ? "cuda" : "cpu";
  benchmark::RegisterBenchmark(("prefill/" + name + "/" + dev).c_str(), [model, prompt](benchmark::State& st) {
    const auto ids = prompt_ids(prompt, model->config().vocab_size);
    for (auto _ : st) {
      Tensor logits = model->forward({ids});
      sync(*model, logits);
    }
    st.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(prompt), benchmark::Counter::kIsIterationInvariantRate);
  })->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark(("decode/" + name + "/" + dev).c_str(), [model, prompt, decode](benchmark::State& st) {
    const auto ids = prompt_ids(prompt + decode, model->config().vocab_size);
    for (auto _ : st) {
      st.PauseTiming();
      bl::models::KvCache cache = model->new_cache(1, prompt + decode);
      Tensor logits = model->forward({std::vector<int32_t>(ids.begin(), ids.begin() + prompt)}, &cache);
      sync(*model, logits);
      st.ResumeTiming();
      for (int64_t t = 0; t < decode; ++t) logits = model->forward({{ids[prompt + t]}}, &cache);
      sync(*model, logits);
    }
    st.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(decode), benchmark::Counter::kIsIterationInvariantRate);
  })->Unit(benchmark::kMillisecond)->UseRealTime();
  // Batched decode: 8 sequences (prompts of different lengths) stepped together, one token each per
  // step; tokens/s counts all 8 (each sequence has the bits it has alone: models::generate_batch).
  benchmark::RegisterBenchmark(("decode_batch8/" + name + "/" + dev).c_str(), [model, prompt, decode](benchmark::State& st) {
    constexpr int64_t kSeqs = 8;
    const auto ids = prompt_ids(prompt + decode, model->config().vocab_size);
    for (auto _ : st) {
      st.PauseTiming();
      bl::models::KvCache cache = model->new_cache(kSeqs, prompt + decode);
      std::vector<std::vector<int32_t>> prompts;
      for (int64_t b = 0; b < kSeqs; ++b)
        prompts.emplace_back(ids.begin(), ids.begin() + std::max<int64_t>(1, prompt - b));
      Tensor logits = model->forward(prompts, &cache);
      sync(*model, logits);
      st.ResumeTiming();
      for (int64_t t = 0; t < decode; ++t) {
        std::vector<std::vector<int32_t>> step(kSeqs, std::vector<int32_t>{ids[prompt + t]});
        logits = model->forward(step, &cache);
      }
      sync(*model, logits);
    }
    st.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(kSeqs * decode), benchmark::Counter::kIsIterationInvariantRate);
  })->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  const bl::Device device = bl::Device::parse(env_or("BL_LLM_DEVICE", "cpu"));
  const std::string only = env_or("BL_LLM_ONLY", "");
  const int64_t decode = std::atoll(env_or("BL_LLM_DECODE", "32").c_str());
  const std::string root = env_or("BL_LLM_FIXTURES", std::string(BITLEARN_BENCH_SOURCE_DIR) + "/tests/data/hf");
  const std::string dir = env_or("BL_LLM_DIR", "");
  if (!dir.empty()) {
    const std::string name = dir.substr(dir.find_last_of('/') + 1);
    const int64_t prompt = std::atoll(env_or("BL_LLM_PROMPT", "128").c_str());
    register_model(name, std::make_shared<CausalLM>(CausalLM::load(dir, device)), prompt, decode);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }
  for (const char* name : {"gpt2", "llama", "qwen2", "mistral", "phi3", "gemma", "mamba", "mamba2"}) {
    if (!only.empty() && only != name) continue;
    register_model(name, std::make_shared<CausalLM>(CausalLM::load(root + "/" + name, device)), 48, decode);
  }
  if (only.empty() || only == "gpt2-124m") {
    const int64_t prompt = std::atoll(env_or("BL_LLM_PROMPT", "128").c_str());
    register_model("gpt2-124m", std::make_shared<CausalLM>(gpt2_124m(device)), prompt, decode);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
