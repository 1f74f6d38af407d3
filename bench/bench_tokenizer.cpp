// Encode throughput of the byte-level BPE tokenizer.
//
//   bench_tokenizer [--tokenizer=FILE] [--text=FILE] [--repeat=N] [Google Benchmark flags]
// Defaults: tests/data/hf/tokenizer.json and tests/data/text/train_corpus.txt repeated 16 times
// (run from the repository root). The summary prints MB/s for one encode of the whole text and for
// line-by-line encodes; scripts/bench_tokenizer.py runs this beside the tokenizers library.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/io.h"
#include "bitlearn/tokenizer.h"

namespace {

std::string g_tokenizer = "tests/data/hf/tokenizer.json";
std::string g_text_path = "tests/data/text/train_corpus.txt";
int g_repeat = 16;

struct Input {
  bl::text::Tokenizer tok;
  std::string text;
  std::vector<std::string> lines;
};

const Input& input() {
  static const Input in = [] {
    const std::string one = bl::read_file_text(g_text_path, "benchmark text");
    std::string text;
    for (int i = 0; i < g_repeat; ++i) text += one;
    std::vector<std::string> lines;
    size_t b = 0;
    while (b < text.size()) {
      size_t e = text.find('\n', b);
      e = e == std::string::npos ? text.size() : e + 1;
      lines.push_back(text.substr(b, e - b));
      b = e;
    }
    return Input{bl::text::Tokenizer::from_file(g_tokenizer), text, lines};
  }();
  return in;
}

void BM_encode_whole_text(benchmark::State& state) {
  const Input& in = input();
  for (auto _ : state) {
    auto ids = in.tok.encode(in.text);
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(in.text.size()));
}
BENCHMARK(BM_encode_whole_text)->Unit(benchmark::kMillisecond);

void BM_encode_lines(benchmark::State& state) {
  const Input& in = input();
  for (auto _ : state) {
    size_t n = 0;
    for (const auto& line : in.lines) n += in.tok.encode(line).size();
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(in.text.size()));
}
BENCHMARK(BM_encode_lines)->Unit(benchmark::kMillisecond);

template <class F>
double best_seconds(F f) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void print_summary() {
  const Input& in = input();
  size_t tokens = 0;
  const double whole = best_seconds([&] { tokens = in.tok.encode(in.text).size(); });
  const double lines = best_seconds([&] {
    for (const auto& line : in.lines) benchmark::DoNotOptimize(in.tok.encode(line).size());
  });
  const double mb = static_cast<double>(in.text.size()) / 1e6;
  std::printf("bitlearn_encode_whole_MBps %.3f\nbitlearn_encode_lines_MBps %.3f\nbytes %zu tokens %zu\n",
              mb / whole, mb / lines, in.text.size(), tokens);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--tokenizer=", 12) == 0) g_tokenizer = argv[i] + 12;
    else if (std::strncmp(argv[i], "--text=", 7) == 0) g_text_path = argv[i] + 7;
    else if (std::strncmp(argv[i], "--repeat=", 9) == 0) g_repeat = std::max(1, std::atoi(argv[i] + 9));
    else rest.push_back(argv[i]);
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_summary();
  return 0;
}
