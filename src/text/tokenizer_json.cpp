// tokenizer_json.cpp: reading a Hugging Face tokenizer.json into a TokenizerImpl.
//
// Every field that is read is checked; a field whose value bitlearn does not implement gives an
// error naming the field (e.g. "model.type 'WordPiece' is not supported").
#include <algorithm>
#include <string>

#include "bitlearn/tokenizer.h"
#include "core/error.h"
#include "text/tokenizer_impl.h"

namespace bl::text {
namespace {

using Json = nlohmann::json;

// Ids the tables may be sized for: tokenizer.h documents both limits.
constexpr int64_t kMaxTokenIds = kTokenizerMaxIds;

// Largest id + 1 allowed for `entries` defined tokens: a vocabulary may have gaps, but the id table
// it sizes stays proportional to what the file defines.
int64_t id_space_limit(size_t entries) { return 2 * static_cast<int64_t>(entries) + kTokenizerIdSlack; }

struct Reader {
  const std::string& source;

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw Error(detail::concat(source, ": ", path, ": ", message));
  }
  const Json* find(const Json& obj, const std::string& name) const {
    auto it = obj.find(name);
    return it == obj.end() ? nullptr : &*it;
  }
  const Json& object(const Json& obj, const std::string& name, const std::string& path) const {
    const Json* v = find(obj, name);
    if (v == nullptr) fail(path, "missing (expected an object)");
    if (!v->is_object()) fail(path, "expected an object, got " + std::string(v->type_name()));
    return *v;
  }
  std::string string(const Json& obj, const std::string& name, const std::string& path) const {
    const Json* v = find(obj, name);
    if (v == nullptr) fail(path, "missing (expected a string)");
    if (!v->is_string()) fail(path, "expected a string, got " + std::string(v->type_name()));
    return v->get<std::string>();
  }
  bool boolean(const Json& obj, const std::string& name, const std::string& path, bool fallback) const {
    const Json* v = find(obj, name);
    if (v == nullptr || v->is_null()) return fallback;
    if (!v->is_boolean()) fail(path, "expected true or false, got " + std::string(v->type_name()));
    return v->get<bool>();
  }
  int32_t id(const Json& v, const std::string& path) const {
    if (!v.is_number_integer()) fail(path, "expected a token id (integer), got " + std::string(v.type_name()));
    const int64_t x = v.get<int64_t>();
    if (x < 0 || x >= kMaxTokenIds) {
      fail(path, "token id " + std::to_string(x) + " out of range [0, " + std::to_string(kMaxTokenIds) + ")");
    }
    return static_cast<int32_t>(x);
  }
  std::optional<std::string> optional_string(const Json& obj, const std::string& name,
                                             const std::string& path) const {
    const Json* v = find(obj, name);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_string()) fail(path, "expected a string or null, got " + std::string(v->type_name()));
    return v->get<std::string>();
  }
  std::string type_of(const Json& obj, const std::string& path) const {
    return string(obj, "type", path + ".type");
  }
};

void read_model(const Reader& r, const Json& root, BpeModel& model) {
  const Json& m = r.object(root, "model", "model");
  if (const Json* t = r.find(m, "type")) {
    if (!t->is_string()) r.fail("model.type", "expected a string");
    const std::string type = t->get<std::string>();
    if (type != "BPE") {
      r.fail("model.type", "'" + type + "' is not supported (bitlearn reads byte-level BPE models only)");
    }
  } else if (r.find(m, "merges") == nullptr) {
    r.fail("model.type", "missing, and the model has no merges (only BPE is supported)");
  }
  if (const Json* d = r.find(m, "dropout")) {
    if (!d->is_null() && !(d->is_number() && d->get<double>() == 0.0)) {
      r.fail("model.dropout", "BPE dropout is not supported (it makes encoding random); expected null");
    }
  }
  model.unk_token = r.optional_string(m, "unk_token", "model.unk_token");
  model.continuing_subword_prefix =
      r.optional_string(m, "continuing_subword_prefix", "model.continuing_subword_prefix");
  model.end_of_word_suffix = r.optional_string(m, "end_of_word_suffix", "model.end_of_word_suffix");
  model.fuse_unk = r.boolean(m, "fuse_unk", "model.fuse_unk", false);
  model.byte_fallback = r.boolean(m, "byte_fallback", "model.byte_fallback", false);
  model.ignore_merges = r.boolean(m, "ignore_merges", "model.ignore_merges", false);

  const Json& vocab = r.object(m, "vocab", "model.vocab");
  model.vocab.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    model.vocab[it.key()] = r.id(it.value(), "model.vocab['" + it.key() + "']");
  }
  // Checked before finish() sizes the id table by the largest id.
  std::string largest_token;
  int64_t largest = -1;
  for (const auto& kv : model.vocab) {
    if (kv.second > largest) {
      largest = kv.second;
      largest_token = kv.first;
    }
  }
  if (largest + 1 > id_space_limit(model.vocab.size())) {
    r.fail("model.vocab['" + largest_token + "']",
           "token id " + std::to_string(largest) + " leaves too large a gap: " + std::to_string(model.vocab.size()) +
               " tokens allow ids below " + std::to_string(id_space_limit(model.vocab.size())));
  }
  model.finish(r.source);

  const Json* merges = r.find(m, "merges");
  if (merges == nullptr) r.fail("model.merges", "missing (expected a list)");
  if (!merges->is_array()) r.fail("model.merges", "expected a list, got " + std::string(merges->type_name()));
  model.merges.reserve(merges->size());
  for (size_t i = 0; i < merges->size(); ++i) {
    const Json& e = (*merges)[i];
    const std::string path = "model.merges[" + std::to_string(i) + "]";
    std::string left, right;
    if (e.is_string()) {
      const std::string s = e.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        r.fail(path, "'" + s + "' is not two tokens separated by one space");
      }
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      left = e[0].get<std::string>();
      right = e[1].get<std::string>();
    } else {
      r.fail(path, "expected \"a b\" or [\"a\", \"b\"]");
    }
    add_merge(model, left, right, r.source, i);
  }
}

void read_added_tokens(const Reader& r, const Json& root, TokenizerImpl& impl) {
  const Json* list = r.find(root, "added_tokens");
  if (list == nullptr || list->is_null()) return;
  if (!list->is_array()) r.fail("added_tokens", "expected a list");
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    const Json& e = (*list)[i];
    if (!e.is_object()) r.fail(path, "expected an object");
    AddedToken t;
    const Json* id = r.find(e, "id");
    if (id == nullptr) r.fail(path + ".id", "missing");
    t.id = r.id(*id, path + ".id");
    t.content = r.string(e, "content", path + ".content");
    if (t.content.empty()) r.fail(path + ".content", "empty");
    t.single_word = r.boolean(e, "single_word", path + ".single_word", false);
    t.lstrip = r.boolean(e, "lstrip", path + ".lstrip", false);
    t.rstrip = r.boolean(e, "rstrip", path + ".rstrip", false);
    t.special = r.boolean(e, "special", path + ".special", false);
    t.normalized = r.boolean(e, "normalized", path + ".normalized", !t.special);
    auto known = impl.added_by_content.find(t.content);
    if (known != impl.added_by_content.end()) continue;  // a repeated token keeps its first entry
    // One id, one token: an id that the vocabulary or an earlier added token gives to another
    // string would encode to one token and decode to the other.
    const BpeModel& m = impl.model;
    if (static_cast<size_t>(t.id) < m.id_present.size() && m.id_present[t.id] && m.id_to_token[t.id] != t.content) {
      r.fail(path + ".id", "added token '" + t.content + "' has id " + std::to_string(t.id) +
                               ", which model.vocab gives to the token '" + m.id_to_token[t.id] + "'");
    }
    auto same_id = impl.added_by_id.find(t.id);
    if (same_id != impl.added_by_id.end()) {
      r.fail(path + ".id", "added token '" + t.content + "' has id " + std::to_string(t.id) +
                               ", which added_tokens[" + std::to_string(same_id->second) + "] gives to '" +
                               impl.added[same_id->second].content + "'");
    }
    impl.added_by_content[t.content] = t.id;
    impl.added_by_id[t.id] = impl.added.size();
    impl.added.push_back(t);
  }
}

void read_normalizer(const Reader& r, const Json& root) {
  const Json* n = r.find(root, "normalizer");
  if (n == nullptr || n->is_null()) return;
  if (!n->is_object()) r.fail("normalizer", "expected an object or null");
  const std::string type = r.type_of(*n, "normalizer");
  if (type == "Sequence") {
    const Json* list = r.find(*n, "normalizers");
    if (list != nullptr && list->is_array() && list->empty()) return;
    if (list != nullptr && list->is_array()) {
      r.fail("normalizer.normalizers[0].type",
             "'" + r.type_of((*list)[0], "normalizer.normalizers[0]") + "' is not supported (no normalizers are)");
    }
    r.fail("normalizer.normalizers", "expected a list");
  }
  r.fail("normalizer.type", "'" + type + "' is not supported (bitlearn supports no normalizer yet)");
}

SplitBehavior read_behavior(const Reader& r, const Json& step, const std::string& path) {
  const std::string b = r.string(step, "behavior", path + ".behavior");
  if (b == "Isolated") return SplitBehavior::isolated;
  if (b == "Removed") return SplitBehavior::removed;
  if (b == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (b == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (b == "Contiguous") return SplitBehavior::contiguous;
  r.fail(path + ".behavior", "'" + b + "' is not a split behaviour");
}

void read_pre_tokenizer_step(const Reader& r, const Json& step, const std::string& path,
                             TokenizerImpl& impl) {
  if (!step.is_object()) r.fail(path, "expected an object");
  const std::string type = r.type_of(step, path);
  PreTokenizerStep s;
  if (type == "ByteLevel") {
    s.kind = PreTokenizerStep::Kind::byte_level;
    s.add_prefix_space = r.boolean(step, "add_prefix_space", path + ".add_prefix_space", true);
    s.use_regex = r.boolean(step, "use_regex", path + ".use_regex", true);
    if (s.use_regex) s.regex = std::make_shared<Regex>(kGpt2SplitPattern, r.source + ": " + path);
  } else if (type == "Split") {
    s.kind = PreTokenizerStep::Kind::split;
    const Json& pattern = r.object(step, "pattern", path + ".pattern");
    if (const Json* re = r.find(pattern, "Regex")) {
      if (!re->is_string()) r.fail(path + ".pattern.Regex", "expected a string");
      s.regex = std::make_shared<Regex>(re->get<std::string>(), r.source + ": " + path + ".pattern.Regex");
    } else if (const Json* lit = r.find(pattern, "String")) {
      if (!lit->is_string()) r.fail(path + ".pattern.String", "expected a string");
      s.literal = lit->get<std::string>();
    } else {
      r.fail(path + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
    }
    s.behavior = read_behavior(r, step, path);
    s.invert = r.boolean(step, "invert", path + ".invert", false);
  } else {
    r.fail(path + ".type", "'" + type + "' is not supported (ByteLevel, Split and Sequence are)");
  }
  impl.pre_tokenizer.push_back(std::move(s));
}

void read_pre_tokenizer(const Reader& r, const Json& root, TokenizerImpl& impl) {
  const Json* p = r.find(root, "pre_tokenizer");
  if (p == nullptr || p->is_null()) {
    r.fail("pre_tokenizer", "missing; a byte-level BPE needs a ByteLevel pre-tokenizer");
  }
  if (!p->is_object()) r.fail("pre_tokenizer", "expected an object");
  if (r.type_of(*p, "pre_tokenizer") == "Sequence") {
    const Json* list = r.find(*p, "pretokenizers");
    if (list == nullptr || !list->is_array()) r.fail("pre_tokenizer.pretokenizers", "expected a list");
    for (size_t i = 0; i < list->size(); ++i) {
      read_pre_tokenizer_step(r, (*list)[i], "pre_tokenizer.pretokenizers[" + std::to_string(i) + "]", impl);
    }
  } else {
    read_pre_tokenizer_step(r, *p, "pre_tokenizer", impl);
  }
  int byte_level_steps = 0;
  for (const auto& s : impl.pre_tokenizer) byte_level_steps += s.kind == PreTokenizerStep::Kind::byte_level;
  if (byte_level_steps != 1 || impl.pre_tokenizer.back().kind != PreTokenizerStep::Kind::byte_level) {
    r.fail("pre_tokenizer", "expected exactly one ByteLevel step, last (only byte-level BPE is supported)");
  }
}

void read_decoder(const Reader& r, const Json& root, TokenizerImpl& impl) {
  const Json* d = r.find(root, "decoder");
  if (d == nullptr || d->is_null()) return;
  if (!d->is_object()) r.fail("decoder", "expected an object or null");
  const std::string type = r.type_of(*d, "decoder");
  if (type != "ByteLevel") r.fail("decoder.type", "'" + type + "' is not supported (ByteLevel is)");
  impl.has_byte_level_decoder = true;
}

std::vector<int32_t> special_ids(const Reader& r, const Json& entry, const std::string& path) {
  if (!entry.is_array() || entry.size() != 2) r.fail(path, "expected [\"token\", id]");
  return {r.id(entry[1], path + "[1]")};
}

void read_post_processor_step(const Reader& r, const Json& p, const std::string& path, PostProcessor& out) {
  if (!p.is_object()) r.fail(path, "expected an object");
  const std::string type = r.type_of(p, path);
  std::vector<int32_t> prefix, suffix;
  if (type == "ByteLevel") {
    return;  // offsets only
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    const Json* cls = r.find(p, "cls");
    const Json* sep = r.find(p, "sep");
    if (cls == nullptr) r.fail(path + ".cls", "missing");
    if (sep == nullptr) r.fail(path + ".sep", "missing");
    prefix = special_ids(r, *cls, path + ".cls");
    suffix = special_ids(r, *sep, path + ".sep");
  } else if (type == "TemplateProcessing") {
    const Json* single = r.find(p, "single");
    if (single == nullptr || !single->is_array()) r.fail(path + ".single", "expected a list");
    const Json* specials = r.find(p, "special_tokens");
    bool seen_sequence = false;
    for (size_t i = 0; i < single->size(); ++i) {
      const std::string ipath = path + ".single[" + std::to_string(i) + "]";
      const Json& item = (*single)[i];
      if (!item.is_object()) r.fail(ipath, "expected an object");
      if (const Json* seq = r.find(item, "Sequence")) {
        const std::string id = r.string(*seq, "id", ipath + ".Sequence.id");
        if (id != "A" || seen_sequence) r.fail(ipath + ".Sequence.id", "expected one sequence 'A'");
        seen_sequence = true;
      } else if (const Json* sp = r.find(item, "SpecialToken")) {
        const std::string name = r.string(*sp, "id", ipath + ".SpecialToken.id");
        if (specials == nullptr || !specials->is_object() || r.find(*specials, name) == nullptr) {
          r.fail(path + ".special_tokens", "has no entry '" + name + "'");
        }
        const Json& entry = (*specials)[name];
        const Json* ids = r.find(entry, "ids");
        if (ids == nullptr || !ids->is_array()) r.fail(path + ".special_tokens['" + name + "'].ids", "expected a list");
        for (const Json& v : *ids) {
          (seen_sequence ? suffix : prefix).push_back(r.id(v, path + ".special_tokens['" + name + "'].ids"));
        }
      } else {
        r.fail(ipath, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
      }
    }
    if (!seen_sequence) r.fail(path + ".single", "has no Sequence 'A'");
  } else {
    r.fail(path + ".type",
           "'" + type + "' is not supported (ByteLevel, TemplateProcessing, RobertaProcessing, "
           "BertProcessing and Sequence are)");
  }
  // A later processor wraps the output of the earlier ones.
  out.prefix_ids.insert(out.prefix_ids.begin(), prefix.begin(), prefix.end());
  out.suffix_ids.insert(out.suffix_ids.end(), suffix.begin(), suffix.end());
}

void read_post_processor(const Reader& r, const Json& root, TokenizerImpl& impl) {
  const Json* p = r.find(root, "post_processor");
  if (p == nullptr || p->is_null()) return;
  if (!p->is_object()) r.fail("post_processor", "expected an object or null");
  if (r.type_of(*p, "post_processor") == "Sequence") {
    const Json* list = r.find(*p, "processors");
    if (list == nullptr || !list->is_array()) r.fail("post_processor.processors", "expected a list");
    for (size_t i = 0; i < list->size(); ++i) {
      read_post_processor_step(r, (*list)[i], "post_processor.processors[" + std::to_string(i) + "]", impl.post);
    }
  } else {
    read_post_processor_step(r, *p, "post_processor", impl.post);
  }
}

void check_absent_or_null(const Reader& r, const Json& root, const std::string& name) {
  const Json* v = r.find(root, name);
  if (v != nullptr && !v->is_null()) r.fail(name, "is not supported (expected null)");
}

}  // namespace

void load_tokenizer_json(TokenizerImpl& impl, const std::string& text) {
  const Reader r{impl.source};
  try {
    impl.json = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(detail::concat(impl.source, ": not valid JSON (", e.what(), ")"));
  }
  const Json& root = impl.json;
  if (!root.is_object()) r.fail("(top level)", "expected a JSON object");
  check_absent_or_null(r, root, "truncation");
  check_absent_or_null(r, root, "padding");
  read_model(r, root, impl.model);
  read_added_tokens(r, root, impl);
  read_normalizer(r, root);
  read_pre_tokenizer(r, root, impl);
  read_decoder(r, root, impl);
  read_post_processor(r, root, impl);

  int32_t size = static_cast<int32_t>(impl.model.id_to_token.size());
  for (const auto& t : impl.added) size = std::max(size, t.id + 1);
  // The vocabulary size sizes embeddings downstream, so added ids obey the same gap rule.
  const int64_t defined = id_space_limit(impl.model.vocab.size() + impl.added.size());
  BL_CHECK(size <= defined, impl.source, ": added_tokens: largest id ", size - 1, " leaves too large a gap: ",
           impl.model.vocab.size() + impl.added.size(), " tokens allow ids below ", defined);
  impl.vocab_size = size;
  for (int32_t id : impl.post.prefix_ids) {
    BL_CHECK(id < size, impl.source, ": post_processor: special token id ", id, " is not in the vocabulary");
  }
  for (int32_t id : impl.post.suffix_ids) {
    BL_CHECK(id < size, impl.source, ": post_processor: special token id ", id, " is not in the vocabulary");
  }
}

}  // namespace bl::text
