// lm_train_driver: runs bl::lm::train from key=value arguments and prints one JSON line (timings,
// losses, peak CUDA memory), for the comparisons with PyTorch in scripts/lm_torch_check.py and
// bench/lm_train_bench.py.
//
//   lm_train_driver key=value ...
//
// Keys of bl::lm::TrainOptions: model config init_from data tokenizer tokens steps batch seq_len
// shards accumulate lr min_lr weight_decay clip beta1 beta2 eps warmup sampler seed device threads
// recompute save_hf save_hf_init dump_grads dump_batches report val_fraction eval_every
// eval_batches hash_every progress (booleans: 0/1). Defaults differ from TrainOptions in two
// places: progress=0 and hash_every=0 (hashing copies every parameter to the host each step).
//
// Driver keys:
//   work=DIR            folder for the files the driver makes (default "."; created)
//   train_tokenizer=V   when `tokenizer` does not exist yet: train a byte-level BPE of V ids (with
//                       <|endoftext|>) on `data` and save it there first
//   vocab=V             with a preset `model` and no `config`: train the preset's shape with V ids
//                       (written to DIR/<model>-<V>.config.json)
//   synthetic_vocab=V   benchmark data without a corpus: uniform random ids in [0, V) (see below)
//   synthetic_tokens=N  how many (default 1048576)
//   config_only=1       write the config.json of `model` / `vocab` and exit (for the PyTorch side)
//
// Synthetic data: the trainer reads a corpus through a tokenizer into a token file, and reuses a
// token file that carries the same corpus and tokenizer digests. The driver writes a small text
// corpus and a 260-id tokenizer trained on it, then a token file stamped with their digests that
// holds N random ids over the whole model vocabulary, so a 50257-id model sees 50257-id data, as
// PyTorch's random ids do. The ids are not text, which does not matter for timing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/cuda_memory.h"
#include "bitlearn/io.h"
#include "bitlearn/lm.h"
#include "bitlearn/tokenizer.h"
#include "core/digest.h"
#include "core/error.h"

namespace {

using bl::lm::TrainOptions;

std::map<std::string, std::string> parse_args(int argc, char** argv) {
  std::map<std::string, std::string> kv;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0) a = a.substr(2);
    const size_t eq = a.find('=');
    if (eq == std::string::npos) kv[a] = "1";  // a bare flag
    else kv[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return kv;
}

int64_t to_i64(const std::string& key, const std::string& v) {
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  BL_CHECK(used == v.size() && !v.empty(), "lm_train_driver: ", key, "=", v, " is not an integer");
  return x;
}

float to_f32(const std::string& key, const std::string& v) {
  size_t used = 0;
  float x = 0;
  try {
    x = std::stof(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  BL_CHECK(used == v.size() && !v.empty(), "lm_train_driver: ", key, "=", v, " is not a number");
  return x;
}

bool to_bool(const std::string& key, const std::string& v) {
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off") return false;
  throw bl::Error(bl::detail::concat("lm_train_driver: ", key, "=", v, " is not 0/1"));
}

// Fills options from the TrainOptions keys of kv, removing them from kv.
void fill_options(std::map<std::string, std::string>* kv, TrainOptions* o) {
  std::map<std::string, std::string*> strings = {
      {"model", &o->model},   {"config", &o->config_path},   {"init_from", &o->init_from},
      {"data", &o->data},     {"tokenizer", &o->tokenizer},  {"tokens", &o->tokens},
      {"device", &o->device}, {"checkpoint", &o->checkpoint}, {"save_hf", &o->save_hf},
      {"save_hf_init", &o->save_hf_init}, {"dump_grads", &o->dump_grads},
      {"dump_batches", &o->dump_batches}, {"report", &o->report}};
  std::map<std::string, int64_t*> ints = {
      {"steps", &o->steps},         {"batch", &o->batch},       {"seq_len", &o->seq_len},
      {"shards", &o->shards},       {"accumulate", &o->accumulate}, {"warmup", &o->warmup},
      {"eval_every", &o->eval_every}, {"eval_batches", &o->eval_batches}, {"hash_every", &o->hash_every},
      {"checkpoint_every", &o->checkpoint_every}, {"stop_at", &o->stop_at}};
  std::map<std::string, float*> floats = {
      {"lr", &o->lr},       {"min_lr", &o->min_lr}, {"weight_decay", &o->weight_decay}, {"clip", &o->clip},
      {"beta1", &o->beta1}, {"beta2", &o->beta2},   {"eps", &o->eps},  {"val_fraction", &o->val_fraction}};
  for (auto it = kv->begin(); it != kv->end();) {
    const std::string& k = it->first;
    const std::string& v = it->second;
    bool used = true;
    if (strings.count(k)) *strings[k] = v;
    else if (ints.count(k)) *ints[k] = to_i64(k, v);
    else if (floats.count(k)) *floats[k] = to_f32(k, v);
    else if (k == "seed") o->seed = static_cast<uint64_t>(to_i64(k, v));
    else if (k == "threads") o->threads = static_cast<int>(to_i64(k, v));
    else if (k == "recompute") o->recompute = to_bool(k, v);
    else if (k == "resume") o->resume = to_bool(k, v);
    else if (k == "progress") o->progress = to_bool(k, v);
    else if (k == "sampler") {
      BL_CHECK(v == "random" || v == "sequential", "lm_train_driver: sampler=", v, " (random or sequential)");
      o->sampler = v == "random" ? bl::lm::Sampler::random : bl::lm::Sampler::sequential;
    } else {
      used = false;
    }
    it = used ? kv->erase(it) : std::next(it);
  }
}

// The corpus digest exactly as prepare_tokens computes it.
std::string corpus_sha256(const std::string& data) {
  bl::Sha256 h;
  for (const auto& [name, text] : bl::lm::read_corpus(data)) {
    h.update_i64_le(static_cast<int64_t>(text.size()));
    h.update(text);
  }
  return h.finish_hex();
}

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Writes the synthetic corpus, tokenizer and token file under work and points o at them.
void make_synthetic(const std::string& work, int64_t vocab, int64_t count, uint64_t seed, TrainOptions* o) {
  BL_CHECK(vocab >= 2 && vocab <= (int64_t{1} << 32), "lm_train_driver: synthetic_vocab=", vocab, " out of range");
  BL_CHECK(count >= 2, "lm_train_driver: synthetic_tokens=", count, " must be >= 2");
  o->data = work + "/synthetic.txt";
  o->tokenizer = work + "/synthetic_tokenizer.json";
  o->tokens = work + "/synthetic-" + std::to_string(vocab) + "-" + std::to_string(count) + ".tokens";
  std::string text;
  for (int i = 0; i < 64; ++i) text += "synthetic benchmark corpus: the ids of the token file are random.\n";
  bl::write_file_atomic(o->data, text, "synthetic corpus");
  bl::text::BpeTrainerOptions bo;
  bo.vocab_size = 260;
  bl::text::train_byte_level_bpe({text}, bo).save(o->tokenizer);
  const std::vector<uint8_t> tok_bytes = bl::read_file_bytes(o->tokenizer, "tokenizer");

  const int64_t width = vocab <= 65536 ? 2 : 4;
  nlohmann::ordered_json header;
  header["format"] = "bitlearn.tokens.v1";
  header["count"] = count;
  header["width"] = width;
  header["vocab_size"] = vocab;
  header["corpus_sha256"] = corpus_sha256(o->data);
  header["tokenizer_sha256"] = bl::sha256_hex(tok_bytes.data(), tok_bytes.size());
  header["documents"] = 1;
  const std::string hs = header.dump();
  std::vector<uint8_t> bytes = {'B', 'L', 'T', 'O', 'K', 'E', 'N', '1', 0, 0, 0, 0};
  const uint32_t hlen = static_cast<uint32_t>(hs.size());
  std::memcpy(bytes.data() + 8, &hlen, 4);
  bytes.insert(bytes.end(), hs.begin(), hs.end());
  bytes.resize((bytes.size() + 7) / 8 * 8, 0);
  const size_t at = bytes.size();
  bytes.resize(at + static_cast<size_t>(count * width));
  uint64_t state = seed ^ 0x5EED5EED5EEDull;
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t v = static_cast<uint32_t>(splitmix64(&state) % static_cast<uint64_t>(vocab));
    if (width == 2) {
      const uint16_t s = static_cast<uint16_t>(v);
      std::memcpy(bytes.data() + at + 2 * i, &s, 2);
    } else {
      std::memcpy(bytes.data() + at + 4 * i, &v, 4);
    }
  }
  bl::write_file_atomic(o->tokens, bytes, "token file");
  // The trainer must take this file as it is (same digests), not re-tokenize the corpus.
  const bl::text::Tokenizer tok = bl::text::Tokenizer::from_file(o->tokenizer);
  const bl::lm::TokenFile tf =
      bl::lm::prepare_tokens(o->data, tok, bl::sha256_hex(tok_bytes.data(), tok_bytes.size()), o->tokens);
  BL_CHECK(tf.size() == count, "lm_train_driver: the trainer did not reuse the synthetic token file ", o->tokens);
}

// Writes the config.json of preset(model, vocab) under work; returns its path.
std::string write_preset_config(const std::string& work, const std::string& model, int64_t vocab) {
  bl::lm::ModelConfig c = bl::lm::preset(model, vocab);
  // The config text comes from a model of the same shape with one layer and two ids (cheap to
  // build); the layer count and vocabulary are then put back.
  const int64_t layers = c.num_layers;
  c.num_layers = 1;
  c.vocab_size = 2;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(bl::lm::Transformer(c, 1).hf_config_json());
  j[c.model_type == "gpt2" ? "n_layer" : "num_hidden_layers"] = layers;
  j["vocab_size"] = vocab;
  const std::string path = work + "/" + model + "-" + std::to_string(vocab) + ".config.json";
  bl::write_file_atomic(path, j.dump(2) + "\n", "config.json");
  return path;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int run(int argc, char** argv) {
  std::map<std::string, std::string> kv = parse_args(argc, argv);
  TrainOptions o;
  o.progress = false;
  o.hash_every = 0;
  fill_options(&kv, &o);
  auto take = [&](const std::string& key, const std::string& fallback) {
    auto it = kv.find(key);
    if (it == kv.end()) return fallback;
    std::string v = it->second;
    kv.erase(it);
    return v;
  };
  const std::string work = take("work", ".");
  const int64_t train_tok = to_i64("train_tokenizer", take("train_tokenizer", "0"));
  const int64_t synth_vocab = to_i64("synthetic_vocab", take("synthetic_vocab", "0"));
  const int64_t synth_count = to_i64("synthetic_tokens", take("synthetic_tokens", "1048576"));
  int64_t vocab = to_i64("vocab", take("vocab", "0"));
  const bool config_only = to_bool("config_only", take("config_only", "0"));
  if (!kv.empty()) {
    std::string unknown;
    for (const auto& [k, v] : kv) unknown += (unknown.empty() ? "" : ", ") + k;
    throw bl::Error(bl::detail::concat("lm_train_driver: unknown key(s): ", unknown,
                                       " (see the comment at the top of bench/lm_train_driver.cpp)"));
  }
  std::error_code ec;
  std::filesystem::create_directories(work, ec);
  BL_CHECK(!ec, "lm_train_driver: cannot create work=", work, ": ", ec.message());

  if (synth_vocab > 0 && vocab == 0 && o.config_path.empty()) vocab = synth_vocab;
  if (vocab > 0) {
    BL_CHECK(o.config_path.empty() && o.init_from.empty(), "lm_train_driver: vocab= needs a preset model, not config= or init_from=");
    o.config_path = write_preset_config(work, o.model, vocab);
  }
  if (config_only) {
    BL_CHECK(!o.config_path.empty(), "lm_train_driver: config_only=1 needs vocab= (or synthetic_vocab=)");
    std::printf("{\"config\": %s}\n", nlohmann::json(o.config_path).dump().c_str());
    return 0;
  }
  if (synth_vocab > 0) {
    if (!o.config_path.empty()) {
      const int64_t mv = bl::models::load_config(o.config_path).vocab_size;
      BL_CHECK(mv >= synth_vocab, "lm_train_driver: synthetic_vocab=", synth_vocab, " exceeds the model's vocab_size ", mv);
    }
    make_synthetic(work, synth_vocab, synth_count, o.seed, &o);
  }
  if (train_tok > 0 && !o.tokenizer.empty() && !std::filesystem::exists(o.tokenizer)) {
    BL_CHECK(!o.data.empty(), "lm_train_driver: train_tokenizer= needs data=");
    std::vector<std::string> texts;
    for (const auto& [name, text] : bl::lm::read_corpus(o.data)) texts.push_back(text);
    bl::text::BpeTrainerOptions bo;
    bo.vocab_size = static_cast<int32_t>(train_tok);
    bo.special_tokens = {"<|endoftext|>"};
    bl::text::train_byte_level_bpe(texts, bo).save(o.tokenizer);
  }
  if (o.tokens.empty()) o.tokens = work + "/train.tokens";

  const auto t0 = std::chrono::steady_clock::now();
  const bl::lm::TrainResult r = bl::lm::train(o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  BL_CHECK(!r.steps.empty(), "lm_train_driver: no step was run");

  std::vector<double> secs, losses, norms, lrs;
  for (const bl::lm::StepRecord& s : r.steps) {
    secs.push_back(s.seconds);
    losses.push_back(s.loss);
    norms.push_back(s.grad_norm);
    lrs.push_back(s.lr);
  }
  // The first two steps pay for warm-up (allocator, kernel caches); the rest are timed.
  const std::vector<double> timed(secs.size() > 2 ? secs.begin() + 2 : secs.begin(), secs.end());
  const double step_s = median(timed);
  const int64_t tokens = r.steps.front().tokens;
  nlohmann::ordered_json j;
  j["model"] = o.model;
  j["config"] = o.config_path;
  j["device"] = o.device;
  j["threads"] = o.threads;
  j["parameters"] = r.parameters;
  j["steps"] = static_cast<int64_t>(r.steps.size());
  j["batch"] = o.batch;
  j["tokens_per_step"] = tokens;
  j["seq_len"] = tokens / o.batch;
  j["median_step_s"] = step_s;
  j["tokens_per_s"] = step_s > 0 ? static_cast<double>(tokens) / step_s : 0.0;
  j["first_step_s"] = secs.front();
  j["step_s"] = secs;
  j["wall_s"] = wall;
  j["final_loss"] = losses.back();
  j["losses"] = losses;
  j["grad_norms"] = norms;
  j["lr"] = lrs;
  j["final_params_sha256"] = r.final_params_sha256;
  const bl::Device dev = bl::Device::parse(o.device);
  if (dev.kind == bl::Device::Kind::cuda) {
    const bl::CudaMemoryStats m = bl::cuda_memory_stats(dev.index);
    j["peak_cuda_bytes"] = static_cast<int64_t>(m.peak_bytes_in_use);
    j["cuda_cached_bytes"] = static_cast<int64_t>(m.bytes_cached);
  }
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lm_train_driver: error: %s\n", e.what());
    return 1;
  }
}
