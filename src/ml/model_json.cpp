// model_json.cpp: parse_model_json (model_json.h).
//
// The text is scanned once outside strings: every string literal is found by its opening quote.
// A long value string (not an object key) whose bytes are all printable ASCII other than '\' is
// valid JSON string content exactly as written, so it is moved aside and its literal replaced by a
// placeholder "\u0000<index>". The skeleton text has the same token structure, so it parses iff the
// original does; on a parse error the original text is parsed instead, for the original message.
// Placeholders start with a NUL character, which a model file can only write as the escape \u0000:
// texts containing that escape take the plain parse, so no placeholder can be confused with data.
#include "ml/model_json.h"

#include <cstring>
#include <vector>

namespace bl::ml {

namespace {

constexpr size_t kLongString = 4096;

// Index one past the closing quote of the string literal opening at text[open], or npos when the
// text ends first. plain: no escape and only printable ASCII (0x20..0x7e) inside.
size_t string_end(const std::string& text, size_t open, bool& plain) {
  const char* s = text.data();
  const size_t n = text.size();
  const void* hit = std::memchr(s + open + 1, '"', n - open - 1);
  if (hit == nullptr) return std::string::npos;
  const size_t close = static_cast<size_t>(static_cast<const char*>(hit) - s);
  unsigned bad = 0;
  for (size_t i = open + 1; i < close; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    bad |= static_cast<unsigned>(c < 0x20 || c > 0x7e || c == '\\');
  }
  plain = bad == 0;
  if (plain) return close + 1;
  // Escapes (or other bytes): walk the literal, skipping the character after each backslash.
  for (size_t i = open + 1; i < n; ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string::npos;
}

bool is_object_key(const std::string& text, size_t after) {
  while (after < text.size() && (text[after] == ' ' || text[after] == '\n' || text[after] == '\r' ||
                                 text[after] == '\t'))
    ++after;
  return after < text.size() && text[after] == ':';
}

void put_back(nlohmann::json& node, std::vector<std::string>& cut) {
  if (node.is_object() || node.is_array()) {
    for (auto& child : node) put_back(child, cut);
  } else if (node.is_string()) {
    std::string& s = node.get_ref<std::string&>();
    if (!s.empty() && s[0] == '\0') s = std::move(cut[std::stoul(s.substr(1))]);
  }
}

}  // namespace

nlohmann::json parse_model_json(const std::string& text) {
  if (text.find("\\u0000") != std::string::npos) return nlohmann::json::parse(text);
  std::string skeleton;
  std::vector<std::string> cut;
  size_t copied = 0, pos = 0;
  while (pos < text.size()) {
    const void* hit = std::memchr(text.data() + pos, '"', text.size() - pos);
    if (hit == nullptr) break;
    const size_t open = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    bool plain = false;
    const size_t end = string_end(text, open, plain);
    if (end == std::string::npos) break;  // unterminated: the parse below reports it
    if (plain && end - open - 2 >= kLongString && !is_object_key(text, end)) {
      skeleton.append(text, copied, open - copied);
      skeleton += "\"\\u0000" + std::to_string(cut.size()) + "\"";
      cut.emplace_back(text, open + 1, end - open - 2);
      copied = end;
    }
    pos = end;
  }
  if (cut.empty()) return nlohmann::json::parse(text);
  skeleton.append(text, copied, std::string::npos);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(skeleton);
  } catch (const nlohmann::json::parse_error&) {
    return nlohmann::json::parse(text);  // throws the error with the original text's positions
  }
  put_back(j, cut);
  return j;
}

}  // namespace bl::ml
