// data.cpp: corpora, token files and batch windows of the language-model trainer (bitlearn/lm.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/lm.h"
#include "bitlearn/tokenizer.h"
#include "contract/rng.h"
#include "core/digest.h"
#include "core/error.h"
#include "io/json_number.h"

namespace bl::lm {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'B', 'L', 'T', 'O', 'K', 'E', 'N', '1'};
constexpr int64_t kMaxHeader = 1 << 16;

// The byte offset of the first invalid UTF-8 sequence of s, or -1.
int64_t invalid_utf8_offset(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return static_cast<int64_t>(i);
    if (i + len > n) return static_cast<int64_t>(i);
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return static_cast<int64_t>(i);
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return static_cast<int64_t>(i);
    i += len;
  }
  return -1;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> read_corpus(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  BL_CHECK(!ec && fs::exists(st), "lm data: '", path, "' does not exist");
  std::vector<std::string> files;
  if (fs::is_directory(st)) {
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::none, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!name.empty() && name[0] == '.') {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file()) files.push_back(it->path().string());
    }
    BL_CHECK(!ec, "lm data: cannot list '", path, "': ", ec.message());
    std::sort(files.begin(), files.end());
    BL_CHECK(!files.empty(), "lm data: the folder '", path, "' holds no text files");
  } else {
    files.push_back(path);
  }
  std::vector<std::pair<std::string, std::string>> out;
  int64_t total = 0;
  for (const std::string& f : files) {
    std::string text = read_file_text(f, "corpus file");
    const int64_t bad = invalid_utf8_offset(text);
    BL_CHECK(bad < 0, "lm data: '", f, "' is not UTF-8 text (invalid byte at offset ", bad, ")");
    total += static_cast<int64_t>(text.size());
    if (!text.empty()) out.emplace_back(f, std::move(text));
  }
  BL_CHECK(total > 0, "lm data: '", path, "' is empty");
  return out;
}

TokenFile TokenFile::open(const std::string& path) {
  const int fd = open_input_file(path, "token file", /*regular_only=*/true);
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) {
    ::close(fd);
    throw Error(detail::concat("token file: cannot stat '", path, "'"));
  }
  const int64_t size = static_cast<int64_t>(sb.st_size);
  if (size < 12) {
    ::close(fd);
    throw Error(detail::concat("token file: '", path, "' is truncated (", size, " bytes)"));
  }
  void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  BL_CHECK(p != MAP_FAILED, "token file: cannot map '", path, "'");
  TokenFile t;
  t.map_ = std::shared_ptr<void>(p, [size](void* q) { ::munmap(q, static_cast<size_t>(size)); });
  t.path_ = path;
  const auto* b = static_cast<const uint8_t*>(p);
  BL_CHECK(std::memcmp(b, kMagic, 8) == 0, "token file: '", path, "' is not a bitlearn token file (bad magic)");
  uint32_t hlen = 0;
  std::memcpy(&hlen, b + 8, 4);
  BL_CHECK(hlen > 0 && hlen <= kMaxHeader && 12 + static_cast<int64_t>(hlen) <= size, "token file: '", path,
           "' has a header of ", hlen, " bytes, beyond the file");
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(b + 12), hlen));
    t.count_ = io::json_integer<int64_t>(h.at("count"), "token file header count");
    t.width_ = io::json_integer<int64_t>(h.at("width"), "token file header width");
    t.vocab_ = io::json_integer<int64_t>(h.at("vocab_size"), "token file header vocab_size");
    t.corpus_sha_ = h.at("corpus_sha256").get<std::string>();
    t.tokenizer_sha_ = h.at("tokenizer_sha256").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(detail::concat("token file: '", path, "' has a malformed header: ", e.what()));
  }
  const int64_t data_at = (12 + static_cast<int64_t>(hlen) + 7) / 8 * 8;
  BL_CHECK(t.width_ == 2 || t.width_ == 4, "token file: '", path, "' has token width ", t.width_);
  BL_CHECK(t.count_ >= 0 && t.count_ <= (size - data_at) / t.width_ && data_at + t.count_ * t.width_ == size,
           "token file: '", path, "' is truncated or padded: header says ", t.count_, " tokens");
  t.data_ = b + data_at;
  // A body corrupted behind an intact header would feed ids beyond the vocabulary to the model.
  for (int64_t i = 0; i < t.count_; ++i) {
    uint32_t id = 0;
    if (t.width_ == 2) {
      uint16_t v;
      std::memcpy(&v, t.data_ + 2 * i, 2);
      id = v;
    } else {
      std::memcpy(&id, t.data_ + 4 * i, 4);
    }
    BL_CHECK(static_cast<int64_t>(id) < t.vocab_, "token file: '", path, "' is corrupt: token ", i, " is id ", id,
             ", beyond its vocabulary of ", t.vocab_);
  }
  return t;
}

int64_t TokenFile::at(int64_t i) const {
  BL_CHECK(i >= 0 && i < count_, "token file: index ", i, " out of [0, ", count_, ")");
  if (width_ == 2) {
    uint16_t v;
    std::memcpy(&v, data_ + 2 * i, 2);
    return v;
  }
  uint32_t v;
  std::memcpy(&v, data_ + 4 * i, 4);
  return v;
}

TokenFile prepare_tokens(const std::string& data_path, const text::Tokenizer& tok, const std::string& tok_sha,
                         const std::string& out_path) {
  const auto docs = read_corpus(data_path);
  Sha256 h;
  for (const auto& [name, text] : docs) {
    h.update_i64_le(static_cast<int64_t>(text.size()));
    h.update(text);
  }
  const std::string corpus_sha = h.finish_hex();
  std::error_code ec;
  if (fs::exists(out_path, ec)) {
    try {
      TokenFile t = TokenFile::open(out_path);
      if (t.corpus_sha256() == corpus_sha && t.tokenizer_sha256() == tok_sha) return t;
    } catch (const Error&) {
      // Rebuilt below.
    }
  }
  const std::optional<int32_t> eot = tok.token_to_id("<|endoftext|>");
  std::vector<int32_t> ids;
  for (size_t d = 0; d < docs.size(); ++d) {
    if (d > 0 && eot) ids.push_back(*eot);
    std::vector<int32_t> part = tok.encode(docs[d].second);
    ids.insert(ids.end(), part.begin(), part.end());
  }
  const int64_t vocab = tok.vocab_size();
  const int64_t width = vocab <= 65536 ? 2 : 4;
  nlohmann::ordered_json header;
  header["format"] = "bitlearn.tokens.v1";
  header["count"] = static_cast<int64_t>(ids.size());
  header["width"] = width;
  header["vocab_size"] = vocab;
  header["corpus_sha256"] = corpus_sha;
  header["tokenizer_sha256"] = tok_sha;
  header["documents"] = static_cast<int64_t>(docs.size());
  const std::string hs = header.dump();
  std::vector<uint8_t> bytes(kMagic, kMagic + 8);
  const uint32_t hlen = static_cast<uint32_t>(hs.size());
  bytes.resize(12);
  std::memcpy(bytes.data() + 8, &hlen, 4);
  bytes.insert(bytes.end(), hs.begin(), hs.end());
  bytes.resize((bytes.size() + 7) / 8 * 8, 0);
  const size_t at = bytes.size();
  bytes.resize(at + ids.size() * static_cast<size_t>(width));
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint32_t v = static_cast<uint32_t>(ids[i]);
    if (width == 2) {
      const uint16_t s = static_cast<uint16_t>(v);
      std::memcpy(bytes.data() + at + 2 * i, &s, 2);
    } else {
      std::memcpy(bytes.data() + at + 4 * i, &v, 4);
    }
  }
  write_file_atomic(out_path, bytes, "token file");
  return TokenFile::open(out_path);
}

std::vector<int64_t> window_starts(int64_t n, int64_t T, int64_t batch, int64_t step, Sampler sampler,
                                   uint64_t seed) {
  BL_CHECK(T >= 1 && n >= T + 1, "lm data: the token stream holds ", n, " tokens, fewer than one sequence of ",
           T, " + 1 (the corpus is too short for --seq-len ", T, ")");
  std::vector<int64_t> out(static_cast<size_t>(batch));
  const uint64_t span = static_cast<uint64_t>(n - T);  // starts 0 .. n - T - 1
  for (int64_t j = 0; j < batch; ++j) {
    if (sampler == Sampler::random) {
      const uint64_t lo = random_u32_element(seed, static_cast<uint64_t>(step), 2 * static_cast<uint64_t>(j));
      const uint64_t hi = random_u32_element(seed, static_cast<uint64_t>(step), 2 * static_cast<uint64_t>(j) + 1);
      const uint64_t u = (hi << 32) | lo;
      // floor(u * span / 2^64) with a 128-bit product: no modulo bias.
      out[static_cast<size_t>(j)] = static_cast<int64_t>((static_cast<unsigned __int128>(u) * span) >> 64);
    } else {
      const int64_t windows = (n - 1) / T;
      out[static_cast<size_t>(j)] = ((step * batch + j) % windows) * T;
    }
  }
  return out;
}

}  // namespace bl::lm
