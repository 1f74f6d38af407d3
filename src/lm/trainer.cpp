// trainer.cpp: the training loop of bitlearn/lm.h: shards, micro-batches, AdamW, clipping, the
// schedule, validation, checkpoints and resumption.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/lm.h"
#include "bitlearn/nn/checkpoint.h"
#include "bitlearn/nn/optim.h"
#include "bitlearn/nn/schedule.h"
#include "bitlearn/safetensors.h"
#include "bitlearn/tokenizer.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::lm {

namespace {

constexpr const char* kHparamsKey = "lm.hparams";

// The options that decide the bits of a run; a resumed run must agree on every one.
nlohmann::ordered_json bit_options(const TrainOptions& o, const ModelConfig& c, int64_t T, int64_t shards,
                                   const TokenFile& tokens) {
  nlohmann::ordered_json j;
  j["model_type"] = c.model_type;
  j["layers"] = c.num_layers;
  j["hidden_size"] = c.hidden_size;
  j["vocab_size"] = c.vocab_size;
  j["steps"] = o.steps;
  j["batch"] = o.batch;
  j["seq_len"] = T;
  j["shards"] = shards;
  j["lr"] = o.lr;
  j["min_lr"] = o.min_lr;
  j["warmup"] = o.warmup;
  j["weight_decay"] = o.weight_decay;
  j["clip"] = o.clip;
  j["beta1"] = o.beta1;
  j["beta2"] = o.beta2;
  j["eps"] = o.eps;
  j["sampler"] = o.sampler == Sampler::random ? "random" : "sequential";
  j["seed"] = o.seed;
  j["val_fraction"] = o.val_fraction;
  j["corpus_sha256"] = tokens.corpus_sha256();
  j["tokenizer_sha256"] = tokens.tokenizer_sha256();
  return j;
}

bool finite(float v) { return std::isfinite(v); }

// An option's value for messages: binary32 options as the shortest text that reads back (not as
// the double they are stored as).
std::string option_text(const nlohmann::ordered_json& v) {
  if (!v.is_number_float()) return v.dump();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(static_cast<float>(v.get<double>())));
  for (int digits = 1; digits <= 9; ++digits) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, static_cast<double>(static_cast<float>(v.get<double>())));
    if (std::strtof(shorter, nullptr) == static_cast<float>(v.get<double>())) return shorter;
  }
  return buf;
}

std::string fmt_eta(double seconds) {
  char buf[32];
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  return buf;
}

// ids and labels of the windows at starts (T inputs, the next T tokens as labels), as i64 tensors.
void windows(const TokenFile& tf, int64_t offset, const std::vector<int64_t>& starts, int64_t T,
             std::vector<int64_t>* ids, std::vector<int64_t>* labels) {
  ids->resize(starts.size() * static_cast<size_t>(T));
  labels->resize(ids->size());
  for (size_t j = 0; j < starts.size(); ++j)
    for (int64_t t = 0; t < T; ++t) {
      (*ids)[j * T + t] = tf.at(offset + starts[j] + t);
      (*labels)[j * T + t] = tf.at(offset + starts[j] + t + 1);
    }
}

}  // namespace

std::string params_sha256(const nn::Module& model) {
  Sha256 h;
  for (const auto& [name, v] : model.named_parameters()) {
    const Tensor t = v.value().to(Device::cpu()).contiguous();
    h.update(name);
    h.update("\0", 1);
    h.update(kTensorDigestMagic);
    h.update("\0", 1);
    h.update(dtype_name(t.dtype()));
    h.update("\0", 1);
    h.update_i64_le(t.ndim());
    for (int64_t d = 0; d < t.ndim(); ++d) h.update_i64_le(t.dim(d));
    const size_t nbytes = static_cast<size_t>(t.numel()) * t.element_size();
    h.update_i64_le(static_cast<int64_t>(nbytes));
    h.update(t.raw_data(), nbytes);
  }
  return h.finish_hex();
}

TrainResult train(const TrainOptions& o) {
  using clock = std::chrono::steady_clock;
  if (o.threads > 0) set_num_threads(o.threads);
  const Device device = Device::parse(o.device);
  BL_CHECK(o.steps >= 1, "lm train: --steps must be >= 1, got ", o.steps);
  BL_CHECK(o.batch >= 1, "lm train: --batch must be >= 1, got ", o.batch);
  // A step holds `batch` sequences; beyond 2^20 the token buffers alone would not fit in memory.
  BL_CHECK(o.batch <= (int64_t{1} << 20), "lm train: --batch ", o.batch, " is more than 1,048,576 sequences per step");
  BL_CHECK(o.lr > 0 && finite(o.lr), "lm train: --lr must be finite and > 0, got ", o.lr);
  BL_CHECK(o.min_lr >= 0 && finite(o.min_lr), "lm train: --min-lr must be finite and >= 0, got ", o.min_lr);
  BL_CHECK(o.weight_decay >= 0 && finite(o.weight_decay) && o.clip >= 0 && finite(o.clip) && o.warmup >= 0,
           "lm train: --weight-decay, --clip and --warmup must be finite and >= 0");
  BL_CHECK(o.seq_len >= 0, "lm train: --seq-len must be >= 1 (or 0: the model's context), got ", o.seq_len);
  BL_CHECK(o.shards >= 0, "lm train: --shards must be >= 1 (or 0: one per sequence), got ", o.shards);
  BL_CHECK(o.eval_every >= 0, "lm train: --eval-every must be >= 0 (0: never), got ", o.eval_every);
  BL_CHECK(o.eval_batches >= 1, "lm train: --eval-batches must be >= 1, got ", o.eval_batches);
  BL_CHECK(o.hash_every >= 0, "lm train: --hash-every must be >= 0 (0: never), got ", o.hash_every);
  BL_CHECK(o.val_fraction >= 0 && o.val_fraction < 1, "lm train: --val-fraction must lie in [0, 1)");
  BL_CHECK(!o.data.empty(), "lm train: --data PATH is required (a UTF-8 text file or a folder of them)");
  BL_CHECK(o.stop_at >= 0 && o.stop_at <= o.steps, "lm train: --stop-at ", o.stop_at, " must lie in [0, --steps ",
           o.steps, "]");
  BL_CHECK(o.stop_at == 0 || !o.checkpoint.empty(), "lm train: --stop-at needs --checkpoint FILE to continue from");

  // The tokenizer: --tokenizer, else the one of --init-from.
  std::string tok_path = o.tokenizer;
  if (tok_path.empty() && !o.init_from.empty() && std::filesystem::exists(o.init_from + "/tokenizer.json"))
    tok_path = o.init_from + "/tokenizer.json";
  BL_CHECK(!tok_path.empty(), "lm train: --tokenizer FILE is required (a tokenizer.json; `bitlearn tokenizer "
                              "train` makes one from the corpus)");
  const std::vector<uint8_t> tok_bytes = read_file_bytes(tok_path, "tokenizer");
  const text::Tokenizer tok =
      text::Tokenizer::from_json_text(std::string(tok_bytes.begin(), tok_bytes.end()), tok_path);
  const std::string tok_sha = sha256_hex(tok_bytes.data(), tok_bytes.size());

  // The model.
  std::unique_ptr<Transformer> model;
  if (!o.init_from.empty()) {
    model = Transformer::from_hf_dir(o.init_from);
  } else {
    ModelConfig c = o.config_path.empty() ? preset(o.model, tok.vocab_size()) : models::load_config(o.config_path);
    if (!o.config_path.empty())
      BL_CHECK((o.model.rfind("gpt2", 0) == 0) == (c.model_type == "gpt2"), "lm train: --model ", o.model, " but ",
               o.config_path, " has model_type ", c.model_type);
    model = std::make_unique<Transformer>(c, o.seed);
  }
  const ModelConfig& c = model->config();
  BL_CHECK(tok.vocab_size() <= c.vocab_size, "lm train: the tokenizer ", tok_path, " has ", tok.vocab_size(),
           " ids but the model's vocab_size is ", c.vocab_size, " (a tokenizer for another model?)");
  if (const auto eos = tok.token_to_id("<|endoftext|>")) {
    ModelConfig& mc = const_cast<ModelConfig&>(c);
    if (!mc.eos_token_id) mc.eos_token_id = *eos;
  }
  const int64_t T = o.seq_len > 0 ? o.seq_len : c.max_positions;
  BL_CHECK(T >= 1 && T <= c.max_positions, "lm train: --seq-len ", T, " exceeds the model's context ", c.max_positions);
  const int64_t S = o.shards > 0 ? o.shards : o.batch;
  BL_CHECK(o.batch % S == 0, "lm train: --batch ", o.batch, " is not a multiple of --shards ", S);
  BL_CHECK(o.accumulate >= 1 && S % o.accumulate == 0, "lm train: --accumulate ", o.accumulate,
           " does not divide the ", S, " shards of a step");
  const int64_t per_shard = o.batch / S, micro_shards = S / o.accumulate;

  // Data.
  const std::string tokens_path =
      !o.tokens.empty() ? o.tokens : (!o.checkpoint.empty() ? o.checkpoint + ".tokens" : std::string("train.tokens"));
  const TokenFile tf = prepare_tokens(o.data, tok, tok_sha, tokens_path);
  const int64_t n_val = static_cast<int64_t>(std::floor(static_cast<double>(tf.size()) * o.val_fraction));
  const int64_t n_train = tf.size() - n_val;
  BL_CHECK(n_train >= T + 1, "lm train: the corpus ", o.data, " gives ", tf.size(), " tokens (", n_train,
           " for training), fewer than one sequence of ", T, " + 1 tokens");

  model->to(device);
  nn::AdamW opt(model->named_parameters(), o.lr, o.beta1, o.beta2, o.eps, o.weight_decay);
  opt.exclude_from_weight_decay([](const std::string& name, const Tensor& v) {
    return v.ndim() < 2 || name.find("embed") != std::string::npos || name.find("wte") != std::string::npos ||
           name.find("wpe") != std::string::npos;
  });
  const nn::LrSchedule sched = nn::cosine_lr(o.lr, o.warmup, o.steps, o.min_lr);
  const nlohmann::ordered_json hp = bit_options(o, c, T, S, tf);

  TrainResult result;
  result.parameters = model->num_parameters();
  if (o.resume && !o.checkpoint.empty() && std::filesystem::exists(o.checkpoint)) {
    nn::CheckpointInfo info = nn::load_checkpoint(o.checkpoint, *model, opt);
    auto it = info.metadata.find(kHparamsKey);
    BL_CHECK(it != info.metadata.end(), "lm train: ", o.checkpoint, " is not a language-model checkpoint");
    nlohmann::ordered_json saved;
    try {
      saved = nlohmann::ordered_json::parse(it->second);
    } catch (const nlohmann::json::exception&) {
      throw Error("lm train: " + o.checkpoint + ": its metadata " + kHparamsKey + " is not JSON (the file was altered)");
    }
    BL_CHECK(saved.is_object(), "lm train: ", o.checkpoint, ": its metadata ", kHparamsKey, " is not a JSON object");
    // The data position is saved beside the step (one sequence batch per step): anything else means
    // the file was altered, and a run resumed from it would not read the data it claims.
    auto pos = info.metadata.find("lm.data_position");
    BL_CHECK(pos != info.metadata.end() && pos->second == std::to_string(info.step), "lm train: --resume refused: ",
             o.checkpoint, " has lm.data_position ", pos == info.metadata.end() ? std::string("(absent)") : "'" + pos->second + "'",
             " but step ", info.step, " (they are saved equal; the file was altered)");
    for (const auto& [key, value] : hp.items()) {
      BL_CHECK(saved.contains(key) && saved[key] == value, "lm train: --resume refused: ", o.checkpoint,
               " was trained with ", key, " = ", saved.contains(key) ? option_text(saved[key]) : "(absent)",
               " but this run has ", key, " = ", option_text(value), " (the run would not continue the same training)");
    }
    result.first_step = info.step;
  }
  const int64_t end = o.stop_at > 0 ? o.stop_at : o.steps;
  const float coef = 1.0f / static_cast<float>(S);
  auto t0 = clock::now();
  std::vector<int64_t> ids, labels;
  auto save = [&](int64_t done) {
    std::map<std::string, std::string> meta;
    meta[kHparamsKey] = hp.dump();
    meta["lm.config"] = model->hf_config_json();
    meta["lm.data_position"] = std::to_string(done);
    nn::save_checkpoint(o.checkpoint, *model, opt, done, meta);
    const std::vector<uint8_t> bytes = read_file_bytes(o.checkpoint, "checkpoint");
    result.checkpoint_sha256 = sha256_hex(bytes.data(), bytes.size());
  };
  if (!o.save_hf_init.empty()) save_hf(*model, o.save_hf_init, tok_path);
  std::vector<int64_t> all_windows;
  for (int64_t s = result.first_step; s < end; ++s) {
    const auto ts = clock::now();
    const std::vector<int64_t> starts = window_starts(n_train, T, o.batch, s, o.sampler, o.seed);
    windows(tf, 0, starts, T, &ids, &labels);
    if (!o.dump_batches.empty())
      for (int64_t st : starts)
        for (int64_t t = 0; t <= T; ++t) all_windows.push_back(tf.at(st + t));
    opt.zero_grad();
    std::vector<float> shard_losses;
    const int64_t micro_rows = micro_shards * per_shard * T;
    for (int64_t k = 0; k < o.accumulate; ++k) {
      const std::vector<int64_t> mi(ids.begin() + k * micro_rows, ids.begin() + (k + 1) * micro_rows);
      const std::vector<int64_t> ml(labels.begin() + k * micro_rows, labels.begin() + (k + 1) * micro_rows);
      Transformer::Losses L = model->loss(Tensor::from_vector(mi, {micro_rows}, device),
                                          Tensor::from_vector(ml, {micro_rows}, device), micro_shards, per_shard, T,
                                          coef, o.recompute);
      for (const Tensor& l : L.shard_losses) {
        const float v = static_cast<float>(l.item());
        if (!finite(v))
          throw Error(detail::concat("lm train: the loss is ", std::isnan(v) ? "NaN" : "infinite", " at step ",
                                     s + 1, " (shard ", shard_losses.size(), "); stopped before updating",
                                     o.checkpoint.empty() ? "" : ", the last checkpoint is intact"));
        shard_losses.push_back(v);
      }
      ag::backward(L.root);
    }
    model->finish_grads();
    if (!o.dump_grads.empty() && s == result.first_step) {
      std::map<std::string, Tensor> grads;
      for (const auto& [name, v] : model->named_parameters())
        if (v.grad().defined()) grads[name] = v.grad();
      save_safetensors(o.dump_grads, grads, {{"step", std::to_string(s + 1)}});
    }
    float loss = 0.0f;
    for (float v : shard_losses) loss += v;
    loss *= coef;
    const Tensor gn = o.clip > 0 ? nn::clip_grad_norm(opt.params(), o.clip) : nn::grad_norm(opt.params());
    const float norm = gn.defined() ? static_cast<float>(gn.item()) : 0.0f;
    if (!finite(norm))
      throw Error(detail::concat("lm train: the gradient norm is not finite at step ", s + 1,
                                 "; stopped before updating", o.checkpoint.empty() ? "" : ", the last checkpoint is intact"));
    const float lr = sched.lr(s);
    opt.set_lr(lr);
    opt.step();

    StepRecord r;
    r.step = s + 1;
    r.loss = loss;
    r.grad_norm = norm;
    r.lr = lr;
    r.tokens = o.batch * T;
    if (o.hash_every > 0 && ((s + 1) % o.hash_every == 0 || s + 1 == end)) r.params_sha256 = params_sha256(*model);
    if (o.eval_every > 0 && ((s + 1) % o.eval_every == 0 || s + 1 == end) && n_val >= T + 1) {
      float vsum = 0.0f;
      int64_t count = 0;
      for (int64_t e = 0; e < o.eval_batches; ++e) {
        const std::vector<int64_t> vs = window_starts(n_val, T, o.batch, e, Sampler::sequential, 0);
        windows(tf, n_train, vs, T, &ids, &labels);
        for (const Tensor& l : model->eval_loss(Tensor::from_vector(ids, {o.batch * T}, device),
                                                Tensor::from_vector(labels, {o.batch * T}, device), o.batch, 1, T)) {
          vsum += static_cast<float>(l.item());
          ++count;
        }
      }
      r.val_loss = vsum / static_cast<float>(count);
    }
    if (!o.checkpoint.empty() && ((o.checkpoint_every > 0 && (s + 1) % o.checkpoint_every == 0) || s + 1 == end))
      save(s + 1);
    r.seconds = std::chrono::duration<double>(clock::now() - ts).count();
    result.steps.push_back(r);
    result.last_step = s + 1;
    if (o.progress) {
      const double elapsed = std::chrono::duration<double>(clock::now() - t0).count();
      const double done = static_cast<double>(s + 1 - result.first_step);
      const double tok_s = done * static_cast<double>(r.tokens) / elapsed;
      std::fprintf(stderr, "step %lld/%lld  loss %.4f%s  grad_norm %.3f  lr %.3g  %.0f tok/s  eta %s\n",
                   static_cast<long long>(s + 1), static_cast<long long>(o.steps), loss,
                   r.val_loss >= 0 ? (std::string("  val ") + std::to_string(r.val_loss).substr(0, 6)).c_str() : "",
                   norm, lr, tok_s, fmt_eta(elapsed / done * static_cast<double>(end - s - 1)).c_str());
    }
    if (o.on_step) o.on_step(r);
  }
  if (!o.dump_batches.empty()) {
    const int64_t n = result.last_step - result.first_step;
    save_safetensors(o.dump_batches, {{"windows", Tensor::from_vector(all_windows, {n, o.batch, T + 1})}},
                     {{"first_step", std::to_string(result.first_step)}});
  }
  if (result.last_step == 0) result.last_step = result.first_step;
  result.final_params_sha256 = params_sha256(*model);
  if (!o.save_hf.empty()) save_hf(*model, o.save_hf, tok_path);
  if (!o.report.empty()) {
    write_file_atomic(o.report, report_json(result, o), "report");
    std::string svg = o.report;
    const size_t dot = svg.rfind('.');
    svg = (dot != std::string::npos && svg.find('/', dot) == std::string::npos ? svg.substr(0, dot) : svg) + ".svg";
    write_file_atomic(svg, loss_curve_svg(result.steps), "loss curve");
  }
  return result;
}

}  // namespace bl::lm
