// checks_llm_mamba.cpp: state-space language-model inference (llm.mamba).
//
// Two tiny models with Philox weights, no files needed: a Mamba (one channel per head, A per state
// index, x_proj / dt_proj, tied head) and a Mamba-2 (4 heads of 16 channels, 2 groups sharing B and C,
// gated RMSNorm, a time-step limit, untied head). Each runs a prefill of a token sequence and then
// recurrent-state decode steps (conv state + ssm state); the prefill logits and every decode step's
// logits are hashed. Everything goes through bitlearn::models on the context's device.
#include <map>
#include <string>

#include "bitlearn/models.h"
#include "verify/check.h"
#include "verify/inputs.h"
#include "verify/tensor_io.h"

namespace bl::verify {
namespace {

using models::CausalLM;
using models::ModelConfig;

ModelConfig ssm_config(const std::string& type, int64_t vocab) {
  ModelConfig c;
  c.model_type = type;
  c.vocab_size = vocab, c.hidden_size = 32, c.num_layers = 2, c.intermediate_size = 64;
  c.max_positions = 1 << 30, c.norm = models::NormKind::rms_norm, c.norm_eps = 1e-5f;
  c.rope = false, c.gated_mlp = false, c.conv_kernel = 4, c.conv_bias = true;
  if (type == "mamba") {
    c.ssm_state_size = 8, c.time_step_rank = 2, c.ssm_heads = 64, c.ssm_head_dim = 1, c.ssm_groups = 1;
    c.tie_word_embeddings = true;
  } else {
    c.ssm_state_size = 8, c.ssm_heads = 4, c.ssm_head_dim = 16, c.ssm_groups = 2;
    c.time_step_min = 0.002f, c.time_step_max = 0.5f;
  }
  return c;
}

std::map<std::string, Tensor> ssm_weights(CheckContext& ctx, const ModelConfig& c, uint64_t stream) {
  std::map<std::string, Tensor> t;
  const bool v2 = c.model_type == "mamba2";
  const int64_t C = c.hidden_size, I = c.intermediate_size, N = c.ssm_state_size, H = c.ssm_heads;
  const int64_t Cc = v2 ? I + 2 * c.ssm_groups * N : I, K = c.conv_kernel;
  // The token embedding is the first input generated: it carries the negative control.
  add_normal_weight(ctx, t, stream, "backbone.embeddings.weight", {c.vocab_size, C}, 0.5f);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string b = "backbone.layers." + std::to_string(l) + ".", m = b + "mixer.";
    add_uniform_weight(ctx, t, stream, b + "norm.weight", {C}, 0.8f, 1.2f);
    add_normal_weight(ctx, t, stream, m + "in_proj.weight", {v2 ? I + Cc + H : 2 * I, C}, 0.2f);
    add_normal_weight(ctx, t, stream, m + "conv1d.weight", {Cc, 1, K}, 0.4f);
    add_normal_weight(ctx, t, stream, m + "conv1d.bias", {Cc}, 0.1f);
    if (v2) {
      add_uniform_weight(ctx, t, stream, m + "A_log", {H}, 0.0f, 2.5f);
      add_uniform_weight(ctx, t, stream, m + "D", {H}, 0.5f, 1.5f);
      add_uniform_weight(ctx, t, stream, m + "dt_bias", {H}, -4.0f, -1.0f);
      add_uniform_weight(ctx, t, stream, m + "norm.weight", {I}, 0.8f, 1.2f);
    } else {
      add_normal_weight(ctx, t, stream, m + "x_proj.weight", {c.time_step_rank + 2 * N, I}, 0.15f);
      add_normal_weight(ctx, t, stream, m + "dt_proj.weight", {I, c.time_step_rank}, 0.3f);
      add_uniform_weight(ctx, t, stream, m + "dt_proj.bias", {I}, -4.0f, -1.0f);
      add_uniform_weight(ctx, t, stream, m + "A_log", {I, N}, 0.0f, 2.5f);
      add_uniform_weight(ctx, t, stream, m + "D", {I}, 0.5f, 1.5f);
    }
    add_normal_weight(ctx, t, stream, m + "out_proj.weight", {C, I}, 0.1f);
  }
  add_uniform_weight(ctx, t, stream, "backbone.norm_f.weight", {C}, 0.8f, 1.2f);
  if (!c.tie_word_embeddings) add_normal_weight(ctx, t, stream, "lm_head.weight", {c.vocab_size, C}, 0.1f);
  return t;
}

// Prefill of the first `prefill` tokens, then one decode step per remaining token.
void run_model(OutputWriter& out, const std::string& label, const CausalLM& model, const std::vector<int64_t>& tokens,
               int64_t prefill) {
  std::vector<int32_t> ids(tokens.begin(), tokens.end());
  models::KvCache cache = model.new_cache(1, static_cast<int64_t>(ids.size()));
  add_tensor(out, label + ".prefill", model.forward({std::vector<int32_t>(ids.begin(), ids.begin() + prefill)}, &cache));
  for (size_t t = static_cast<size_t>(prefill); t < ids.size(); ++t)
    add_tensor(out, label + ".decode" + std::to_string(t), model.forward({{ids[t]}}, &cache));
}

void check_llm_mamba(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  const int64_t vocab = 256, prefill = ctx.size(8, 32), decode = ctx.size(2, 4);
  const std::vector<int64_t> tokens = uniform_indices(8401, prefill + decode, vocab);
  const ModelConfig m1 = ssm_config("mamba", vocab);
  const CausalLM mamba = CausalLM::from_tensors(m1, ssm_weights(ctx, m1, 8500), core_device(ctx), "verify mamba");
  run_model(out, "mamba", mamba, tokens, prefill);
  const ModelConfig m2 = ssm_config("mamba2", vocab);
  const CausalLM mamba2 = CausalLM::from_tensors(m2, ssm_weights(ctx, m2, 8600), core_device(ctx), "verify mamba2");
  run_model(out, "mamba2", mamba2, tokens, prefill);
}

}  // namespace

void add_llm_mamba_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"llm.mamba", true, check_llm_mamba});
}

}  // namespace bl::verify
