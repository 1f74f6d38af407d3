// checks_llm.cpp: transformer language-model inference (llm.forward).
//
// Two tiny decoder models with Philox weights, no files needed: one GPT-2 shaped (learned
// positions, LayerNorm, fused qkv with biases, GELU tanh MLP, tied head) and one Llama shaped
// (RoPE, RMSNorm, grouped-query attention 4/2, sliding window, SwiGLU, untied head). Each runs a
// prefill of a token sequence and then KV-cache decode steps; the prefill logits and every decode
// step's logits are hashed. Everything goes through bitlearn::models on the context's device.
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

ModelConfig gpt2_config(int64_t vocab) {
  ModelConfig c;
  c.model_type = "gpt2";
  c.vocab_size = vocab, c.hidden_size = 64, c.num_layers = 2, c.num_heads = 4, c.num_kv_heads = 4;
  c.head_dim = 16, c.intermediate_size = 256, c.max_positions = 64;
  c.norm = models::NormKind::layer_norm, c.norm_eps = 1e-5f;
  c.activation = models::Activation::gelu_tanh, c.gated_mlp = false, c.learned_positions = true;
  c.rope = false, c.qkv_bias = true, c.output_bias = true, c.fused_qkv = true, c.tie_word_embeddings = true;
  return c;
}

ModelConfig llama_config(int64_t vocab) {
  ModelConfig c;
  c.model_type = "llama";
  c.vocab_size = vocab, c.hidden_size = 64, c.num_layers = 2, c.num_heads = 4, c.num_kv_heads = 2;
  c.head_dim = 16, c.intermediate_size = 160, c.max_positions = 64;
  c.norm = models::NormKind::rms_norm, c.norm_eps = 1e-5f, c.activation = models::Activation::silu;
  c.gated_mlp = true, c.rope = true, c.rope_theta = 10000.0f, c.sliding_window = 9;
  return c;
}

std::map<std::string, Tensor> gpt2_weights(CheckContext& ctx, const ModelConfig& c, uint64_t stream) {
  std::map<std::string, Tensor> t;
  const int64_t C = c.hidden_size, I = c.intermediate_size;
  add_normal_weight(ctx, t, stream, "wte.weight", {c.vocab_size, C}, 0.3f);
  add_normal_weight(ctx, t, stream, "wpe.weight", {c.max_positions, C}, 0.1f);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string b = "h." + std::to_string(l) + ".";
    add_uniform_weight(ctx, t, stream, b + "ln_1.weight", {C}, 0.8f, 1.2f);
    add_normal_weight(ctx, t, stream, b + "ln_1.bias", {C}, 0.05f);
    add_normal_weight(ctx, t, stream, b + "attn.c_attn.weight", {C, 3 * C}, 0.15f);
    add_normal_weight(ctx, t, stream, b + "attn.c_attn.bias", {3 * C}, 0.05f);
    add_normal_weight(ctx, t, stream, b + "attn.c_proj.weight", {C, C}, 0.1f);
    add_normal_weight(ctx, t, stream, b + "attn.c_proj.bias", {C}, 0.05f);
    add_uniform_weight(ctx, t, stream, b + "ln_2.weight", {C}, 0.8f, 1.2f);
    add_normal_weight(ctx, t, stream, b + "ln_2.bias", {C}, 0.05f);
    add_normal_weight(ctx, t, stream, b + "mlp.c_fc.weight", {C, I}, 0.12f);
    add_normal_weight(ctx, t, stream, b + "mlp.c_fc.bias", {I}, 0.05f);
    add_normal_weight(ctx, t, stream, b + "mlp.c_proj.weight", {I, C}, 0.06f);
    add_normal_weight(ctx, t, stream, b + "mlp.c_proj.bias", {C}, 0.05f);
  }
  add_uniform_weight(ctx, t, stream, "ln_f.weight", {C}, 0.8f, 1.2f);
  add_normal_weight(ctx, t, stream, "ln_f.bias", {C}, 0.05f);
  return t;
}

std::map<std::string, Tensor> llama_weights(CheckContext& ctx, const ModelConfig& c, uint64_t stream) {
  std::map<std::string, Tensor> t;
  const int64_t C = c.hidden_size, I = c.intermediate_size, D = c.head_dim;
  add_normal_weight(ctx, t, stream, "model.embed_tokens.weight", {c.vocab_size, C}, 0.3f);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string b = "model.layers." + std::to_string(l) + ".";
    add_uniform_weight(ctx, t, stream, b + "input_layernorm.weight", {C}, 0.8f, 1.2f);
    add_normal_weight(ctx, t, stream, b + "self_attn.q_proj.weight", {c.num_heads * D, C}, 0.15f);
    add_normal_weight(ctx, t, stream, b + "self_attn.k_proj.weight", {c.num_kv_heads * D, C}, 0.15f);
    add_normal_weight(ctx, t, stream, b + "self_attn.v_proj.weight", {c.num_kv_heads * D, C}, 0.15f);
    add_normal_weight(ctx, t, stream, b + "self_attn.o_proj.weight", {C, c.num_heads * D}, 0.1f);
    add_uniform_weight(ctx, t, stream, b + "post_attention_layernorm.weight", {C}, 0.8f, 1.2f);
    add_normal_weight(ctx, t, stream, b + "mlp.gate_proj.weight", {I, C}, 0.12f);
    add_normal_weight(ctx, t, stream, b + "mlp.up_proj.weight", {I, C}, 0.12f);
    add_normal_weight(ctx, t, stream, b + "mlp.down_proj.weight", {C, I}, 0.08f);
  }
  add_uniform_weight(ctx, t, stream, "model.norm.weight", {C}, 0.8f, 1.2f);
  add_normal_weight(ctx, t, stream, "lm_head.weight", {c.vocab_size, C}, 0.1f);
  return t;
}

// Prefill of the first `prefill` tokens, then one decode step per remaining token.
void run_model(CheckContext& ctx, OutputWriter& out, const std::string& label, const CausalLM& model,
               const std::vector<int64_t>& tokens, int64_t prefill) {
  std::vector<int32_t> ids(tokens.begin(), tokens.end());
  models::KvCache cache = model.new_cache(1, static_cast<int64_t>(ids.size()));
  add_tensor(out, label + ".prefill", model.forward({std::vector<int32_t>(ids.begin(), ids.begin() + prefill)}, &cache));
  for (size_t t = static_cast<size_t>(prefill); t < ids.size(); ++t)
    add_tensor(out, label + ".decode" + std::to_string(t), model.forward({{ids[t]}}, &cache));
  (void)ctx;
}

void check_llm_forward(CheckContext& ctx, OutputWriter& out) {
  select_device(ctx);
  const int64_t vocab = 256, prefill = ctx.size(8, 24), decode = ctx.size(2, 4);
  const std::vector<int64_t> tokens = uniform_indices(8101, prefill + decode, vocab);
  const ModelConfig g = gpt2_config(vocab);
  // The GPT-2 token embedding is the first input generated: it carries the negative control.
  const CausalLM gpt2 = CausalLM::from_tensors(g, gpt2_weights(ctx, g, 8200), core_device(ctx), "verify gpt2");
  run_model(ctx, out, "gpt2", gpt2, tokens, prefill);
  const ModelConfig l = llama_config(vocab);
  const CausalLM llama = CausalLM::from_tensors(l, llama_weights(ctx, l, 8300), core_device(ctx), "verify llama");
  run_model(ctx, out, "llama", llama, tokens, prefill);
}

}  // namespace

void add_llm_checks(std::vector<CheckDef>& checks) {
  checks.push_back({"llm.forward", true, check_llm_forward});
}

}  // namespace bl::verify
