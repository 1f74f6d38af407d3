// text_generation.h: text from a prompt with stop strings and incremental output, shared by
// `bitlearn generate` and `bitlearn serve`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bitlearn/models.h"
#include "bitlearn/tokenizer.h"

namespace bl::cli {

struct TextRun {
  std::vector<int32_t> prompt;  // the prompt's token ids
  std::vector<int32_t> ids;     // prompt + generated tokens (the library's generate result)
  std::string prompt_text;      // decode(prompt)
  std::string text;             // the generated text, cut before the first stop string
  bool stopped_by_string = false;
  // "stop" (an end-of-sequence token or a stop string) or "length" (max_new_tokens reached).
  std::string finish_reason;
};

// Generates from the token ids `prompt` with options `o` (its on_token, when set, is called first for each
// token and may end generation). A stop string ends generation as soon as the generated text holds
// it; the text then ends before it, as in llama.cpp. on_text, when set, receives the generated text
// in pieces as they become final: never the start of a possible stop string or an incomplete UTF-8
// sequence; its pieces concatenated are `text`. Returning false from on_text ends generation.
TextRun generate_text(const models::CausalLM& model, const text::Tokenizer& tok, const std::vector<int32_t>& prompt,
                      models::GenerateOptions o, const std::vector<std::string>& stop,
                      const std::function<bool(const std::string&)>& on_text = {});

// Several prompts generated together (models::generate_batch: one prefill, then decode steps over
// the sequences still running), each with the stop strings as generate_text applies them; run i is
// what generate_text gives for prompts[i] alone. on_token(i, token), when set, sees each token.
std::vector<TextRun> generate_texts(const models::CausalLM& model, const text::Tokenizer& tok,
                                    const std::vector<std::vector<int32_t>>& prompts, const models::GenerateOptions& o,
                                    const std::vector<std::string>& stop,
                                    const std::function<void(size_t, int32_t)>& on_token = {});

// "stop" when generation ended on an end-of-sequence token (of o.eos_ids, else the config's) or
// before max_new_tokens, else "length".
std::string finish_reason(const models::CausalLM& model, const models::GenerateOptions& o, size_t prompt_tokens,
                          const std::vector<int32_t>& ids);

// The tokenizer of a model folder: `given` when not empty, else DIR/tokenizer.json, then
// DIR/../tokenizer.json; "" when there is none.
std::string find_tokenizer(const std::string& model_dir, const std::string& given);

// The SHA-256 (hex) of token ids written as little-endian int32: what `serve` reports per response
// so that a client can check a replay against `bitlearn generate --ids`.
std::string token_ids_sha256(const std::vector<int32_t>& ids);

}  // namespace bl::cli
