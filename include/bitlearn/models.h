// models.h: decoder-only transformer language models imported from Hugging Face files
// (config.json + model.safetensors): GPT-2, Llama, Mistral, Qwen2, Phi-3 and Gemma.
//
// The forward pass is built from bitlearn's Tensor ops and its causal_attention op, so it runs on
// the CPU and on CUDA with identical bits, gives the same bits for a sequence alone or inside a
// padded batch, and a KV-cache decode step gives the same bits as the same row of a prefill.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::models {

enum class NormKind { layer_norm, rms_norm };
enum class Activation { gelu_tanh, gelu_erf, silu, relu };

// Everything the forward pass needs, read from config.json (one shape for every architecture).
struct ModelConfig {
  std::string model_type;          // "gpt2", "llama", "mistral", "qwen2", "phi3", "gemma"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;
  int64_t max_positions = 0;       // max_position_embeddings / n_positions
  NormKind norm = NormKind::rms_norm;
  float norm_eps = 1e-5f;
  bool norm_weight_plus_one = false;  // Gemma: the norm multiplies by (1 + weight)
  Activation activation = Activation::silu;
  bool gated_mlp = true;           // SwiGLU-style down(act(gate(x)) * up(x)); false: proj(act(fc(x)))
  bool learned_positions = false;  // GPT-2's position embedding table
  bool rope = true;
  float rope_theta = 10000.0f;
  int64_t sliding_window = 0;      // 0 = full causal attention
  bool qkv_bias = false;           // q/k/v projections carry biases (Qwen2, GPT-2)
  bool output_bias = false;        // attention output and MLP projections carry biases (GPT-2)
  bool fused_qkv = false;          // Phi-3 qkv_proj, GPT-2 c_attn
  bool fused_gate_up = false;      // Phi-3 gate_up_proj
  bool tie_word_embeddings = false;
  bool scale_embeddings = false;   // Gemma: embeddings times sqrt(hidden_size) rounded to f32
  std::optional<int64_t> eos_token_id;
};

// Parses a Hugging Face config.json text. An unsupported architecture or setting (rope_scaling
// variants, unknown hidden_act, ...) throws bl::Error naming the field and its value.
ModelConfig parse_config(const std::string& json_text, const std::string& source = "config.json");
// Reads and parses a config.json file.
ModelConfig load_config(const std::string& path);

// Keys and values of every layer for a batch of sequences, on the model's device. Sequence b holds
// lengths()[b] tokens; each forward call with the cache appends its tokens after them.
class KvCache {
 public:
  int64_t batch() const { return static_cast<int64_t>(lengths_.size()); }
  int64_t capacity() const { return capacity_; }
  const std::vector<int64_t>& lengths() const { return lengths_; }

 private:
  friend class CausalLM;
  int64_t capacity_ = 0;
  std::vector<int64_t> lengths_;
  std::vector<Tensor> keys;    // per layer [batch, capacity, kv_heads, head_dim]
  std::vector<Tensor> values;
};

class CausalLM {
 public:
  // Loads dir/config.json and dir/model.safetensors (or the shards listed in
  // dir/model.safetensors.index.json) onto device. Missing tensors and shapes that disagree with
  // config.json throw bl::Error naming the tensor and the config fields.
  static CausalLM load(const std::string& dir, Device device = Device::cpu());
  // Builds a model from a config and tensors named as in Hugging Face checkpoints.
  static CausalLM from_tensors(const ModelConfig& config, const std::map<std::string, Tensor>& tensors,
                               Device device = Device::cpu(), const std::string& source = "tensors");

  const ModelConfig& config() const { return config_; }
  Device device() const { return device_; }

  // Logits [B, T, vocab] (f32, on the model's device) of B sequences of equal length T (ids i32
  // or i64 [B, T] or [T], any device), without a cache. An id outside [0, vocab) throws naming it.
  Tensor forward(const Tensor& ids) const;
  // Logits [B, Tmax, vocab] of sequences of mixed lengths (right-padded; rows past a sequence's
  // end are +0). With a cache, sequence b's tokens follow the cache's lengths()[b] earlier tokens
  // and are appended to it. Each row's bits do not depend on the other sequences.
  Tensor forward(const std::vector<std::vector<int32_t>>& sequences, KvCache* cache = nullptr) const;
  // An empty cache for batch sequences of up to capacity tokens (capacity <= max_positions).
  KvCache new_cache(int64_t batch, int64_t capacity) const;

  struct Linear {
    Tensor weight;            // [in, out] when transposed (how every weight is kept after loading), else [out, in]
    Tensor bias;              // undefined when absent
    bool transposed = false;
  };
  struct Layer {
    Tensor attn_norm_weight, attn_norm_bias, mlp_norm_weight, mlp_norm_bias;
    Linear q, k, v, qkv, o;
    Linear gate, up, gate_up, down;  // gated MLP (gate/up or fused gate_up), down; GPT-2: up = c_fc
  };

 private:
  Tensor run(const std::vector<std::vector<int32_t>>& sequences, KvCache* cache) const;

  ModelConfig config_;
  Device device_ = Device::cpu();
  Tensor embed_tokens, embed_positions, final_norm_weight, final_norm_bias;
  Tensor lm_head;             // [hidden, vocab] (a transposed copy, also when tied)
  Tensor rope_cos, rope_sin;  // [max_positions, head_dim]
  std::vector<Layer> layers_;
};

// How generate picks tokens: greedy when temperature == 0, else sampling from softmax(logits / T)
// (optionally restricted to the top_k tokens and the smallest set of probability >= top_p), with
// the uniform of position p drawn from Philox (seed, stream p), so a continuation is the same on
// every device.
struct GenerateOptions {
  int64_t max_new_tokens = 16;
  float temperature = 0.0f;
  int64_t top_k = 0;     // 0 = all tokens
  float top_p = 1.0f;    // 1 = no nucleus cut
  uint64_t seed = 0;
  bool stop_at_eos = true;  // stop after the config's eos_token_id
};

// Prompt followed by the generated tokens: prefill of the prompt, then KV-cache decode steps.
std::vector<int32_t> generate(const CausalLM& model, const std::vector<int32_t>& prompt,
                              const GenerateOptions& options);

// The token picked from one row of logits (vocab floats on the host) at sequence position
// `position` (greedy: lowest index among the largest).
int32_t pick_token(const std::vector<float>& logits, int64_t position, const GenerateOptions& options);

}  // namespace bl::models
