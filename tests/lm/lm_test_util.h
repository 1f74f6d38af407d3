// lm_test_util.h: a corpus, a tokenizer and tiny model configs for the language-model trainer tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "bitlearn/io.h"
#include "bitlearn/lm.h"
#include "bitlearn/tokenizer.h"

namespace bl::lm::testing {

// A fresh folder under the test temp dir.
inline std::string temp_dir(const std::string& tag) {
  const std::string d = ::testing::TempDir() + "/bl_lm_" + tag + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// The project's docs folder: real English prose (Markdown), a few hundred kB.
inline std::string corpus_dir() { return std::string(BITLEARN_SOURCE_DIR) + "/docs"; }

// A byte-level BPE of 384 ids (with <|endoftext|>) trained on the corpus, saved once per process.
inline const std::string& tokenizer_path() {
  static const std::string path = [] {
    const std::string dir = temp_dir("tok");
    std::vector<std::string> texts;
    for (const auto& [name, text] : read_corpus(corpus_dir())) texts.push_back(text);
    text::BpeTrainerOptions o;
    o.vocab_size = 384;
    o.special_tokens = {"<|endoftext|>"};
    const std::string p = dir + "/tokenizer.json";
    text::train_byte_level_bpe(texts, o).save(p);
    return p;
  }();
  return path;
}

// config.json of tiny models: 2 layers, width 64, 4 heads (Llama: 2 key-value heads), context 32.
inline std::string tiny_config(const std::string& dir, const std::string& type, bool tied = false) {
  std::string text;
  if (type == "gpt2") {
    text = R"({"model_type": "gpt2", "vocab_size": 384, "n_positions": 32, "n_embd": 64, "n_layer": 2,
               "n_head": 4, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5})";
  } else {
    text = std::string(R"({"model_type": ")") + type + R"(", "vocab_size": 384, "hidden_size": 64,
               "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
               "num_key_value_heads": 2, "max_position_embeddings": 32, "rms_norm_eps": 1e-5,
               "hidden_act": "silu", "tie_word_embeddings": )" + (tied ? "true" : "false") + "}";
  }
  const std::string p = dir + "/" + type + (tied ? "_tied" : "") + ".json";
  write_file_atomic(p, text, "config");
  return p;
}

// Options of a short tiny run on the CPU writing into dir.
inline TrainOptions tiny_options(const std::string& dir, const std::string& type, bool tied = false) {
  TrainOptions o;
  o.model = type == "gpt2" ? "gpt2" : "llama";
  o.config_path = tiny_config(dir, type, tied);
  o.data = corpus_dir();
  o.tokenizer = tokenizer_path();
  o.tokens = dir + "/tokens.bin";
  o.steps = 6;
  o.batch = 4;
  o.seq_len = 32;
  o.lr = 3e-3f;
  o.warmup = 2;
  o.progress = false;
  return o;
}

}  // namespace bl::lm::testing
