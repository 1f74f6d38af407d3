// chat_template.cpp: the Jinja subset of chat templates (chat_template.h).
//
// Three stages: the template text is cut into text, {{ output }} and {% statement %} pieces with
// Jinja's whitespace rules (trim_blocks, lstrip_blocks, the '-' markers); each piece's code is
// tokenized and parsed by recursive descent into expression and statement trees; rendering walks
// the statement tree with a stack of scopes (a for loop opens one, as in Jinja, so `set` inside a
// loop does not leak out; namespace() objects are shared and so carry values out).
#include "bitlearn/chat_template.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bitlearn/io.h"
#include "core/error.h"

namespace bl::text {
namespace {

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------
struct Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;  // in insertion order, as Python's dict

struct Value {
  enum class Kind { undefined, none, boolean, integer, number, string, list, dict } kind = Kind::undefined;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;
  std::shared_ptr<List> l;
  std::shared_ptr<Dict> m;
  bool is_namespace = false;

  static Value none() { Value v; v.kind = Kind::none; return v; }
  static Value boolean(bool x) { Value v; v.kind = Kind::boolean; v.b = x; return v; }
  static Value integer(int64_t x) { Value v; v.kind = Kind::integer; v.i = x; return v; }
  static Value number(double x) { Value v; v.kind = Kind::number; v.d = x; return v; }
  static Value string(std::string x) { Value v; v.kind = Kind::string; v.s = std::move(x); return v; }
  static Value list(List x = {}) { Value v; v.kind = Kind::list; v.l = std::make_shared<List>(std::move(x)); return v; }
  static Value dict(Dict x = {}) { Value v; v.kind = Kind::dict; v.m = std::make_shared<Dict>(std::move(x)); return v; }
  bool is(Kind k) const { return kind == k; }
  bool numeric() const { return kind == Kind::integer || kind == Kind::number || kind == Kind::boolean; }
  double as_double() const { return kind == Kind::number ? d : kind == Kind::boolean ? (b ? 1 : 0) : static_cast<double>(i); }
  const Value* find(const std::string& key) const {
    if (kind != Kind::dict) return nullptr;
    for (const auto& kv : *m)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
};
using K = Value::Kind;

bool truthy(const Value& v) {
  switch (v.kind) {
    case K::undefined:
    case K::none: return false;
    case K::boolean: return v.b;
    case K::integer: return v.i != 0;
    case K::number: return v.d != 0;
    case K::string: return !v.s.empty();
    case K::list: return !v.l->empty();
    case K::dict: return !v.m->empty();
  }
  return false;
}

// Python's repr() of a float: the shortest digits that read back to x, in fixed notation when the
// decimal exponent is in [-4, 16), else as d.ddde+XX.
std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  char buf[40];
  for (int p = 0; p <= 16; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  // buf: [-]d[.ddd]e[+-]XX
  std::string m = buf;
  const size_t epos = m.find('e');
  const int exp = std::atoi(m.c_str() + epos + 1);
  std::string sign = m[0] == '-' ? "-" : "";
  std::string digits;
  for (size_t k = sign.size(); k < epos; ++k)
    if (m[k] != '.') digits += m[k];
  if (exp >= -4 && exp < 16) {
    std::string out;
    if (exp < 0) {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char e[8];
  std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return sign + out + e;
}

std::string py_quote(const std::string& s) {
  const char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == q || c == '\\') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    if (c == '\t') { out += "\\t"; continue; }
    if (c == '\r') { out += "\\r"; continue; }
    if (u < 0x20 || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
      continue;
    }
    out += c;
  }
  return out + q;
}

// Python's str() of a value (what {{ }} prints); repr() inside containers.
std::string str(const Value& v, bool repr = false) {
  switch (v.kind) {
    case K::undefined: return "";
    case K::none: return "None";
    case K::boolean: return v.b ? "True" : "False";
    case K::integer: return std::to_string(v.i);
    case K::number: return float_repr(v.d);
    case K::string: return repr ? py_quote(v.s) : v.s;
    case K::list: {
      std::string out = "[";
      for (size_t k = 0; k < v.l->size(); ++k) out += (k ? ", " : "") + str((*v.l)[k], true);
      return out + "]";
    }
    case K::dict: {
      std::string out = v.is_namespace ? "<Namespace {" : "{";
      size_t k = 0;
      for (const auto& kv : *v.m) out += (k++ ? ", " : "") + py_quote(kv.first) + ": " + str(kv.second, true);
      return out + (v.is_namespace ? "}>" : "}");
    }
  }
  return "";
}

// json.dumps(v, ensure_ascii=False, indent=indent) as transformers' tojson filter calls it.
void to_json(const Value& v, int indent, int depth, std::string& out) {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (v.kind) {
    case K::undefined:
    case K::none: out += "null"; return;
    case K::boolean: out += v.b ? "true" : "false"; return;
    case K::integer: out += std::to_string(v.i); return;
    case K::number: out += float_repr(v.d); return;
    case K::string: {
      nlohmann::json j = v.s;
      out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
    case K::list: {
      if (v.l->empty()) { out += "[]"; return; }
      out += '[';
      for (size_t k = 0; k < v.l->size(); ++k) {
        if (k) out += indent < 0 ? ", " : ",";
        newline(depth + 1);
        to_json((*v.l)[k], indent, depth + 1, out);
      }
      newline(depth);
      out += ']';
      return;
    }
    case K::dict: {
      if (v.m->empty()) { out += "{}"; return; }
      out += '{';
      size_t k = 0;
      for (const auto& kv : *v.m) {
        if (k++) out += indent < 0 ? ", " : ",";
        newline(depth + 1);
        to_json(Value::string(kv.first), indent, depth + 1, out);
        out += ": ";
        to_json(kv.second, indent, depth + 1, out);
      }
      newline(depth);
      out += '}';
      return;
    }
  }
}

bool equal(const Value& a, const Value& b) {
  if (a.numeric() && b.numeric()) return a.as_double() == b.as_double();
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case K::undefined:
    case K::none: return true;
    case K::string: return a.s == b.s;
    case K::list:
      if (a.l->size() != b.l->size()) return false;
      for (size_t k = 0; k < a.l->size(); ++k)
        if (!equal((*a.l)[k], (*b.l)[k])) return false;
      return true;
    case K::dict:
      if (a.m->size() != b.m->size()) return false;
      for (const auto& kv : *a.m) {
        const Value* o = b.find(kv.first);
        if (o == nullptr || !equal(kv.second, *o)) return false;
      }
      return true;
    default: return false;
  }
}

template <class Json>
Value from_json(const Json& j) {
  if (j.is_null()) return Value::none();
  if (j.is_boolean()) return Value::boolean(j.template get<bool>());
  if (j.is_number_integer()) return Value::integer(j.template get<int64_t>());
  if (j.is_number()) return Value::number(j.template get<double>());
  if (j.is_string()) return Value::string(j.template get<std::string>());
  if (j.is_array()) {
    List l;
    for (const auto& e : j) l.push_back(from_json(e));
    return Value::list(std::move(l));
  }
  Dict m;
  for (auto it = j.begin(); it != j.end(); ++it) m.emplace_back(it.key(), from_json(it.value()));
  return Value::dict(std::move(m));
}

// ---------------------------------------------------------------------------------------------
// Cutting the template into pieces
// ---------------------------------------------------------------------------------------------
struct Piece {
  enum class Kind { text, output, statement } kind;
  std::string code;  // the text, or the code between the delimiters
  size_t offset;     // in the template, for error messages
};

struct Source {
  const std::string& text;
  int line_of(size_t offset) const {
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(offset, text.size())), '\n'));
  }
  [[noreturn]] void fail(size_t offset, const std::string& what) const {
    throw Error("chat template line " + std::to_string(line_of(offset)) + ": " + what);
  }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The characters (code points, each as its UTF-8 bytes) of a text: Python's strings count, index
// and slice characters, not bytes. A stray byte counts as one character.
std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t p = 0; p < s.size();) {
    size_t q = p + 1;
    while (q < s.size() && (static_cast<unsigned char>(s[q]) & 0xC0) == 0x80 && q - p < 4) ++q;
    out.push_back(s.substr(p, q - p));
    p = q;
  }
  return out;
}

// Upper or lower case of one code point: ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic
// (other characters are left as they are).
uint32_t change_case(uint32_t c, bool upper) {
  if (c < 0x80) return upper ? static_cast<uint32_t>(std::toupper(static_cast<int>(c))) : static_cast<uint32_t>(std::tolower(static_cast<int>(c)));
  auto shift = [&](uint32_t lo_upper, uint32_t hi_upper, uint32_t delta) -> uint32_t {
    if (upper && c >= lo_upper + delta && c <= hi_upper + delta) return c - delta;
    if (!upper && c >= lo_upper && c <= hi_upper) return c + delta;
    return 0;
  };
  if (upper && c == 0xFF) return 0x178;  // ÿ
  if (!upper && c == 0x178) return 0xFF;
  if (upper && c == 0xB5) return 0x39C;  // micro sign
  if (c != 0xD7 && c != 0xF7) {
    if (uint32_t r = shift(0xC0, 0xDE, 0x20)) return r;
  }
  if (c >= 0x100 && c <= 0x17E && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x178) {
    const bool pairs_even = c < 0x139 || c > 0x148 ? c < 0x179 : false;  // 0x139..0x148, 0x179..0x17E pair odd/even
    const bool is_upper = pairs_even ? c % 2 == 0 : c % 2 == 1;
    if (upper && !is_upper) return c - 1;
    if (!upper && is_upper) return c + 1;
    return c;
  }
  if (upper && c == 0x3C2) return 0x3A3;  // final sigma
  if (c != 0x3A2 && c != 0x3C2) {
    if (uint32_t r = shift(0x391, 0x3A9, 0x20)) return r;
  }
  if (uint32_t r = shift(0x410, 0x42F, 0x20)) return r;
  if (uint32_t r = shift(0x400, 0x40F, 0x50)) return r;
  return c;
}

std::string encode_utf8(uint32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

// The code point of one character of utf8_chars (a stray byte: -1).
int64_t code_point(const std::string& ch) {
  const unsigned char b = static_cast<unsigned char>(ch[0]);
  if (ch.size() == 1) return b < 0x80 ? b : -1;
  const size_t want = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0;
  if (want != ch.size()) return -1;
  uint32_t c = b & (0x3F >> (want - 1));
  for (size_t k = 1; k < ch.size(); ++k) c = (c << 6) | (static_cast<unsigned char>(ch[k]) & 0x3F);
  return c;
}

std::vector<Piece> cut(const Source& src) {
  const std::string& t = src.text;
  std::vector<Piece> pieces;
  std::string text;
  bool strip_next = false;   // a '-' before the last closing delimiter
  bool trim_newline = false; // trim_blocks: one newline after a block or comment tag
  size_t pos = 0;
  auto flush_text = [&](size_t at) {
    if (!text.empty()) pieces.push_back({Piece::Kind::text, text, at});
    text.clear();
  };
  while (pos < t.size()) {
    const size_t open = t.find('{', pos);
    size_t tag = std::string::npos;
    for (size_t p = open; p != std::string::npos && p + 1 < t.size(); p = t.find('{', p + 1)) {
      if (t[p + 1] == '{' || t[p + 1] == '%' || t[p + 1] == '#') {
        tag = p;
        break;
      }
    }
    std::string chunk = t.substr(pos, (tag == std::string::npos ? t.size() : tag) - pos);
    // Whether the chunk starts a line (for lstrip_blocks): the template's start, or after the newline
    // that trim_blocks took; right after a tag (no newline taken) it does not, as in Jinja's lexer.
    bool line_start = pos == 0;
    if (trim_newline && !chunk.empty() && chunk[0] == '\n') {
      chunk.erase(0, 1);
      line_start = true;
    } else if (trim_newline && chunk.size() >= 2 && chunk[0] == '\r' && chunk[1] == '\n') {
      chunk.erase(0, 2);
      line_start = true;
    }
    if (strip_next) {
      size_t k = 0;
      while (k < chunk.size() && is_space(chunk[k])) ++k;
      chunk.erase(0, k);
    }
    strip_next = trim_newline = false;
    if (tag == std::string::npos) {
      text += chunk;
      break;
    }
    const char kind = t[tag + 1];
    size_t start = tag + 2;
    const bool strip_before = start < t.size() && t[start] == '-';
    const bool keep_before = start < t.size() && t[start] == '+';
    bool keep_newline = false;
    if (strip_before || keep_before) ++start;
    if (strip_before) {
      while (!chunk.empty() && is_space(chunk.back())) chunk.pop_back();
    } else if ((kind == '%' || kind == '#') && !keep_before) {
      // lstrip_blocks: spaces and tabs from the start of the line up to a block tag.
      size_t k = chunk.size();
      while (k > 0 && (chunk[k - 1] == ' ' || chunk[k - 1] == '\t')) --k;
      if (k == 0 ? line_start : chunk[k - 1] == '\n') chunk.resize(k);
    }
    text += chunk;
    // Find the closing delimiter, skipping string literals and bracketed code ({}} in
    // `{{ {'a': {}} }}` closes a dict, not the tag), as Jinja's lexer does.
    const std::string close = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
    size_t end = std::string::npos;
    if (kind == '#') {
      end = t.find(close, start);
    } else {
      char quote = 0;
      int depth = 0;
      for (size_t p = start; p + 1 < t.size(); ++p) {
        if (quote) {
          if (t[p] == '\\') ++p;
          else if (t[p] == quote) quote = 0;
        } else if (t[p] == '\'' || t[p] == '"') {
          quote = t[p];
        } else if (depth == 0 && t[p] == close[0] && t[p + 1] == close[1]) {
          end = p;
          break;
        } else if (t[p] == '{' || t[p] == '[' || t[p] == '(') {
          ++depth;
        } else if ((t[p] == '}' || t[p] == ']' || t[p] == ')') && depth > 0) {
          --depth;
        }
      }
    }
    if (end == std::string::npos) src.fail(tag, std::string("'") + t.substr(tag, 2) + "' is never closed");
    size_t code_end = end;
    if (code_end > start && t[code_end - 1] == '-') {
      strip_next = true;
      --code_end;
    } else if (code_end > start && t[code_end - 1] == '+' && kind == '%') {
      --code_end;
      keep_newline = true;  // `+%}`: no trim_blocks for this tag
    }
    if (kind != '#') {
      flush_text(pos);
      pieces.push_back({kind == '{' ? Piece::Kind::output : Piece::Kind::statement, t.substr(start, code_end - start), tag});
    }
    if (kind != '{' && !strip_next && !keep_newline) trim_newline = true;
    pos = end + 2;
  }
  flush_text(pos);
  return pieces;
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------
struct Token {
  enum class Kind { name, integer, number, string, op, end } kind;
  std::string text;
};

std::vector<Token> tokenize(const std::string& code, const Source& src, size_t offset) {
  std::vector<Token> out;
  size_t p = 0;
  while (p < code.size()) {
    const char c = code[p];
    if (is_space(c)) { ++p; continue; }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t q = p;
      while (q < code.size() && (std::isalnum(static_cast<unsigned char>(code[q])) || code[q] == '_')) ++q;
      out.push_back({Token::Kind::name, code.substr(p, q - p)});
      p = q;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t q = p;
      while (q < code.size() && std::isdigit(static_cast<unsigned char>(code[q]))) ++q;
      bool is_float = false;
      if (q + 1 < code.size() && code[q] == '.' && std::isdigit(static_cast<unsigned char>(code[q + 1]))) {
        is_float = true;
        ++q;
        while (q < code.size() && std::isdigit(static_cast<unsigned char>(code[q]))) ++q;
      }
      if (q < code.size() && (code[q] == 'e' || code[q] == 'E')) {  // 1e3, 2.5e-4
        size_t r = q + 1;
        if (r < code.size() && (code[r] == '+' || code[r] == '-')) ++r;
        if (r < code.size() && std::isdigit(static_cast<unsigned char>(code[r]))) {
          is_float = true;
          q = r;
          while (q < code.size() && std::isdigit(static_cast<unsigned char>(code[q]))) ++q;
        }
      }
      out.push_back({is_float ? Token::Kind::number : Token::Kind::integer, code.substr(p, q - p)});
      p = q;
    } else if (c == '\'' || c == '"') {
      std::string s;
      size_t q = p + 1;
      for (; q < code.size() && code[q] != c; ++q) {
        if (code[q] == '\\' && q + 1 < code.size()) {
          // Python's escapes (Jinja decodes string literals as Python does); an unknown escape
          // keeps its backslash.
          const char e = code[++q];
          auto hex = [&](size_t digits) {
            if (q + digits >= code.size()) src.fail(offset, "a truncated \\x, \\u or \\U escape in '" + code + "'");
            uint32_t c = 0;
            for (size_t k = 1; k <= digits; ++k) {
              const char h = code[q + k];
              if (!std::isxdigit(static_cast<unsigned char>(h))) src.fail(offset, "a bad \\x, \\u or \\U escape in '" + code + "'");
              c = c * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
            }
            q += digits;
            if (c > 0x10FFFF) src.fail(offset, "an escape beyond U+10FFFF in '" + code + "'");
            s += encode_utf8(c);
          };
          switch (e) {
            case 'n': s += '\n'; break;
            case 't': s += '\t'; break;
            case 'r': s += '\r'; break;
            case 'a': s += '\a'; break;
            case 'b': s += '\b'; break;
            case 'f': s += '\f'; break;
            case 'v': s += '\v'; break;
            case '\\': case '\'': case '"': s += e; break;
            case '\n': break;  // a backslash before a newline joins the lines
            case 'x': hex(2); break;
            case 'u': hex(4); break;
            case 'U': hex(8); break;
            default:
              if (e >= '0' && e <= '7') {  // octal, up to 3 digits
                uint32_t c = static_cast<uint32_t>(e - '0');
                for (int k = 0; k < 2 && q + 1 < code.size() && code[q + 1] >= '0' && code[q + 1] <= '7'; ++k)
                  c = c * 8 + static_cast<uint32_t>(code[++q] - '0');
                s += encode_utf8(c);
              } else {
                s += '\\';
                s += e;
              }
          }
        } else {
          s += code[q];
        }
      }
      if (q >= code.size()) src.fail(offset, "a string literal is never closed in '" + code + "'");
      out.push_back({Token::Kind::string, s});
      p = q + 1;
    } else {
      static const char* two[] = {"==", "!=", "<=", ">=", "//", "**"};
      std::string op(1, c);
      for (const char* t : two)
        if (code.compare(p, 2, t) == 0) op = t;
      if (std::string("()[]{},:.|+-*/%~<>=!").find(c) == std::string::npos)
        src.fail(offset, std::string("unexpected character '") + c + "' in '" + code + "'");
      out.push_back({Token::Kind::op, op});
      p += op.size();
    }
    // Each node of an expression takes a token, so this bounds the depth of the trees that parsing,
    // rendering and freeing walk recursively (a hostile template cannot exhaust the stack).
    if (out.size() > 4000) src.fail(offset, "more than 4000 tokens in one tag");
  }
  out.push_back({Token::Kind::end, ""});
  return out;
}

struct Expr {
  enum class Kind { literal, name, attr, item, slice, call, filter, test, unary, binary, cond, list, dict } kind;
  std::string name;  // name, attribute, filter, test, operator
  Value value;       // literal
  std::vector<std::unique_ptr<Expr>> args;  // operands; for call/filter the positional arguments follow
  std::vector<std::string> kwnames;         // call/filter: names of the last kwnames.size() args
  bool negate = false;                      // test: `is not`
};
using ExprPtr = std::unique_ptr<Expr>;

// The filters and tests the renderer has: others are refused when the template is parsed, as Jinja
// refuses an unknown filter or test when it compiles a template.
bool known_filter(const std::string& n) {
  static const char* names[] = {"trim", "length", "count", "upper", "lower", "title", "capitalize", "string", "safe",
                                "tojson", "join", "first", "last", "default", "d", "reverse", "list", "items", "replace",
                                "selectattr", "rejectattr"};
  return std::find(std::begin(names), std::end(names), n) != std::end(names);
}
bool known_test(const std::string& n) {
  static const char* names[] = {"defined", "undefined", "none", "string", "mapping", "iterable", "sequence",
                                "number", "integer", "float", "boolean", "true", "false"};
  return std::find(std::begin(names), std::end(names), n) != std::end(names);
}

ExprPtr make(Expr::Kind kind, std::string name = "") {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->name = std::move(name);
  return e;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, const Source& src, size_t offset, const std::string& code)
      : t_(std::move(tokens)), src_(src), offset_(offset), code_(code) {}

  ExprPtr expression() {
    Nesting guard(*this);
    return conditional();
  }
  const Token& peek() const { return t_[p_]; }
  bool at_end() const { return t_[p_].kind == Token::Kind::end; }
  bool accept_name(const char* n) {
    if (t_[p_].kind == Token::Kind::name && t_[p_].text == n) { ++p_; return true; }
    return false;
  }
  bool accept_op(const char* o) {
    if (t_[p_].kind == Token::Kind::op && t_[p_].text == o) { ++p_; return true; }
    return false;
  }
  void expect_op(const char* o) {
    if (!accept_op(o)) fail(std::string("expected '") + o + "'");
  }
  std::string expect_name() {
    if (t_[p_].kind != Token::Kind::name) fail("expected a name");
    return t_[p_++].text;
  }
  void expect_end() {
    if (!at_end()) fail("unexpected '" + t_[p_].text + "'");
  }
  [[noreturn]] void fail(const std::string& what) const {
    src_.fail(offset_, what + " in '" + (code_.size() > 200 ? code_.substr(0, 200) + "..." : code_) + "'");
  }

 private:
  ExprPtr conditional() {
    ExprPtr then = or_expr();
    if (accept_name("if")) {
      auto e = make(Expr::Kind::cond);
      ExprPtr cond = or_expr();
      ExprPtr other = accept_name("else") ? conditional() : nullptr;
      e->args.push_back(std::move(then));
      e->args.push_back(std::move(cond));
      if (other) e->args.push_back(std::move(other));
      return e;
    }
    return then;
  }
  ExprPtr binary(ExprPtr a, const std::string& op, ExprPtr b) {
    auto e = make(Expr::Kind::binary, op);
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }
  // One left-associative precedence level, `a op b op c ...`: `accept` takes the operator (a keyword or
  // a symbol), `next` parses an operand of the next tighter level.
  ExprPtr left_chain(const char* op, bool (Parser::*accept)(const char*), ExprPtr (Parser::*next)()) {
    ExprPtr a = (this->*next)();
    while ((this->*accept)(op)) a = binary(std::move(a), op, (this->*next)());
    return a;
  }
  ExprPtr or_expr() { return left_chain("or", &Parser::accept_name, &Parser::and_expr); }
  ExprPtr and_expr() { return left_chain("and", &Parser::accept_name, &Parser::not_expr); }
  ExprPtr not_expr() {
    Nesting guard(*this);
    if (accept_name("not")) {
      auto e = make(Expr::Kind::unary, "not");
      e->args.push_back(not_expr());
      return e;
    }
    return compare();
  }
  // Jinja's precedence, loosest first: comparisons and `in`; + -; ~; * / // %; **; unary - +;
  // then a primary with its attributes, items and calls, then filters and tests (`-3|string` is
  // (-3)|string, and `1 + 2 is number` is 1 + (2 is number), as in Jinja).
  // Comparisons chain as in Python: `a < b < c` is `a < b and b < c` (each operand evaluated once):
  // a node "compare" with the operands in args and the operators in kwnames.
  ExprPtr compare() {
    ExprPtr first = additive();
    auto e = make(Expr::Kind::binary, "compare");
    e->args.push_back(std::move(first));
    for (;;) {
      const Token& t = peek();
      std::string op;
      if (t.kind == Token::Kind::op && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" ||
                                        t.text == "<=" || t.text == ">=")) {
        op = t.text;
        ++p_;
      } else if (accept_name("in")) {
        op = "in";
      } else if (t.kind == Token::Kind::name && t.text == "not" && t_[p_ + 1].kind == Token::Kind::name &&
                 t_[p_ + 1].text == "in") {
        p_ += 2;
        op = "not in";
      } else {
        break;
      }
      e->kwnames.push_back(op);
      e->args.push_back(additive());
    }
    if (e->kwnames.empty()) return std::move(e->args[0]);
    if (e->kwnames.size() == 1) return binary(std::move(e->args[0]), e->kwnames[0], std::move(e->args[1]));
    return e;
  }
  ExprPtr additive() {
    ExprPtr a = concat();
    for (;;) {
      if (accept_op("+")) a = binary(std::move(a), "+", concat());
      else if (accept_op("-")) a = binary(std::move(a), "-", concat());
      else return a;
    }
  }
  ExprPtr concat() { return left_chain("~", &Parser::accept_op, &Parser::multiplicative); }
  ExprPtr multiplicative() {
    ExprPtr a = power();
    for (;;) {
      std::string op;
      for (const char* o : {"*", "//", "/", "%"})
        if (op.empty() && accept_op(o)) op = o;
      if (op.empty()) return a;
      a = binary(std::move(a), op, power());
    }
  }
  ExprPtr power() {
    ExprPtr a = unary(true);
    while (accept_op("**")) a = binary(std::move(a), "**", unary(true));
    return a;
  }
  ExprPtr unary(bool with_filter) {
    Nesting guard(*this);
    ExprPtr a;
    if (accept_op("-")) {
      a = make(Expr::Kind::unary, "-");
      a->args.push_back(unary(false));
    } else if (accept_op("+")) {
      a = unary(false);
    } else {
      a = postfix(primary());
    }
    return with_filter ? filters(std::move(a)) : std::move(a);
  }
  ExprPtr filters(ExprPtr a) {
    for (;;) {
      if (accept_op("|")) {
        auto e = make(Expr::Kind::filter, expect_name());
        if (!known_filter(e->name)) fail("unsupported filter '" + e->name + "'");
        e->args.push_back(std::move(a));
        if (accept_op("(")) arguments(*e);
        a = std::move(e);
      } else if (accept_name("is")) {
        auto e = make(Expr::Kind::test);
        e->negate = accept_name("not");
        e->name = expect_name();
        if (!known_test(e->name)) fail("unsupported test 'is " + e->name + "'");
        e->args.push_back(std::move(a));
        a = std::move(e);
      } else if (accept_op("(")) {
        a = call(std::move(a));
      } else {
        return a;
      }
    }
  }
  ExprPtr call(ExprPtr callee) {  // after '('
    auto e = make(Expr::Kind::call);
    e->args.push_back(std::move(callee));
    arguments(*e);
    return e;
  }
  void arguments(Expr& e) {  // after '(' : positional then keyword arguments, up to ')'
    if (accept_op(")")) return;
    for (;;) {
      if (peek().kind == Token::Kind::name && t_[p_ + 1].kind == Token::Kind::op && t_[p_ + 1].text == "=") {
        e.kwnames.push_back(t_[p_].text);
        p_ += 2;
        e.args.push_back(expression());
      } else {
        if (!e.kwnames.empty()) fail("a positional argument after a keyword argument");
        e.args.push_back(expression());
      }
      if (accept_op(")")) return;
      expect_op(",");
    }
  }
  ExprPtr postfix(ExprPtr a) {
    for (;;) {
      if (accept_op(".")) {
        auto e = make(Expr::Kind::attr, expect_name());
        e->args.push_back(std::move(a));
        a = std::move(e);
      } else if (accept_op("[")) {
        ExprPtr lo = (peek().kind == Token::Kind::op && peek().text == ":") ? nullptr : expression();
        if (accept_op(":")) {
          auto e = make(Expr::Kind::slice);
          auto at = [&](const char* o) { return peek().kind == Token::Kind::op && peek().text == o; };
          ExprPtr hi = at("]") || at(":") ? nullptr : expression();
          ExprPtr step;
          if (accept_op(":")) step = at("]") ? nullptr : expression();
          e->args.push_back(std::move(a));
          e->args.push_back(std::move(lo));
          e->args.push_back(std::move(hi));
          e->args.push_back(std::move(step));
          a = std::move(e);
        } else {
          auto e = make(Expr::Kind::item);
          e->args.push_back(std::move(a));
          e->args.push_back(std::move(lo));
          a = std::move(e);
        }
        expect_op("]");
      } else if (accept_op("(")) {
        a = call(std::move(a));
      } else {
        return a;
      }
    }
  }
  // A list or dict literal after its opening bracket: items (a dict's as key ':' value) separated by
  // commas, a trailing comma allowed, up to `close`.
  ExprPtr collection(Expr::Kind kind, const char* close) {
    auto e = make(kind);
    if (accept_op(close)) return e;
    for (;;) {
      e->args.push_back(expression());
      if (kind == Expr::Kind::dict) {
        expect_op(":");
        e->args.push_back(expression());
      }
      if (accept_op(close)) return e;
      expect_op(",");
      if (accept_op(close)) return e;
    }
  }
  ExprPtr primary() {
    const Token t = peek();
    ++p_;
    auto literal = [](Value v) {
      auto e = make(Expr::Kind::literal);
      e->value = std::move(v);
      return e;
    };
    switch (t.kind) {
      case Token::Kind::integer: {
        errno = 0;
        const long long v = std::strtoll(t.text.c_str(), nullptr, 10);
        if (errno == ERANGE) fail("the integer " + t.text + " is beyond 64 bits");
        return literal(Value::integer(v));
      }
      case Token::Kind::number: return literal(Value::number(std::strtod(t.text.c_str(), nullptr)));
      case Token::Kind::string: {
        std::string s = t.text;
        while (peek().kind == Token::Kind::string) s += t_[p_++].text;  // adjacent literals join
        return literal(Value::string(s));
      }
      case Token::Kind::name:
        if (t.text == "true" || t.text == "True") return literal(Value::boolean(true));
        if (t.text == "false" || t.text == "False") return literal(Value::boolean(false));
        if (t.text == "none" || t.text == "None") return literal(Value::none());
        return make(Expr::Kind::name, t.text);
      case Token::Kind::op:
        if (t.text == "(") {
          ExprPtr e = expression();
          expect_op(")");
          return e;
        }
        if (t.text == "[") return collection(Expr::Kind::list, "]");
        if (t.text == "{") return collection(Expr::Kind::dict, "}");
        break;
      case Token::Kind::end: --p_; fail("the expression ends early");
    }
    --p_;
    fail("unexpected '" + t.text + "'");
  }

  // Expressions nest at most kMaxNesting levels of the parser (about 200 parentheses; a hostile
  // template cannot exhaust the stack).
  static constexpr int kMaxNesting = 600;
  struct Nesting {
    explicit Nesting(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNesting) p_.fail("expressions nested too deep");
    }
    ~Nesting() { --p_.depth_; }
    Parser& p_;
  };

  std::vector<Token> t_;
  size_t p_ = 0;
  int depth_ = 0;
  const Source& src_;
  size_t offset_;
  std::string code_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------
struct ChatTemplateNode {
  enum class Kind { body, text, output, branch, loop, set } kind = Kind::body;
  size_t offset = 0;
  std::string text;                       // text
  std::vector<std::string> names;         // loop variables; set: target name (and attribute)
  std::vector<ExprPtr> exprs;             // output: 1; branch: conditions; loop: iterable (+ filter); set: value
  std::vector<std::unique_ptr<ChatTemplateNode>> children;  // body: statements; branch: bodies (+ else); loop: body, else
  bool loop_filter = false;
};

namespace {

using Node = ChatTemplateNode;
using NodePtr = std::unique_ptr<Node>;

class Builder {
 public:
  Builder(const std::vector<Piece>& pieces, const Source& src) : pieces_(pieces), src_(src) {}

  NodePtr build() {
    NodePtr root = body({});
    if (p_ < pieces_.size()) src_.fail(pieces_[p_].offset, "'" + head(pieces_[p_]) + "' without its opening statement");
    return root;
  }

 private:
  static std::string head(const Piece& p) {
    size_t a = 0;
    while (a < p.code.size() && is_space(p.code[a])) ++a;
    size_t b = a;
    while (b < p.code.size() && !is_space(p.code[b])) ++b;
    return p.code.substr(a, b - a);
  }
  Parser parser(const Piece& p, size_t skip_words) const {
    Parser ps(tokenize(p.code, src_, p.offset), src_, p.offset, p.code);
    for (size_t k = 0; k < skip_words; ++k) ps.expect_name();
    return ps;
  }
  static NodePtr node(Node::Kind kind, size_t offset) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->offset = offset;
    return n;
  }
  // The node of a statement that names its targets first ({% for x ... %}, {% set x ... %}), and the
  // statement's parser past the keyword and the first name (which the node holds).
  std::pair<NodePtr, Parser> targets_statement(Node::Kind kind) {
    Parser ps = parser(pieces_[p_], 1);
    NodePtr n = node(kind, pieces_[p_].offset);
    n->names.push_back(ps.expect_name());
    return {std::move(n), std::move(ps)};
  }
  // A statement that is its keyword alone ({% else %}, {% endif %}, {% endfor %}): checked and passed.
  void bare_statement() {
    parser(pieces_[p_], 1).expect_end();
    ++p_;
  }
  // Statements up to one whose first word is in `until` (left for the caller) or the end.
  NodePtr body(const std::vector<std::string>& until) {
    // Blocks nest at most 256 deep (a hostile template cannot exhaust the stack).
    struct Nesting {
      explicit Nesting(int& d) : d_(d) { ++d_; }
      ~Nesting() { --d_; }
      int& d_;
    } guard(depth_);
    if (depth_ > 256 && p_ < pieces_.size()) src_.fail(pieces_[p_].offset, "blocks nested more than 256 deep");
    auto b = std::make_unique<Node>();
    while (p_ < pieces_.size()) {
      const Piece& pc = pieces_[p_];
      if (pc.kind == Piece::Kind::text) {
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::text;
        n->text = pc.code;
        b->children.push_back(std::move(n));
        ++p_;
        continue;
      }
      if (pc.kind == Piece::Kind::output) {
        NodePtr n = node(Node::Kind::output, pc.offset);
        Parser ps = parser(pc, 0);
        n->exprs.push_back(ps.expression());
        ps.expect_end();
        b->children.push_back(std::move(n));
        ++p_;
        continue;
      }
      const std::string word = head(pc);
      if (std::find(until.begin(), until.end(), word) != until.end()) return b;
      if (word == "if") {
        b->children.push_back(branch());
      } else if (word == "for") {
        b->children.push_back(loop());
      } else if (word == "set") {
        b->children.push_back(assignment());
      } else {
        src_.fail(pc.offset, "unsupported statement '{% " + word + " %}'" +
                                 (until.empty() ? "" : " (expected '" + until.back() + "')"));
      }
    }
    if (!until.empty()) src_.fail(src_.text.size(), "the template ends before '{% " + until.back() + " %}'");
    return b;
  }
  NodePtr branch() {
    NodePtr n = node(Node::Kind::branch, pieces_[p_].offset);
    for (;;) {
      const Piece& pc = pieces_[p_];
      const std::string word = head(pc);
      if (word == "if" || word == "elif") {
        Parser ps = parser(pc, 1);
        n->exprs.push_back(ps.expression());
        ps.expect_end();
        ++p_;
        n->children.push_back(body({"elif", "else", "endif"}));
      } else if (word == "else") {
        bare_statement();
        n->children.push_back(body({"endif"}));
      } else {  // endif
        bare_statement();
        return n;
      }
    }
  }
  NodePtr loop() {
    auto [n, ps] = targets_statement(Node::Kind::loop);
    while (ps.accept_op(",")) n->names.push_back(ps.expect_name());
    if (!ps.accept_name("in")) ps.fail("expected 'in'");
    // `for m in xs if cond` parses as the conditional `xs if cond` (no else): that is a loop filter.
    ExprPtr seq = ps.expression();
    if (seq->kind == Expr::Kind::cond && seq->args.size() == 2) {
      n->exprs.push_back(std::move(seq->args[0]));
      n->exprs.push_back(std::move(seq->args[1]));
      n->loop_filter = true;
    } else {
      n->exprs.push_back(std::move(seq));
    }
    if (ps.accept_name("recursive")) ps.fail("recursive loops are not supported");
    ps.expect_end();
    ++p_;
    n->children.push_back(body({"else", "endfor"}));
    if (head(pieces_[p_]) == "else") {
      bare_statement();
      n->children.push_back(body({"endfor"}));
    }
    bare_statement();
    return std::move(n);  // a structured binding is not moved on return by itself
  }
  NodePtr assignment() {
    auto [n, ps] = targets_statement(Node::Kind::set);
    if (ps.accept_op(".")) n->names.push_back(ps.expect_name());
    if (ps.peek().kind == Token::Kind::op && ps.peek().text == ",") ps.fail("assignments to several names are not supported");
    if (!ps.accept_op("=")) ps.fail("block assignments ({% set x %}...{% endset %}) are not supported; expected '='");
    n->exprs.push_back(ps.expression());
    ps.expect_end();
    ++p_;
    return std::move(n);
  }

  const std::vector<Piece>& pieces_;
  const Source& src_;
  size_t p_ = 0;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------
class Renderer {
 public:
  Renderer(const std::string& text, std::map<std::string, Value> globals) : src_{text} {
    scopes_.push_back(std::move(globals));
  }

  void render(const Node& n, std::string& out) {
    switch (n.kind) {
      case Node::Kind::body:
        for (const auto& c : n.children) render(*c, out);
        return;
      case Node::Kind::text:
        out += n.text;
        check_size(out, n.offset);
        return;
      case Node::Kind::output:
        out += str(eval(*n.exprs[0], n.offset));
        check_size(out, n.offset);
        return;
      case Node::Kind::branch:
        for (size_t k = 0; k < n.exprs.size(); ++k) {
          if (truthy(eval(*n.exprs[k], n.offset))) return render(*n.children[k], out);
        }
        if (n.children.size() > n.exprs.size()) render(*n.children.back(), out);
        return;
      case Node::Kind::set: {
        Value v = eval(*n.exprs[0], n.offset);
        if (n.names.size() == 1) {
          scopes_.back()[n.names[0]] = std::move(v);
          return;
        }
        Value target = lookup(n.names[0]);
        if (!target.is(K::dict) || !target.is_namespace)
          fail(n.offset, "'" + n.names[0] + "' is not a namespace (set " + n.names[0] + "." + n.names[1] + ")");
        for (auto& kv : *target.m)
          if (kv.first == n.names[1]) {
            kv.second = std::move(v);
            return;
          }
        target.m->emplace_back(n.names[1], std::move(v));
        return;
      }
      case Node::Kind::loop: return loop(n, out);
    }
  }

 private:
  [[noreturn]] void fail(size_t offset, const std::string& what) const { src_.fail(offset, what); }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return f->second;
    }
    return Value{};
  }

  void loop(const Node& n, std::string& out) {
    const Value seq = eval(*n.exprs[0], n.offset);
    List items;
    if (seq.is(K::list)) {
      items = *seq.l;
    } else if (seq.is(K::dict)) {
      for (const auto& kv : *seq.m) items.push_back(Value::string(kv.first));
    } else if (seq.is(K::string)) {
      for (std::string& c : utf8_chars(seq.s)) items.push_back(Value::string(std::move(c)));
    } else if (!seq.is(K::undefined)) {
      fail(n.offset, "cannot loop over " + str(seq, true));
    }
    auto bind = [&](std::map<std::string, Value>& scope, const Value& item) {
      if (n.names.size() == 1) {
        scope[n.names[0]] = item;
        return;
      }
      if (!item.is(K::list) || item.l->size() != n.names.size())
        fail(n.offset, "cannot unpack " + str(item, true) + " into " + std::to_string(n.names.size()) + " names");
      for (size_t k = 0; k < n.names.size(); ++k) scope[n.names[k]] = (*item.l)[k];
    };
    if (n.loop_filter) {
      List kept;
      for (const Value& item : items) {
        scopes_.emplace_back();
        bind(scopes_.back(), item);
        const bool keep = truthy(eval(*n.exprs[1], n.offset));
        scopes_.pop_back();
        if (keep) kept.push_back(item);
      }
      items = std::move(kept);
    }
    const int64_t len = static_cast<int64_t>(items.size());
    for (int64_t k = 0; k < len; ++k) {
      if (++iterations_ > kMaxIterations) fail(n.offset, "more than 10^6 loop iterations");
      scopes_.emplace_back();
      bind(scopes_.back(), items[static_cast<size_t>(k)]);
      scopes_.back()["loop"] = Value::dict({{"index", Value::integer(k + 1)},
                                            {"index0", Value::integer(k)},
                                            {"first", Value::boolean(k == 0)},
                                            {"last", Value::boolean(k == len - 1)},
                                            {"length", Value::integer(len)},
                                            {"revindex", Value::integer(len - k)},
                                            {"revindex0", Value::integer(len - k - 1)},
                                            {"depth", Value::integer(1)},
                                            {"depth0", Value::integer(0)}});
      if (k > 0) scopes_.back()["loop"].m->emplace_back("previtem", items[static_cast<size_t>(k - 1)]);
      if (k + 1 < len) scopes_.back()["loop"].m->emplace_back("nextitem", items[static_cast<size_t>(k + 1)]);
      render(*n.children[0], out);
      scopes_.pop_back();
    }
    if (len == 0 && n.children.size() > 1) render(*n.children[1], out);
  }

  Value attribute(const Value& obj, const std::string& name, size_t offset) const {
    if (obj.is(K::undefined)) fail(offset, "an undefined value has no attribute '" + name + "'");
    if (const Value* v = obj.find(name)) return *v;
    return Value{};
  }

  static int64_t clamp_index(int64_t k, int64_t n) {
    if (k < 0) k += n;
    return std::max<int64_t>(0, std::min(k, n));
  }

  Value item(const Value& obj, const Value& key, size_t offset) const {
    if (obj.is(K::dict)) {
      if (!key.is(K::string)) return Value{};
      const Value* v = obj.find(key.s);
      return v ? *v : Value{};
    }
    if (obj.is(K::list) || obj.is(K::string)) {
      if (!key.is(K::integer)) fail(offset, "an index must be an integer, got " + str(key, true));
      const std::vector<std::string> chars = obj.is(K::string) ? utf8_chars(obj.s) : std::vector<std::string>{};
      const int64_t n = obj.is(K::list) ? static_cast<int64_t>(obj.l->size()) : static_cast<int64_t>(chars.size());
      const int64_t k = key.i < 0 ? key.i + n : key.i;
      if (k < 0 || k >= n) return Value{};
      return obj.is(K::list) ? (*obj.l)[static_cast<size_t>(k)] : Value::string(chars[static_cast<size_t>(k)]);
    }
    if (obj.is(K::undefined)) fail(offset, "an undefined value has no item " + str(key, true));
    return Value{};
  }

  Value call_method(const Value& obj, const std::string& name, const std::vector<Value>& args, size_t offset) const {
    auto arg = [&](size_t k) -> const Value& {
      if (k >= args.size()) fail(offset, "'" + name + "' needs " + std::to_string(k + 1) + " argument(s)");
      return args[k];
    };
    if (obj.is(K::string)) {
      const std::string& s = obj.s;
      auto strip = [&](bool left, bool right) {
        const std::string chars = args.empty() || args[0].is(K::none) ? std::string(" \t\n\r\f\v") : arg(0).s;
        size_t a = 0, b = s.size();
        if (left) while (a < b && chars.find(s[a]) != std::string::npos) ++a;
        if (right) while (b > a && chars.find(s[b - 1]) != std::string::npos) --b;
        return Value::string(s.substr(a, b - a));
      };
      if (name == "strip") return strip(true, true);
      if (name == "lstrip") return strip(true, false);
      if (name == "rstrip") return strip(false, true);
      if (name == "startswith") return Value::boolean(s.compare(0, arg(0).s.size(), arg(0).s) == 0);
      if (name == "endswith")
        return Value::boolean(s.size() >= arg(0).s.size() && s.compare(s.size() - arg(0).s.size(), arg(0).s.size(), arg(0).s) == 0);
      if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") return string_case(s, name);
      if (name == "replace") {
        const std::string& from = arg(0).s;
        const std::string& to = arg(1).s;
        if (from.empty()) fail(offset, "replace of an empty string");
        std::string r;
        size_t p = 0;
        for (size_t q; (q = s.find(from, p)) != std::string::npos; p = q + from.size()) r += s.substr(p, q - p) + to;
        return Value::string(r + s.substr(p));
      }
      if (name == "split") {
        List parts;
        if (args.empty() || args[0].is(K::none)) {
          size_t p = 0;
          while (p < s.size()) {
            while (p < s.size() && is_space(s[p])) ++p;
            size_t q = p;
            while (q < s.size() && !is_space(s[q])) ++q;
            if (q > p) parts.push_back(Value::string(s.substr(p, q - p)));
            p = q;
          }
        } else {
          const std::string& sep = arg(0).s;
          if (sep.empty()) fail(offset, "split by an empty separator");
          size_t p = 0;
          for (size_t q; (q = s.find(sep, p)) != std::string::npos; p = q + sep.size()) parts.push_back(Value::string(s.substr(p, q - p)));
          parts.push_back(Value::string(s.substr(p)));
        }
        return Value::list(std::move(parts));
      }
    }
    if (obj.is(K::dict)) {
      if (name == "items") {
        List l;
        for (const auto& kv : *obj.m) l.push_back(Value::list({Value::string(kv.first), kv.second}));
        return Value::list(std::move(l));
      }
      if (name == "keys" || name == "values") {
        List l;
        for (const auto& kv : *obj.m) l.push_back(name == "keys" ? Value::string(kv.first) : kv.second);
        return Value::list(std::move(l));
      }
      if (name == "get") {
        const Value* v = arg(0).is(K::string) ? obj.find(arg(0).s) : nullptr;
        return v ? *v : args.size() > 1 ? args[1] : Value::none();
      }
    }
    fail(offset, "unsupported method '" + name + "' of " + str(obj, true));
  }

  static Value string_case(const std::string& s, const std::string& how) {
    std::string r;
    bool start = true, first = true;
    for (const std::string& ch : utf8_chars(s)) {
      const int64_t c = code_point(ch);
      if (c < 0) {
        r += ch;
        start = true;
        first = false;
        continue;
      }
      const uint32_t u = static_cast<uint32_t>(c);
      const bool up = how == "upper" || (((how == "title" || how == "title_filter") && start) || (how == "capitalize" && first));
      const uint32_t out = change_case(u, up);
      if (up && u == 0xDF) r += how == "upper" ? "SS" : "Ss";  // ß
      else r += out == u ? ch : encode_utf8(out);
      // A cased letter is one that has another case (or an ASCII letter).
      const bool letter = (u < 0x80 && std::isalpha(static_cast<int>(u))) || change_case(u, true) != u || change_case(u, false) != u;
      // str.title: a word starts after any non-letter; Jinja's title filter: after - ( { [ < or a space.
      start = how == "title_filter" ? (u == '-' || u == '(' || u == '{' || u == '[' || u == '<' || (u < 0x80 && is_space(static_cast<char>(u))))
                                    : !letter;
      first = false;
    }
    return Value::string(r);
  }

  Value filter(const std::string& name, const Value& v, const std::vector<Value>& args,
               const std::vector<std::string>& kw, size_t offset) const {
    auto kwarg = [&](const std::string& key, size_t position) -> const Value* {
      const size_t positional = args.size() - kw.size();
      for (size_t k = 0; k < kw.size(); ++k)
        if (kw[k] == key) return &args[positional + k];
      return position < positional ? &args[position] : nullptr;
    };
    if (name == "trim") {
      const Value* chars = kwarg("chars", 0);
      return call_method(v.is(K::string) ? v : Value::string(str(v)), "strip", chars ? std::vector<Value>{*chars} : std::vector<Value>{}, offset);
    }
    if (name == "length" || name == "count") {
      if (v.is(K::string)) return Value::integer(static_cast<int64_t>(utf8_chars(v.s).size()));
      if (v.is(K::list)) return Value::integer(static_cast<int64_t>(v.l->size()));
      if (v.is(K::dict)) return Value::integer(static_cast<int64_t>(v.m->size()));
      if (v.is(K::undefined)) return Value::integer(0);
      fail(offset, "length of " + str(v, true));
    }
    if (name == "upper" || name == "lower" || name == "capitalize") return string_case(str(v), name);
    if (name == "title") return string_case(str(v), "title_filter");
    if (name == "string") return Value::string(str(v));
    if (name == "safe") return v;
    if (name == "tojson") {
      const Value* ind = kwarg("indent", 0);
      std::string out;
      to_json(v, ind && ind->is(K::integer) ? static_cast<int>(ind->i) : -1, 0, out);
      return Value::string(out);
    }
    if (name == "join") {
      const Value* sep = kwarg("d", 0);
      std::string out;
      if (v.is(K::string)) {
        const auto chars = utf8_chars(v.s);
        for (size_t k = 0; k < chars.size(); ++k) out += (k && sep ? str(*sep) : "") + chars[k];
        return Value::string(out);
      }
      if (!v.is(K::list)) fail(offset, "join of " + str(v, true));
      for (size_t k = 0; k < v.l->size(); ++k) out += (k && sep ? str(*sep) : "") + str((*v.l)[k]);
      return Value::string(out);
    }
    if (name == "first" || name == "last") {
      if (v.is(K::list)) return v.l->empty() ? Value{} : name == "first" ? v.l->front() : v.l->back();
      if (v.is(K::string)) {
        const auto chars = utf8_chars(v.s);
        return chars.empty() ? Value{} : Value::string(name == "first" ? chars.front() : chars.back());
      }
      fail(offset, name + " of " + str(v, true));
    }
    if (name == "default" || name == "d") {
      const Value* fallback = kwarg("default_value", 0);
      const Value* boolean = kwarg("boolean", 1);
      const bool use = v.is(K::undefined) || (boolean && truthy(*boolean) && !truthy(v));
      return use ? (fallback ? *fallback : Value::string("")) : v;
    }
    if (name == "reverse") {
      if (v.is(K::string)) {
        const auto chars = utf8_chars(v.s);
        std::string r;
        for (auto it = chars.rbegin(); it != chars.rend(); ++it) r += *it;
        return Value::string(r);
      }
      if (v.is(K::list)) return Value::list(List(v.l->rbegin(), v.l->rend()));
      fail(offset, "reverse of " + str(v, true));
    }
    if (name == "list") {
      if (v.is(K::list)) return v;
      if (v.is(K::dict)) return call_method(v, "keys", {}, offset);
      if (v.is(K::string)) {
        List l;
        for (std::string& c : utf8_chars(v.s)) l.push_back(Value::string(std::move(c)));
        return Value::list(std::move(l));
      }
      fail(offset, "list of " + str(v, true));
    }
    if (name == "items") return call_method(v, "items", {}, offset);
    if (name == "selectattr" || name == "rejectattr") {
      // xs | selectattr('attr'[, 'test'[, arg]]): the items whose attribute passes the test (truthy
      // without one); rejectattr keeps the others.
      if (v.is(K::undefined)) return Value::list();
      if (!v.is(K::list)) fail(offset, name + " of " + str(v, true));
      if (args.empty() || !args[0].is(K::string)) fail(offset, name + " needs an attribute name");
      const std::string how = args.size() > 1 ? (args[1].is(K::string) ? args[1].s : std::string("?")) : "";
      const bool eq = how == "equalto" || how == "eq" || how == "==", ne = how == "ne" || how == "!=";
      if (!how.empty() && !eq && !ne && !known_test(how)) fail(offset, name + " with unsupported test " + str(args[1], true));
      if ((eq || ne) && args.size() < 3) fail(offset, name + " with '" + how + "' needs a value to compare");
      List kept;
      for (const Value& x : *v.l) {
        const Value* a = x.find(args[0].s);
        const Value attr = a ? *a : Value{};
        const bool pass = how.empty() ? truthy(attr) : eq ? equal(attr, args[2]) : ne ? !equal(attr, args[2]) : test(how, attr, offset);
        if (pass == (name == "selectattr")) kept.push_back(x);
      }
      return Value::list(std::move(kept));
    }
    if (name == "replace") {
      if (args.size() - kw.size() < 2) fail(offset, "replace needs two arguments");
      return call_method(v.is(K::string) ? v : Value::string(str(v)), "replace", {args[0], args[1]}, offset);
    }
    fail(offset, "unsupported filter '" + name + "'");
  }

  bool test(const std::string& name, const Value& v, size_t offset) const {
    if (name == "defined") return !v.is(K::undefined);
    if (name == "undefined") return v.is(K::undefined);
    if (name == "none") return v.is(K::none);
    if (name == "string") return v.is(K::string);
    if (name == "mapping") return v.is(K::dict);
    if (name == "iterable") return v.is(K::list) || v.is(K::dict) || v.is(K::string);
    if (name == "sequence") return v.is(K::list) || v.is(K::string) || v.is(K::dict);
    if (name == "number") return v.is(K::integer) || v.is(K::number);
    if (name == "integer") return v.is(K::integer);
    if (name == "float") return v.is(K::number);
    if (name == "boolean") return v.is(K::boolean);
    if (name == "true") return v.is(K::boolean) && v.b;
    if (name == "false") return v.is(K::boolean) && !v.b;
    fail(offset, "unsupported test 'is " + name + "'");
  }

  Value arithmetic(const std::string& op, const Value& a, const Value& b, size_t offset) const {
    if (op == "+") {
      if (a.is(K::string) && b.is(K::string)) return Value::string(a.s + b.s);
      if (a.is(K::list) && b.is(K::list)) {
        List l = *a.l;
        l.insert(l.end(), b.l->begin(), b.l->end());
        return Value::list(std::move(l));
      }
    }
    if (op == "*" && a.is(K::string) && b.is(K::integer)) {
      if (b.i > 0 && a.s.size() * static_cast<uint64_t>(std::min<int64_t>(b.i, int64_t{1} << 40)) > (size_t{1} << 26))
        fail(offset, "a repeated text of more than 64 MiB");
      std::string r;
      for (int64_t k = 0; k < b.i; ++k) r += a.s;
      return Value::string(r);
    }
    if (!a.numeric() || !b.numeric())
      fail(offset, "cannot apply '" + op + "' to " + str(a, true) + " and " + str(b, true));
    const bool ints = !a.is(K::number) && !b.is(K::number);
    const int64_t x = a.is(K::boolean) ? a.b : a.i, y = b.is(K::boolean) ? b.b : b.i;
    if (op == "**") {
      if (ints && y >= 0) {
        if (x == 0 || x == 1) return Value::integer(y == 0 ? 1 : x);
        if (x == -1) return Value::integer(y % 2 ? -1 : 1);
        int64_t r = 1;  // |x| >= 2: at most 63 steps before the overflow check fails
        for (int64_t k = 0; k < y; ++k)
          if (__builtin_mul_overflow(r, x, &r)) fail(offset, "an integer beyond 64 bits");
        return Value::integer(r);
      }
      // A negative integer power is 1 / x^n in one rounding (exact when x^n < 2^53). Powers of
      // floats would go through the C library's pow, whose last digit differs between libraries,
      // and so would the prompt text: refused.
      if (ints && x != 0 && y >= -52) {
        int64_t r = 1;
        for (int64_t k = 0; k < -y; ++k)
          if (__builtin_mul_overflow(r, x, &r) || r > (int64_t{1} << 53) || r < -(int64_t{1} << 53))
            fail(offset, "an integer power past 2^53 (its reciprocal would not be exact)");
        return Value::number(1.0 / static_cast<double>(r));
      }
      fail(offset, "'**' of " + str(a, true) + " and " + str(b, true) +
                       " is not supported (integer powers only, exponents from -52 up: a float power depends on the C library)");
    }
    if (op == "/") {
      if (b.as_double() == 0) fail(offset, "division by zero");
      return Value::number(a.as_double() / b.as_double());
    }
    if (ints) {
      int64_t sum = 0;
      if ((op == "+" && __builtin_add_overflow(x, y, &sum)) || (op == "-" && __builtin_sub_overflow(x, y, &sum)) ||
          (op == "*" && __builtin_mul_overflow(x, y, &sum)))
        fail(offset, "an integer beyond 64 bits");
      if (op == "+" || op == "-" || op == "*") return Value::integer(sum);
      if (y == -1 && x == INT64_MIN) fail(offset, "an integer beyond 64 bits");
      if (y == 0) fail(offset, "division by zero");
      int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {  // Python's floor division and modulo
        --q;
        r += y;
      }
      return Value::integer(op == "//" ? q : r);
    }
    const double p = a.as_double(), q = b.as_double();
    if (op == "+") return Value::number(p + q);
    if (op == "-") return Value::number(p - q);
    if (op == "*") return Value::number(p * q);
    if (q == 0) fail(offset, "division by zero");
    if (op == "//") return Value::number(std::floor(p / q));
    return Value::number(p - q * std::floor(p / q));
  }

  // ==, !=, in, not in, <, >, <=, >= of two values.
  Value compare_values(const std::string& op, const Value& a, const Value& b, size_t offset) const {
    if (op == "==") return Value::boolean(equal(a, b));
    if (op == "!=") return Value::boolean(!equal(a, b));
    if (op == "in" || op == "not in") {
      bool found = false;
      if (b.is(K::string)) {
        if (!a.is(K::string)) fail(offset, "'in <string>' needs a string on the left");
        found = b.s.find(a.s) != std::string::npos;
      } else if (b.is(K::list)) {
        for (const Value& x : *b.l) found = found || equal(a, x);
      } else if (b.is(K::dict)) {
        found = a.is(K::string) && b.find(a.s) != nullptr;
      } else if (!b.is(K::undefined)) {
        fail(offset, "'in' needs a string, list or dict on the right");
      }
      return Value::boolean(found == (op == "in"));
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      int c = 0;
      if (a.numeric() && b.numeric()) c = a.as_double() < b.as_double() ? -1 : a.as_double() > b.as_double() ? 1 : 0;
      else if (a.is(K::string) && b.is(K::string)) c = a.s.compare(b.s) < 0 ? -1 : a.s.compare(b.s) > 0 ? 1 : 0;
      else fail(offset, "cannot compare " + str(a, true) + " and " + str(b, true));
      return Value::boolean(op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0);
    }
    fail(offset, "unknown comparison '" + op + "'");
  }

  Value eval(const Expr& e, size_t offset) {
    switch (e.kind) {
      case Expr::Kind::literal: return e.value;
      case Expr::Kind::name: return lookup(e.name);
      case Expr::Kind::attr: return attribute(eval(*e.args[0], offset), e.name, offset);
      case Expr::Kind::item: return item(eval(*e.args[0], offset), eval(*e.args[1], offset), offset);
      case Expr::Kind::slice: {  // Python's slice: [lo:hi:step], bounds clipped, negative from the end
        const Value obj = eval(*e.args[0], offset);
        const bool is_list = obj.is(K::list);
        if (!is_list && !obj.is(K::string)) fail(offset, "cannot slice " + str(obj, true));
        const std::vector<std::string> chars = is_list ? std::vector<std::string>{} : utf8_chars(obj.s);
        const int64_t n = is_list ? static_cast<int64_t>(obj.l->size()) : static_cast<int64_t>(chars.size());
        auto number = [&](const ExprPtr& x) -> std::optional<int64_t> {
          if (!x) return std::nullopt;
          const Value v = eval(*x, offset);
          if (v.is(K::none)) return std::nullopt;
          if (!v.is(K::integer)) fail(offset, "a slice bound must be an integer");
          return v.i;
        };
        const int64_t step = number(e.args[3]).value_or(1);
        if (step == 0) fail(offset, "a slice step cannot be zero");
        auto bound = [&](std::optional<int64_t> x, bool is_lo) {
          if (!x) return step > 0 ? (is_lo ? int64_t{0} : n) : (is_lo ? n - 1 : int64_t{-1});
          int64_t k = *x < 0 ? *x + n : *x;
          if (step > 0) return std::max<int64_t>(0, std::min(k, n));
          return std::max<int64_t>(-1, std::min(k, n - 1));
        };
        const int64_t lo = bound(number(e.args[1]), true), hi = bound(number(e.args[2]), false);
        List l;
        std::string r;
        for (int64_t k = lo; step > 0 ? k < hi : k > hi; k += step) {
          if (is_list) l.push_back((*obj.l)[static_cast<size_t>(k)]);
          else r += chars[static_cast<size_t>(k)];
        }
        return is_list ? Value::list(std::move(l)) : Value::string(r);
      }
      case Expr::Kind::call: {
        std::vector<Value> args;
        for (size_t k = 1; k < e.args.size(); ++k) args.push_back(eval(*e.args[k], offset));
        const Expr& callee = *e.args[0];
        if (callee.kind == Expr::Kind::attr) return call_method(eval(*callee.args[0], offset), callee.name, args, offset);
        if (callee.kind == Expr::Kind::name) {
          if (callee.name == "raise_exception")
            throw Error("chat template: " + (args.empty() ? std::string("raise_exception") : str(args[0])));
          if (callee.name == "namespace") {
            const size_t positional = args.size() - e.kwnames.size();
            if (positional != 0) fail(offset, "namespace() takes keyword arguments");
            Value ns = Value::dict();
            ns.is_namespace = true;
            for (size_t k = 0; k < e.kwnames.size(); ++k) ns.m->emplace_back(e.kwnames[k], args[k]);
            return ns;
          }
          if (callee.name == "range") {
            if (args.empty() || args.size() > 2 || !args[0].is(K::integer) || (args.size() == 2 && !args[1].is(K::integer)))
              fail(offset, "range() takes one or two integers");
            const int64_t lo = args.size() == 2 ? args[0].i : 0, hi = args.size() == 2 ? args[1].i : args[0].i;
            if (hi - lo > (int64_t{1} << 20)) fail(offset, "range() of more than 2^20 values");
            List l;
            for (int64_t k = lo; k < hi; ++k) l.push_back(Value::integer(k));
            return Value::list(std::move(l));
          }
          fail(offset, "unknown function '" + callee.name + "'");
        }
        fail(offset, "this value cannot be called");
      }
      case Expr::Kind::filter: {
        std::vector<Value> args;
        for (size_t k = 1; k < e.args.size(); ++k) args.push_back(eval(*e.args[k], offset));
        return filter(e.name, eval(*e.args[0], offset), args, e.kwnames, offset);
      }
      case Expr::Kind::test: return Value::boolean(test(e.name, eval(*e.args[0], offset), offset) != e.negate);
      case Expr::Kind::unary: {
        const Value v = eval(*e.args[0], offset);
        if (e.name == "not") return Value::boolean(!truthy(v));
        if (v.is(K::integer)) {
          if (v.i == INT64_MIN) fail(offset, "an integer beyond 64 bits");
          return Value::integer(-v.i);
        }
        if (v.is(K::number)) return Value::number(-v.d);
        fail(offset, "cannot negate " + str(v, true));
      }
      case Expr::Kind::binary: {
        const std::string& op = e.name;
        if (op == "compare") {  // a chain of comparisons
          Value left = eval(*e.args[0], offset);
          for (size_t k = 0; k < e.kwnames.size(); ++k) {
            Value right = eval(*e.args[k + 1], offset);
            if (!truthy(compare_values(e.kwnames[k], left, right, offset))) return Value::boolean(false);
            left = std::move(right);
          }
          return Value::boolean(true);
        }
        if (op == "and") {
          Value a = eval(*e.args[0], offset);
          return truthy(a) ? eval(*e.args[1], offset) : a;
        }
        if (op == "or") {
          Value a = eval(*e.args[0], offset);
          return truthy(a) ? a : eval(*e.args[1], offset);
        }
        const Value a = eval(*e.args[0], offset), b = eval(*e.args[1], offset);
        if (op == "~") return Value::string(str(a) + str(b));
        if (op == "==" || op == "!=" || op == "in" || op == "not in" || op == "<" || op == ">" || op == "<=" || op == ">=")
          return compare_values(op, a, b, offset);
        return arithmetic(op, a, b, offset);
      }
      case Expr::Kind::cond: {
        if (truthy(eval(*e.args[1], offset))) return eval(*e.args[0], offset);
        return e.args.size() > 2 ? eval(*e.args[2], offset) : Value{};
      }
      case Expr::Kind::list: {
        List l;
        for (const auto& x : e.args) l.push_back(eval(*x, offset));
        return Value::list(std::move(l));
      }
      case Expr::Kind::dict: {
        Dict m;
        for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
          const Value key = eval(*e.args[k], offset);
          if (!key.is(K::string)) fail(offset, "a dict key must be a string");
          m.emplace_back(key.s, eval(*e.args[k + 1], offset));
        }
        return Value::dict(std::move(m));
      }
    }
    fail(offset, "unsupported expression");
  }

  // A rendering stops with an error past 256 MiB of text or 10^6 loop iterations (a hostile
  // template cannot take all memory or run for hours).
  static constexpr int64_t kMaxIterations = 1'000'000;
  void check_size(const std::string& out, size_t offset) const {
    if (out.size() > (size_t{1} << 28)) fail(offset, "the rendered text passes 256 MiB");
  }

  Source src_;
  std::vector<std::map<std::string, Value>> scopes_;
  int64_t iterations_ = 0;
};

using OJson = nlohmann::ordered_json;  // keeps object keys in their order, as Python's dicts

OJson parse_ordered(const std::string& text, const std::string& what) {
  try {
    return OJson::parse(text);
  } catch (const OJson::exception& e) {
    throw Error(what + ": not valid JSON (" + e.what() + ")");
  }
}

std::string dump(const OJson& j) { return j.dump(-1, ' ', false, OJson::error_handler_t::replace); }

// One OpenAI chat message as the template sees it (ChatTemplate::apply_json).
Value message_value(const OJson& m, const std::string& where) {
  if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) throw Error(where + " needs a text 'role'");
  const bool has_calls = m.contains("tool_calls") && !m["tool_calls"].is_null();
  Dict d;
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string& key = it.key();
    const OJson& v = it.value();
    if (key == "content") {
      if (v.is_string()) {
        d.emplace_back(key, Value::string(v.get<std::string>()));
      } else if (v.is_array()) {  // content parts: text only (the models bitlearn loads read text)
        std::string text;
        for (size_t k = 0; k < v.size(); ++k) {
          const OJson& part = v[k];
          const std::string at = where + ".content[" + std::to_string(k) + "]";
          if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
            throw Error(at + ": a content part must be an object with a text 'type'");
          const std::string type = part["type"].get<std::string>();
          if (type == "image_url" || type == "input_image" || type == "image")
            throw Error(at + ": an image part (\"" + type + "\"), but this model has no vision input (it reads text only)");
          if (type != "text" && type != "input_text")
            throw Error(at + ": content parts of type \"" + type + "\" are not supported (only \"text\" parts)");
          if (!part.contains("text") || !part["text"].is_string()) throw Error(at + ": a text part needs a text 'text'");
          text += part["text"].get<std::string>();
        }
        d.emplace_back(key, Value::string(text));
      } else if (v.is_null()) {
        d.emplace_back(key, has_calls ? Value::none() : Value::string(""));
      } else {
        throw Error(where + ": 'content' must be a text or a list of text parts");
      }
    } else if (key == "tool_calls" && !v.is_null()) {
      if (!v.is_array()) throw Error(where + ": 'tool_calls' must be a list");
      List calls;
      for (size_t k = 0; k < v.size(); ++k) {
        const std::string at = where + ".tool_calls[" + std::to_string(k) + "]";
        const OJson& call = v[k];
        if (!call.is_object() || !call.contains("function") || !call["function"].is_object() ||
            !call["function"].contains("name") || !call["function"]["name"].is_string())
          throw Error(at + " must be {\"id\": ..., \"type\": \"function\", \"function\": {\"name\": ..., \"arguments\": ...}}");
        Value c = from_json(call);
        // The wire format's arguments are JSON text; templates write them with tojson, as the
        // object transformers' examples pass.
        const OJson& args = call["function"].contains("arguments") ? call["function"]["arguments"] : OJson();
        if (args.is_string()) {
          const OJson parsed = OJson::parse(args.get<std::string>(), nullptr, false);
          if (!parsed.is_discarded() && parsed.is_object()) {
            for (auto& kv : *c.m)
              if (kv.first == "function")
                for (auto& f : *kv.second.m)
                  if (f.first == "arguments") f.second = from_json(parsed);
          }
        }
        calls.push_back(std::move(c));
      }
      d.emplace_back(key, Value::list(std::move(calls)));
    } else {
      d.emplace_back(key, from_json(v));
    }
  }
  if (!m.contains("content")) d.emplace_back("content", has_calls ? Value::none() : Value::string(""));
  return Value::dict(std::move(d));
}

// Whether `word` occurs in text as a whole name.
bool names(const std::string& text, const std::string& word) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t p = text.find(word); p != std::string::npos; p = text.find(word, p + 1))
    if ((p == 0 || !ident(text[p - 1])) && (p + word.size() >= text.size() || !ident(text[p + word.size()]))) return true;
  return false;
}

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && is_space(s[a])) ++a;
  while (b > a && is_space(s[b - 1])) --b;
  return s.substr(a, b - a);
}

std::string token_text(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content") && j["content"].is_string()) return j["content"].get<std::string>();
  return "";
}

}  // namespace

ChatTemplate ChatTemplate::from_text(const std::string& raw, const std::string& bos_token,
                                     const std::string& eos_token) {
  // As Jinja reads a template: \r\n and \r become \n, and one newline at the end is dropped
  // (keep_trailing_newline is off).
  std::string source;
  source.reserve(raw.size());
  for (size_t k = 0; k < raw.size(); ++k) {
    if (raw[k] == '\r') {
      source += '\n';
      if (k + 1 < raw.size() && raw[k + 1] == '\n') ++k;
    } else {
      source += raw[k];
    }
  }
  if (!source.empty() && source.back() == '\n') source.pop_back();
  const Source src{source};
  std::vector<Piece> pieces = cut(src);
  NodePtr root = Builder(pieces, src).build();
  ChatTemplate t;
  // The root holds the template text too (errors while rendering name lines).
  auto keep = std::make_shared<std::pair<std::string, NodePtr>>(source, std::move(root));
  t.root_ = std::shared_ptr<const ChatTemplateNode>(keep, keep->second.get());
  t.bos_ = bos_token;
  t.eos_ = eos_token;
  t.source_ = std::shared_ptr<const std::string>(keep, &keep->first);
  return t;
}

ChatTemplate ChatTemplate::from_model_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string config_path = dir + "/tokenizer_config.json";
  nlohmann::json config = nlohmann::json::object();
  if (fs::exists(config_path)) {
    try {
      config = nlohmann::json::parse(read_file_text(config_path, "tokenizer_config.json"));
    } catch (const nlohmann::json::exception& e) {
      throw Error(config_path + ": not valid JSON (" + e.what() + ")");
    }
    BL_CHECK(config.is_object(), config_path, ": expected a JSON object");
  }
  std::string text;
  const std::string jinja = dir + "/chat_template.jinja";
  if (fs::exists(jinja)) {
    text = read_file_text(jinja, "chat template");
  } else if (config.contains("chat_template") && config["chat_template"].is_string()) {
    text = config["chat_template"].get<std::string>();
  } else if (config.contains("chat_template") && config["chat_template"].is_array()) {
    for (const auto& t : config["chat_template"])
      if (t.is_object() && t.value("name", "") == "default" && t.contains("template") && t["template"].is_string())
        text = t["template"].get<std::string>();
    BL_CHECK(!text.empty(), config_path, ": chat_template is a list without a template named \"default\"");
  } else {
    throw Error(dir + ": the model has no chat template (no chat_template.jinja, no \"chat_template\" in tokenizer_config.json)");
  }
  try {
    return from_text(text, token_text(config.value("bos_token", nlohmann::json())),
                     token_text(config.value("eos_token", nlohmann::json())));
  } catch (const Error& e) {
    throw Error(dir + ": " + e.what());
  }
}

namespace {

std::string render(const std::shared_ptr<const ChatTemplateNode>& root, const std::string& source, Value messages,
                   std::optional<Value> tools, bool add_generation_prompt, const std::string& bos,
                   const std::string& eos) {
  BL_CHECK(root != nullptr, "chat template: not loaded");
  std::map<std::string, Value> globals;
  globals["messages"] = std::move(messages);
  if (tools) globals["tools"] = std::move(*tools);
  globals["add_generation_prompt"] = Value::boolean(add_generation_prompt);
  globals["bos_token"] = Value::string(bos);
  globals["eos_token"] = Value::string(eos);
  Renderer r(source, std::move(globals));
  std::string out;
  r.render(*root, out);
  return out;
}

}  // namespace

std::string ChatTemplate::apply_json(const std::string& messages_json, const std::string& tools_json,
                                     bool add_generation_prompt) const {
  const OJson list = parse_ordered(messages_json, "'messages'");
  if (!list.is_array() || list.empty()) throw Error("'messages' must be a non-empty list of {role, content}");
  List messages;
  for (size_t k = 0; k < list.size(); ++k) messages.push_back(message_value(list[k], "'messages'[" + std::to_string(k) + "]"));
  std::optional<Value> tools;
  if (!tools_json.empty()) {
    const OJson t = parse_ordered(tools_json, "'tools'");
    if (!t.is_array()) throw Error("'tools' must be a list of {\"type\": \"function\", \"function\": {...}}");
    for (size_t k = 0; k < t.size(); ++k) {
      const OJson& tool = t[k];
      if (!tool.is_object() || tool.value("type", "") != "function" || !tool.contains("function") ||
          !tool["function"].is_object() || !tool["function"].contains("name") || !tool["function"]["name"].is_string())
        throw Error("'tools'[" + std::to_string(k) + "] must be {\"type\": \"function\", \"function\": {\"name\": ..., \"parameters\": ...}}");
    }
    tools = from_json(t);
  }
  return render(root_, *source_, Value::list(std::move(messages)), std::move(tools), add_generation_prompt, bos_, eos_);
}

bool ChatTemplate::uses_tools() const { return source_ && names(*source_, "tools"); }

bool ChatTemplate::marks_tool_calls() const { return source_ && source_->find("<tool_call>") != std::string::npos; }

ChatReply parse_tool_calls(const std::string& generated) {
  static const std::string open = "<tool_call>", close = "</tool_call>";
  ChatReply plain;
  plain.content = generated;
  ChatReply r;
  std::string rest;
  size_t p = 0;
  for (size_t q; (q = generated.find(open, p)) != std::string::npos;) {
    rest += generated.substr(p, q - p);
    const size_t b = q + open.size();
    const size_t e = generated.find(close, b);
    const OJson call = OJson::parse(trim(generated.substr(b, e == std::string::npos ? std::string::npos : e - b)), nullptr, false);
    if (call.is_discarded() || !call.is_object() || !call.contains("name") || !call["name"].is_string()) return plain;
    const OJson args = call.contains("arguments") ? call["arguments"] : OJson::object();
    if (!args.is_object() && !args.is_string()) return plain;
    r.tool_calls.push_back({call["name"].get<std::string>(), args.is_string() ? args.get<std::string>() : dump(args)});
    p = e == std::string::npos ? generated.size() : e + close.size();
  }
  if (r.tool_calls.empty()) return plain;
  rest += generated.substr(std::min(p, generated.size()));
  r.content = trim(rest);
  r.has_content = !r.content.empty();
  return r;
}

std::string ChatTemplate::apply(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  List list;
  for (const ChatMessage& m : messages)
    list.push_back(Value::dict({{"role", Value::string(m.role)}, {"content", Value::string(m.content)}}));
  return render(root_, *source_, Value::list(std::move(list)), std::nullopt, add_generation_prompt, bos_, eos_);
}

}  // namespace bl::text
