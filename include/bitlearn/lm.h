// lm.h: training and fine-tuning of decoder-only language models (GPT-2 and Llama-family), with
// the same bits on every device and thread count.
//
// The gradient of a step is defined as the ordered fold of the gradients of fixed logical shards:
// the step's batch of `batch` sequences is split into `shards` shards of batch / shards
// consecutive sequences; every parameter gradient is g_0, then + g_1, ... in shard order. How the
// shards are grouped into micro-batches (--accumulate), threads or (later) processes and GPUs does
// not change a bit of it. Activation recomputation does not either. See docs/lm-training.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/models.h"
#include "bitlearn/nn/module.h"
#include "bitlearn/tensor.h"

namespace bl::text {
class Tokenizer;
}

namespace bl::lm {

using models::ModelConfig;

// ---- models ----

// Built-in shapes: "llama-tiny" (4 layers, width 256, 8 heads / 4 key-value heads, SwiGLU 688,
// context 128), "llama-162m" (12 x 768, 12 heads, SwiGLU 2048, context 2048, untied), "gpt2-tiny"
// (4 x 256, 8 heads, context 128, tied) and "gpt2-124m" (12 x 768, 12 heads, context 1024, tied).
// vocab_size 0 keeps the preset's own (50257 for the large shapes, 4096 for the tiny ones).
ModelConfig preset(const std::string& name, int64_t vocab_size = 0);
std::vector<std::string> preset_names();
// Throws bl::Error unless config describes a model the trainer supports (gpt2, llama, mistral,
// qwen2 as parse_config reads them), naming the field.
void check_trainable(const ModelConfig& config);

// A trainable decoder. Parameters are named as in Hugging Face checkpoints
// ("model.layers.0.self_attn.q_proj.weight", "transformer.h.0.attn.c_attn.weight", ...) and kept
// in their layout, so a Hugging Face folder loads into it and exports from it without renaming.
class Transformer : public nn::Module {
 public:
  // Fresh weights on the CPU: every matrix and embedding normal(0, 0.02), the residual
  // projections (attention output, MLP down) normal(0, 0.02 / sqrt(2 layers)), biases 0, norms 1;
  // each tensor takes the next Philox stream under seed.
  Transformer(const ModelConfig& config, uint64_t seed);
  // The weights of a Hugging Face folder (config.json + model.safetensors), on the CPU.
  static std::unique_ptr<Transformer> from_hf_dir(const std::string& dir);

  const ModelConfig& config() const { return config_; }
  // Not used: the model is driven through loss(); throws bl::Error.
  ag::Var forward(const ag::Var& x) override;

  // The losses of `shards` shards of sequences of T tokens: ids and labels i64 [shards * rows]
  // (rows = sequences per shard * T) on the model's device. root is sum_s loss_s * coef (its
  // backward folds each parameter's shard gradients into .grad in shard order); shard_losses are
  // the shards' mean losses. recompute: activation recomputation per decoder block (same bits).
  struct Losses {
    ag::Var root;
    std::vector<Tensor> shard_losses;
  };
  Losses loss(const Tensor& ids, const Tensor& labels, int64_t shards, int64_t sequences_per_shard,
              int64_t T, float coef, bool recompute = false);
  // The same mean losses without recording a tape (validation).
  std::vector<Tensor> eval_loss(const Tensor& ids, const Tensor& labels, int64_t shards,
                                int64_t sequences_per_shard, int64_t T);
  // After the backward of a step: a tied head's gradient (kept apart while shards run) is added to
  // the embedding's (embedding + head).
  void finish_grads();
  // Every parameter under its Hugging Face name.
  std::map<std::string, Tensor> hf_tensors() const;
  // config.json text of the model (model_type, sizes, eps, rope theta, tie_word_embeddings, ...).
  std::string hf_config_json() const;

 private:
  struct Block;
  ag::Var block_forward(const Block& b, const ag::Var& h, int64_t sequences, int64_t T, int64_t shards,
                        const Tensor& cos_rows, const Tensor& sin_rows) const;
  ag::Var hidden(const Tensor& ids, int64_t shards, int64_t sequences_per_shard, int64_t T, bool recompute);
  const ag::Var& head_weight() const;
  ModelConfig config_;
  std::vector<std::shared_ptr<Block>> blocks_;
  ag::Var wte_, wpe_, final_w_, final_b_, lm_head_;
  ag::Var tied_head_;  // tied models: the head's own handle on the embedding's value
  Tensor rope_cos_, rope_sin_;
};

// Writes a Hugging Face folder: config.json, model.safetensors (and tokenizer.json when
// tokenizer_json is not empty: copied), each atomically. transformers and bitlearn generate load it.
void save_hf(const Transformer& model, const std::string& dir, const std::string& tokenizer_json = "");

// ---- data ----

// A token file: "BLTOKEN1", a JSON header (count, corpus_sha256, tokenizer_sha256, vocab_size,
// width), then the ids as little-endian u16 (vocab <= 65536) or u32; read through mmap.
class TokenFile {
 public:
  static TokenFile open(const std::string& path);
  int64_t size() const { return count_; }
  int64_t at(int64_t i) const;
  const std::string& corpus_sha256() const { return corpus_sha_; }
  const std::string& tokenizer_sha256() const { return tokenizer_sha_; }
  int64_t vocab_size() const { return vocab_; }
  const std::string& path() const { return path_; }

 private:
  std::shared_ptr<void> map_;
  const uint8_t* data_ = nullptr;
  int64_t count_ = 0, vocab_ = 0, width_ = 2;
  std::string corpus_sha_, tokenizer_sha_, path_;
};

// The texts of a UTF-8 file or of every regular file under a folder (sorted by path, hidden
// files skipped). Empty input, a file that is not UTF-8 (naming it and the byte offset): bl::Error.
std::vector<std::pair<std::string, std::string>> read_corpus(const std::string& path);
// Tokenizes the corpus at data_path (documents joined by "<|endoftext|>" when the tokenizer has
// it) into a token file at out_path (atomically), unless out_path already holds the tokens of the
// same corpus and tokenizer. Returns it opened.
TokenFile prepare_tokens(const std::string& data_path, const text::Tokenizer& tokenizer,
                         const std::string& tokenizer_sha256, const std::string& out_path);

enum class Sampler { random, sequential };
// The first token of each of the `batch` windows of T + 1 tokens of step `step` (0-based) in a
// stream of n tokens: random: floor(u * (n - T)) with u from the Philox words of (seed, stream
// step); sequential: consecutive windows of T tokens from the start, wrapping.
std::vector<int64_t> window_starts(int64_t n, int64_t T, int64_t batch, int64_t step, Sampler sampler,
                                   uint64_t seed);

// ---- training ----

struct TrainOptions {
  // model: a preset name or "gpt2" / "llama" (their tiny presets); config_path: a config.json
  // whose shape replaces the preset's; init_from: a Hugging Face folder to fine-tune.
  std::string model = "llama";
  std::string config_path, init_from;
  std::string data, tokenizer, tokens;  // corpus, tokenizer.json, token file (made when missing)
  int64_t steps = 200, batch = 8, seq_len = 0;  // seq_len 0: the model's context
  int64_t shards = 0;       // logical shards per step (0: one per sequence)
  int64_t accumulate = 1;   // micro-batches per step (each runs shards / accumulate shards)
  float lr = 3e-4f, min_lr = 0.0f, weight_decay = 0.1f, clip = 1.0f;
  float beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f;
  int64_t warmup = 0;
  Sampler sampler = Sampler::random;
  uint64_t seed = 1;
  std::string device = "cpu";
  int threads = 0;
  bool recompute = false;
  std::string checkpoint;
  int64_t checkpoint_every = 0;
  bool resume = false;
  int64_t stop_at = 0;          // > 0: stop after this step, leaving a checkpoint
  std::string save_hf;          // export folder at the end
  std::string report;           // JSON report (+ a loss curve .svg beside it)
  float val_fraction = 0.05f;   // tail of the token stream held out
  int64_t eval_every = 0, eval_batches = 4;
  int64_t hash_every = 1;       // params_sha256 every N steps (0: never)
  bool progress = true;         // progress line on stderr
  // Evidence and peer comparisons: the initial weights as a Hugging Face folder (before step 1),
  // the gradients of the first step run here (after the shard fold, before clipping; safetensors,
  // Hugging Face names), and every step's windows (i64 [steps, batch, T + 1]; safetensors).
  std::string save_hf_init, dump_grads, dump_batches;
  // Called after each step (may throw to stop).
  std::function<void(const struct StepRecord&)> on_step;
};

struct StepRecord {
  int64_t step = 0;            // 1-based
  float loss = 0, grad_norm = 0, lr = 0;
  float val_loss = -1;         // < 0: not evaluated at this step
  std::string params_sha256;   // empty when not hashed
  double seconds = 0;
  int64_t tokens = 0;
};

struct TrainResult {
  int64_t first_step = 0;      // steps already done when this run started (resume)
  int64_t last_step = 0;
  std::vector<StepRecord> steps;
  std::string checkpoint_sha256;  // of the checkpoint file written last (empty if none)
  std::string final_params_sha256;
  int64_t parameters = 0;
};

// Trains as the options say; throws bl::Error on bad input (corpus too short, tokenizer and model
// disagreeing, checkpoint of another shape or optimizer or hyperparameters, a NaN loss naming the
// step: the last checkpoint stays intact).
TrainResult train(const TrainOptions& options);

// SHA-256 over every parameter in order: name, 0x00, the canonical tensor encoding (digest.h).
std::string params_sha256(const nn::Module& model);

// The JSON report of a run (steps with loss and grad_norm bits, lr, params_sha256;
// checkpoint_sha256) and the loss curve as an SVG picture.
std::string report_json(const TrainResult& result, const TrainOptions& options);
std::string loss_curve_svg(const std::vector<StepRecord>& steps);
// The bit pattern of a binary32 as 8 lowercase hex digits (the *_bits fields of reports).
std::string float_bits_hex(float v);

}  // namespace bl::lm
