// models.h: decoder-only language models imported from Hugging Face files (config.json +
// model.safetensors): the transformers GPT-2, Llama, Mistral, Qwen2, Phi-3 and Gemma, and the
// state-space models Mamba and Mamba-2.
//
// The forward pass is built from bitlearn's Tensor ops, its causal_attention op and its selective
// scan, so it runs on the CPU and on CUDA with identical bits, gives the same bits for a sequence
// alone or inside a padded batch, and a decode step with a cache (keys and values, or the
// recurrent conv and ssm states) gives the same bits as the same row of a prefill.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl {
class PackedMatrix;  // kernels/matmul_packed.h: a weight packed once for the CPU GEMM
}

namespace bl::models {

enum class NormKind { layer_norm, rms_norm };
enum class Activation { gelu_tanh, gelu_erf, silu, relu };

// Everything the forward pass needs, read from config.json (one shape for every architecture).
struct ModelConfig {
  std::string model_type;          // "gpt2", "llama", "mistral", "qwen2", "phi3", "gemma", "mamba", "mamba2"
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
  // Mamba and Mamba-2 (model_type "mamba", "mamba2"); intermediate_size is the inner width I,
  // max_positions is unlimited (INT32_MAX) and the attention fields are unused.
  int64_t ssm_state_size = 0;      // state_size (N)
  int64_t conv_kernel = 0;         // width of the causal depthwise conv
  int64_t time_step_rank = 0;      // Mamba: rank of dt_proj
  int64_t ssm_heads = 0;           // Mamba-2 num_heads; Mamba: I (one channel per head)
  int64_t ssm_head_dim = 0;        // Mamba-2 head_dim; Mamba: 1
  int64_t ssm_groups = 1;          // Mamba-2 n_groups (heads sharing B and C)
  bool conv_bias = true;           // use_conv_bias
  bool proj_bias = false;          // use_bias: in_proj and out_proj carry biases
  float time_step_min = 0.0f;      // Mamba-2 time_step_limit: dt is clamped to [min, max]
                                   // (max +inf: no upper limit)
  float time_step_max = std::numeric_limits<float>::infinity();

  bool is_ssm() const { return model_type == "mamba" || model_type == "mamba2"; }
};

// Limits on the sizes read from config.json. A value above its limit is refused (bl::Error naming
// the field, the value and the limit) before anything is allocated; each limit is well above the
// largest published model of the supported architectures, and together they keep every size
// product of the forward pass far from int64 overflow. docs/hostile-input.md lists them.
struct ConfigLimits {
  static constexpr int64_t vocab_size = int64_t{1} << 24;         // 16,777,216 ids
  static constexpr int64_t hidden_size = int64_t{1} << 20;        // 1,048,576
  static constexpr int64_t num_layers = 4096;
  static constexpr int64_t num_heads = int64_t{1} << 16;          // attention, key-value and Mamba-2 heads
  static constexpr int64_t head_dim = int64_t{1} << 16;           // attention and Mamba-2 head_dim
  static constexpr int64_t intermediate_size = int64_t{1} << 22;  // MLP width, Mamba inner width
  static constexpr int64_t max_positions = int64_t{1} << 20;      // max_position_embeddings, n_positions
  // The rotary tables cos and sin [max_positions, head_dim] of f32 take 8 * positions * head_dim
  // bytes; their element count is capped at 2^27 (1 GiB for the two).
  static constexpr int64_t rope_table_elements = int64_t{1} << 27;
  static constexpr int64_t state_size = int64_t{1} << 16;         // Mamba state_size
  static constexpr int64_t conv_kernel = 1024;                    // Mamba conv_kernel
};

// Parses a Hugging Face config.json text. An unsupported architecture or setting (rope_scaling
// variants, unknown hidden_act, ...) or a size above ConfigLimits throws bl::Error naming the field
// and its value.
ModelConfig parse_config(const std::string& json_text, const std::string& source = "config.json");
// Reads and parses a config.json file.
ModelConfig load_config(const std::string& path);

// What a model keeps of earlier tokens, for a batch of sequences, on the model's device: keys and
// values of every layer (transformers), or the conv and ssm states of every layer (Mamba, whose
// size does not grow with the tokens). Sequence b holds lengths()[b] tokens; each forward call with
// the cache appends its tokens after them.
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
  std::vector<Tensor> conv_states;  // per layer [batch, conv_kernel - 1, conv channels]: the last inputs
  std::vector<Tensor> ssm_states;   // per layer [batch, heads, head_dim, state_size]
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
  // An empty cache for batch sequences of up to capacity tokens (capacity <= max_positions; a
  // Mamba cache holds fixed-size states, so capacity only bounds the token count).
  KvCache new_cache(int64_t batch, int64_t capacity) const;

  struct Linear {
    Tensor weight;            // [in, out] when transposed (how every weight is kept after loading), else [out, in]
    Tensor bias;              // undefined when absent
    bool transposed = false;
    // CPU models: the weight packed once at load for products of many rows (prefill); their bits
    // are those of the plain product.
    std::shared_ptr<const PackedMatrix> packed;
  };
  struct Layer {
    Tensor attn_norm_weight, attn_norm_bias, mlp_norm_weight, mlp_norm_bias;
    Linear q, k, v, qkv, o;
    Linear gate, up, gate_up, down;  // gated MLP (gate/up or fused gate_up), down; GPT-2: up = c_fc
  };
  // One Mamba or Mamba-2 block: norm, in_proj, causal depthwise conv, selective scan, out_proj.
  struct MambaLayer {
    Tensor norm_weight;
    Linear in_proj, x_proj, dt_proj, out_proj;  // x_proj, dt_proj: Mamba only
    std::vector<Tensor> conv_taps;  // conv_kernel tensors [conv channels]: tap k multiplies input t - K + 1 + k
    Tensor conv_bias;               // [conv channels], undefined without use_conv_bias
    Tensor A;                       // [heads, state] = -exp(A_log) (Mamba-2: the head's scalar repeated)
    Tensor D;                       // [heads] skip
    Tensor dt_bias;                 // Mamba-2 [heads]
    Tensor gated_norm_weight;       // Mamba-2 [I]: RMSNorm of y * silu(z) before out_proj
  };

 private:
  Tensor run(const std::vector<std::vector<int32_t>>& sequences, KvCache* cache) const;
  // Mamba / Mamba-2 halves (mamba.cpp).
  void load_ssm(const std::map<std::string, Tensor>& tensors, const std::string& source);
  KvCache new_ssm_cache(int64_t batch, int64_t capacity) const;
  Tensor run_ssm(const std::vector<std::vector<int32_t>>& sequences, KvCache* cache) const;
  Tensor mamba_mixer(const MambaLayer& L, const Tensor& x, int64_t batch, int64_t steps,
                     const std::vector<int64_t>& lengths, Tensor* conv_state, Tensor* ssm_state) const;

  ModelConfig config_;
  Device device_ = Device::cpu();
  Tensor embed_tokens, embed_positions, final_norm_weight, final_norm_bias;
  Tensor lm_head;             // [hidden, vocab] (a transposed copy, also when tied)
  Tensor lm_head_rows;        // CUDA, tied: the embedding [vocab, hidden], read as transposed B by prefill
  std::shared_ptr<const PackedMatrix> lm_head_packed;  // CPU: lm_head packed for prefill products
  Tensor rope_cos, rope_sin;  // [max_positions, head_dim]
  std::vector<Layer> layers_;
  std::vector<MambaLayer> mamba_layers_;
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
  float min_p = 0.0f;    // > 0: keep tokens whose probability is at least min_p times the largest
  // > 1 penalizes tokens already in the sequence (prompt included), as Hugging Face's
  // repetition_penalty: a positive logit is divided by it, a negative one multiplied. 1 = off.
  float repetition_penalty = 1.0f;
  uint64_t seed = 0;
  bool stop_at_eos = true;      // stop after an end-of-sequence token
  std::vector<int32_t> eos_ids; // the end-of-sequence tokens; empty: the config's eos_token_id
  // Called with each generated token as it is picked; returning false ends generation there (the
  // token is kept). Empty: no call.
  std::function<bool(int32_t token)> on_token;
};

// Generation defaults of a Hugging Face model folder: DIR/generation_config.json when present
// (do_sample, temperature, top_k, top_p, min_p, repetition_penalty, max_new_tokens, eos_token_id as
// a number or a list), else the defaults above. A malformed file is a bl::Error naming it.
GenerateOptions generation_config(const std::string& model_dir);

// Prompt followed by the generated tokens: prefill of the prompt, then KV-cache decode steps.
std::vector<int32_t> generate(const CausalLM& model, const std::vector<int32_t>& prompt,
                              const GenerateOptions& options);

// Several prompts generated together: one prefill of all of them (right-padded), then decode steps
// over the sequences still running, each with its own KV-cache rows, positions and stop rule.
// Sequence i is the bits generate(model, prompts[i], options) gives alone (forward's rows do not
// depend on the other sequences; sampling uses sequence positions only). options.on_token is not
// called; on_token(i, token), when set, is called for each token of sequence i as it is picked and
// may end that sequence (the token is kept). State-space models (no per-sequence KV rows) generate
// the prompts one after the other, with the same results.
std::vector<std::vector<int32_t>> generate_batch(const CausalLM& model, const std::vector<std::vector<int32_t>>& prompts,
                                                 const GenerateOptions& options,
                                                 const std::function<bool(size_t sequence, int32_t token)>& on_token = {});

// The token picked from one row of logits (vocab floats on the host) at sequence position
// `position` (greedy: lowest index among the largest).
int32_t pick_token(const std::vector<float>& logits, int64_t position, const GenerateOptions& options);

}  // namespace bl::models
