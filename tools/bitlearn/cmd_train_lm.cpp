// cmd_train_lm.cpp: `bitlearn train --model gpt2|llama|<preset> --data PATH ...`, the
// language-model path of `bitlearn train` (bitlearn/lm.h).
#include "cmd_train_lm.h"

#include <cstdio>
#include <filesystem>

#include "bitlearn/models.h"
#include "bitlearn/tokenizer.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::cli {

namespace {

// The parameter count of a trainable model of config c, as the Transformer registers them; the
// start line is printed before the weights exist.
int64_t count_parameters(const lm::ModelConfig& c) {
  const int64_t C = c.hidden_size, V = c.vocab_size, L = c.num_layers, I = c.intermediate_size;
  const int64_t HD = c.num_heads * c.head_dim, GD = c.num_kv_heads * c.head_dim;
  int64_t n = V * C + (c.tie_word_embeddings ? 0 : V * C);
  if (c.model_type == "gpt2") {
    n += c.max_positions * C + 2 * C;
    n += L * (4 * C + C * 3 * C + 3 * C + C * C + C + C * I + I + I * C + C);
  } else {
    const int64_t bias = c.qkv_bias ? HD + 2 * GD : 0;
    n += C + L * (2 * C + HD * C + 2 * GD * C + bias + C * HD + 3 * I * C);
  }
  return n;
}

// The model configuration the run will train, read without building the model (the same rules
// as lm::train: --init-from, else --config, else the preset at the tokenizer's vocabulary).
lm::ModelConfig planned_config(const lm::TrainOptions& o) {
  if (!o.init_from.empty()) return models::load_config(o.init_from + "/config.json");
  if (!o.config_path.empty()) return models::load_config(o.config_path);
  const text::Tokenizer tok = text::Tokenizer::from_file(o.tokenizer);
  return lm::preset(o.model, tok.vocab_size());
}

std::string or_none(const std::string& s) { return s.empty() ? "none" : s; }

}  // namespace

bool is_lm_model(const std::string& name) {
  if (name == "gpt2" || name == "llama") return true;
  for (const std::string& n : lm::preset_names())
    if (n == name) return true;
  return false;
}

std::vector<CLI::Option*> add_lm_only_options(CLI::App* cmd, LmTrainArgs* a) {
  lm::TrainOptions& o = a->options;
  std::vector<CLI::Option*> out;
  auto add = [&](CLI::Option* opt) { out.push_back(opt); };
  add(cmd->add_option("--config", o.config_path, "LM: config.json whose shape replaces the preset's"));
  add(cmd->add_option("--init-from", o.init_from, "LM: Hugging Face folder to fine-tune (its weights)"));
  add(cmd->add_option("--tokenizer", o.tokenizer, "LM: tokenizer.json (default: the --init-from folder's)"));
  add(cmd->add_option("--tokens", o.tokens, "LM: token file (made from --data when missing or stale)"));
  add(cmd->add_option("--seq-len", o.seq_len, "LM: tokens per sequence (default: the model's context)"));
  add(cmd->add_option("--shards", o.shards, "LM: logical shards per step (default: one per sequence)"));
  add(cmd->add_option("--min-lr", o.min_lr, "LM: learning rate at the end of the cosine schedule"));
  add(cmd->add_option("--warmup", o.warmup, "LM: linear warmup steps"));
  add(cmd->add_option("--weight-decay", o.weight_decay, "LM: AdamW decoupled weight decay (default 0.1)"));
  add(cmd->add_option("--clip", o.clip, "LM: global gradient-norm clip (0: off; default 1)"));
  add(cmd->add_option("--accumulate", o.accumulate, "LM: micro-batches per step (divides --shards)"));
  add(cmd->add_option("--sampler", a->sampler, "LM: random (default) or sequential windows")
          ->check(CLI::IsMember({"random", "sequential"})));
  add(cmd->add_flag("--recompute", o.recompute, "LM: activation recomputation (same bits)"));
  add(cmd->add_option("--stop-at", o.stop_at, "LM: end after this step, leaving a checkpoint to --resume"));
  add(cmd->add_option("--save-hf", o.save_hf, "LM: export a Hugging Face folder at the end"));
  add(cmd->add_option("--report", o.report, "LM: JSON report (+ loss curve .svg beside it)"));
  add(cmd->add_option("--val-fraction", o.val_fraction, "LM: tail of the token stream held out (default 0.05)"));
  add(cmd->add_option("--eval-every", o.eval_every, "LM: validation loss every N steps (0: never)"));
  add(cmd->add_option("--eval-batches", o.eval_batches, "LM: validation batches per evaluation (default 4)"));
  add(cmd->add_option("--hash-every", o.hash_every, "LM: params_sha256 every N steps (0: never; default 1)"));
  add(cmd->add_option("--save-hf-init", o.save_hf_init, "LM: export the initial weights as a Hugging Face folder"));
  add(cmd->add_option("--dump-grads", o.dump_grads, "LM: the first step's gradients (safetensors)"));
  add(cmd->add_option("--dump-batches", o.dump_batches, "LM: every step's token windows (safetensors)"));
  add(cmd->add_flag("--quiet", a->quiet, "LM: no progress line"));
  return out;
}

void run_lm_train(LmTrainArgs& a) {
  lm::TrainOptions& o = a.options;
  o.sampler = a.sampler == "sequential" ? lm::Sampler::sequential : lm::Sampler::random;
  o.progress = !a.quiet;
  if (o.tokenizer.empty() && !o.init_from.empty() && std::filesystem::exists(o.init_from + "/tokenizer.json"))
    o.tokenizer = o.init_from + "/tokenizer.json";
  BL_CHECK(!o.data.empty(), "--data PATH is required (a UTF-8 text file or a folder of them)");
  BL_CHECK(!o.tokenizer.empty(), "--tokenizer FILE is required (a tokenizer.json; `bitlearn tokenizer train "
                                 "--corpus FILES --vocab-size N --out FILE` makes one from the corpus)");
  if (o.threads > 0) set_num_threads(o.threads);
  const Device device = Device::parse(o.device);
  const lm::ModelConfig c = planned_config(o);
  const int64_t T = o.seq_len > 0 ? o.seq_len : c.max_positions;
  const int64_t shards = o.shards > 0 ? o.shards : o.batch;
  std::printf("model %s (%s, %lld parameters), device %s, threads %d, steps %lld, batch %lld, seq len %lld, "
              "shards %lld, micro-batches %lld\n",
              o.init_from.empty() ? o.model.c_str() : o.init_from.c_str(), c.model_type.c_str(),
              static_cast<long long>(count_parameters(c)), device.str().c_str(), num_threads(),
              static_cast<long long>(o.steps), static_cast<long long>(o.batch), static_cast<long long>(T),
              static_cast<long long>(shards), static_cast<long long>(o.accumulate));
  std::fflush(stdout);

  const lm::TrainResult r = lm::train(o);
  double seconds = 0;
  int64_t tokens = 0;
  for (const lm::StepRecord& s : r.steps) {
    seconds += s.seconds;
    tokens += s.tokens;
  }
  if (r.steps.empty()) {
    std::printf("no step to run: the checkpoint is at step %lld of %lld\n", static_cast<long long>(r.first_step),
                static_cast<long long>(o.steps));
  } else {
    const lm::StepRecord& last = r.steps.back();
    std::printf("steps %lld..%lld, final loss %.6f%s\n", static_cast<long long>(r.first_step + 1),
                static_cast<long long>(r.last_step), last.loss,
                last.val_loss >= 0 ? (", validation loss " + std::to_string(last.val_loss)).c_str() : "");
  }
  std::printf("final params sha256: %s\n", r.final_params_sha256.c_str());
  std::printf("checkpoint sha256: %s\n", or_none(r.checkpoint_sha256).c_str());
  std::printf("tokens/s: %.0f (%lld tokens in %.3f s)\n", seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0,
              static_cast<long long>(tokens), seconds);
  if (!o.report.empty()) std::printf("report: %s\n", o.report.c_str());
  if (!o.save_hf.empty()) std::printf("Hugging Face folder: %s\n", o.save_hf.c_str());
}

}  // namespace bl::cli
