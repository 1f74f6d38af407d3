// The CPU = GPU sweep: per-chunk SHA-256 of every function's outputs over all 2^32 inputs.
#include "sweep.h"

#include <openssl/evp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/fp_probe.h"
#include "core/thread_pool.h"
#include "inputs.h"
#include "kernels/math_map.h"
#if defined(BITLEARN_HAS_CUDA)
#include "sweep_device.h"
#endif

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the sweep hashes the output arrays' bytes as stored: little-endian hosts only");

namespace mathcheck {

namespace {

constexpr int64_t kChunk = int64_t{1} << kSweepChunkLog2;

std::string sha256_hex(const float* data, int64_t n) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  BL_CHECK(ctx != nullptr, "sweep: EVP_MD_CTX_new failed");
  bool ok = EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
            EVP_DigestUpdate(ctx, data, static_cast<size_t>(n) * sizeof(float)) == 1 &&
            EVP_DigestFinal_ex(ctx, md, &len) == 1;
  EVP_MD_CTX_free(ctx);
  BL_CHECK(ok, "sweep: SHA-256 computation failed");
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (unsigned int i = 0; i < len; ++i) {
    s += digits[md[i] >> 4];
    s += digits[md[i] & 15];
  }
  return s;
}

int g_max_chunks = 0;  // SweepOptions::max_chunks of the current run

int chunk_count(bl::MathFn fn) {
  const int full = fn == bl::MathFn::pow ? kPowSweepChunks : (1 << (32 - kSweepChunkLog2));
  return g_max_chunks > 0 && g_max_chunks < full ? g_max_chunks : full;
}

// Inputs of one chunk: consecutive bit patterns (unary) or the pow pair sample.
void fill_chunk(bl::MathFn fn, int chunk, float* x, float* y) {
  const uint64_t base = static_cast<uint64_t>(chunk) * kChunk;
  if (fn == bl::MathFn::pow) {
    for (int64_t k = 0; k < kChunk; ++k) pow_pair(base + k, kPowSweepSeed, &x[k], &y[k]);
  } else {
    for (int64_t k = 0; k < kChunk; ++k) x[k] = bl::float_of(static_cast<uint32_t>(base + k));
  }
}

using HashTable = std::map<std::string, std::map<int, std::string>>;  // name -> chunk -> hex
int g_chunk_step = 1;  // SweepOptions::chunk_step of the current run

// The chunks of fn this run evaluates.
std::vector<int> chunks_of(bl::MathFn fn);

std::vector<bl::MathFn> selected(const std::string& fn) {
  if (fn == "all") return bl::all_math_fns();
  return {bl::math_fn_from_name(fn)};
}

void sweep_cpu(const std::vector<bl::MathFn>& fns, int threads, HashTable& table) {
  // Work items: (unary chunk index with all unary functions) or (pow chunk).
  struct Item {
    bool pow;
    int chunk;
  };
  std::vector<Item> items;
  bool any_unary = false, any_pow = false;
  for (bl::MathFn f : fns) (f == bl::MathFn::pow ? any_pow : any_unary) = true;
  if (any_unary)
    for (int c : chunks_of(bl::MathFn::exp)) items.push_back({false, c});
  if (any_pow)
    for (int c : chunks_of(bl::MathFn::pow)) items.push_back({true, c});

  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::mutex mu;
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&]() {
    bl::ThreadPool pool(1);
    std::vector<float> x(kChunk), y(kChunk), out(kChunk);
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= items.size()) break;
      const Item it = items[i];
      for (bl::MathFn f : fns) {
        if ((f == bl::MathFn::pow) != it.pow) continue;
        fill_chunk(f, it.chunk, x.data(), y.data());
        if (it.pow)
          bl::math_map_cpu(f, x.data(), y.data(), out.data(), kChunk, pool);
        else
          bl::math_map_cpu(f, x.data(), out.data(), kChunk, pool);
        std::string h = sha256_hex(out.data(), kChunk);
        std::lock_guard<std::mutex> lock(mu);
        table[bl::math_fn_name(f)][it.chunk] = h;
      }
      const size_t d = done.fetch_add(1) + 1;
      if (d % 16 == 0 || d == items.size()) {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "sweep: %zu/%zu chunks, %.0f s\n", d, items.size(), s);
      }
    }
  };
  std::vector<std::thread> ts;
  for (int t = 1; t < threads; ++t) ts.emplace_back(worker);
  worker();
  for (auto& t : ts) t.join();
}

#if defined(BITLEARN_HAS_CUDA)
void sweep_cuda(const std::vector<bl::MathFn>& fns, int threads, HashTable& table) {
  CudaSweepDevice dev(kChunk);
  std::vector<float> x(kChunk), y(kChunk);
  std::vector<std::vector<float>> outs(fns.size(), std::vector<float>(kChunk));
  const auto t0 = std::chrono::steady_clock::now();
  const int max_chunks = 1 << (32 - kSweepChunkLog2);
  for (int c = 0; c < max_chunks; ++c) {
    // Unary functions share the chunk's inputs; pow has its own pair sample for c < 4.
    std::vector<size_t> active;
    for (size_t k = 0; k < fns.size(); ++k) {
      const std::vector<int> cs = chunks_of(fns[k]);
      for (int cc : cs)
        if (cc == c) active.push_back(k);
    }
    if (active.empty()) continue;
    bool uploaded_unary = false;
    for (size_t k : active) {
      if (fns[k] == bl::MathFn::pow) {
        fill_chunk(fns[k], c, x.data(), y.data());
        dev.set_inputs(x.data(), y.data(), kChunk);
        uploaded_unary = false;
      } else if (!uploaded_unary) {
        fill_chunk(fns[k], c, x.data(), nullptr);
        dev.set_inputs(x.data(), nullptr, kChunk);
        uploaded_unary = true;
      }
      dev.map(fns[k], outs[k].data());
    }
    // Hash the chunk's outputs on up to `threads` host threads.
    std::atomic<size_t> next{0};
    std::mutex mu;
    auto hasher = [&]() {
      for (;;) {
        const size_t i = next.fetch_add(1);
        if (i >= active.size()) break;
        const size_t k = active[i];
        std::string h = sha256_hex(outs[k].data(), kChunk);
        std::lock_guard<std::mutex> lock(mu);
        table[bl::math_fn_name(fns[k])][c] = h;
      }
    };
    std::vector<std::thread> ts;
    for (int t = 1; t < threads && t < static_cast<int>(active.size()); ++t) ts.emplace_back(hasher);
    hasher();
    for (auto& t : ts) t.join();
    if ((c + 1) % 32 == 0) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "sweep (cuda): %d/%d chunks, %.0f s\n", c + 1, max_chunks, s);
    }
  }
}
#endif

// SHA-256 of the reference map's outputs on 2^16 spread inputs (pairs for pow): a cheap
// identification of the math sources a hash file was made with.
std::string fingerprint(bl::MathFn f) {
  const int64_t n = 1 << 16;
  std::vector<float> x(n), y(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    if (f == bl::MathFn::pow) pow_pair(static_cast<uint64_t>(i), 7, &x[i], &y[i]);
    else x[i] = bl::float_of(spread_bits(static_cast<uint64_t>(i)));
  }
  bl::math_map_reference(f, x.data(), f == bl::MathFn::pow ? y.data() : nullptr, out.data(), n);
  return sha256_hex(out.data(), n);
}

void write_table(const SweepOptions& opts, const std::vector<bl::MathFn>& fns,
                 const HashTable& table, const std::string& device_desc) {
  std::ofstream out(opts.out_path);
  BL_CHECK(out.good(), "sweep: cannot open output file '", opts.out_path, "'");
  out << "# bitlearn math sweep v1: SHA-256 of each function's binary32 outputs (little-endian)\n"
      << "# per chunk of 2^" << kSweepChunkLog2 << " inputs. Unary functions: inputs are all 2^32 "
      << "bit patterns in ascending order (chunk c = patterns c*2^24 .. c*2^24+2^24-1).\n"
      << "# pow: " << kPowSweepChunks << " chunks of the checker's pseudo-random pair sample, seed "
      << kPowSweepSeed << ". Line format: <function> <chunk> <sha256>\n"
      << "# device: " << device_desc << "\n";
  if (!opts.note.empty()) out << "# note: " << opts.note << "\n";
  for (bl::MathFn f : fns)
    out << "fingerprint " << bl::math_fn_name(f) << " " << fingerprint(f) << "\n";
  for (bl::MathFn f : fns)
    for (const auto& kv : table.at(bl::math_fn_name(f)))
      out << bl::math_fn_name(f) << " " << kv.first << " " << kv.second << "\n";
  BL_CHECK(out.good(), "sweep: failed writing '", opts.out_path, "'");
}

HashTable read_table(const std::string& path, std::map<std::string, std::string>* prints) {
  std::ifstream in(path);
  BL_CHECK(in.good(), "sweep: cannot open reference hash file '", path, "'");
  HashTable t;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string name, hash;
    int chunk = -1;
    if (line.rfind("fingerprint ", 0) == 0) {
      std::string word;
      s >> word >> name >> hash;
      (*prints)[name] = hash;
      continue;
    }
    s >> name >> chunk >> hash;
    BL_CHECK(!name.empty() && chunk >= 0 && hash.size() == 64, "sweep: '", path, "' line ",
             line_no, ": expected '<function> <chunk> <sha256>'");
    t[name][chunk] = hash;
  }
  return t;
}

// The first differing input of a chunk, found by evaluating it with the reference map (and,
// for a CUDA run, on the device again).
void explain_chunk(const SweepOptions& opts, bl::MathFn f, int chunk) {
#if defined(BITLEARN_HAS_CUDA)
  if (opts.device != "cuda") return;
  std::vector<float> x(kChunk), y(kChunk), ref(kChunk), dev_out(kChunk);
  const bool pow = f == bl::MathFn::pow;
  fill_chunk(f, chunk, x.data(), y.data());
  bl::math_map_reference(f, x.data(), pow ? y.data() : nullptr, ref.data(), kChunk);
  CudaSweepDevice dev(kChunk);
  dev.set_inputs(x.data(), pow ? y.data() : nullptr, kChunk);
  dev.map(f, dev_out.data());
  int64_t diffs = 0, first = -1;
  for (int64_t k = 0; k < kChunk; ++k)
    if (bl::bits_of(ref[k]) != bl::bits_of(dev_out[k])) {
      if (first < 0) first = k;
      ++diffs;
    }
  if (first >= 0)
    std::printf("  %s chunk %d: %lld of %lld outputs differ from the CPU reference; first x=0x%08X%s "
                "-> cuda 0x%08X, reference 0x%08X\n",
                bl::math_fn_name(f), chunk, static_cast<long long>(diffs),
                static_cast<long long>(kChunk), bl::bits_of(x[first]), pow ? " (pow pair)" : "",
                bl::bits_of(dev_out[first]), bl::bits_of(ref[first]));
  else
    std::printf("  %s chunk %d: this device matches this build's CPU reference; the reference "
                "file comes from other math sources\n",
                bl::math_fn_name(f), chunk);
#else
  (void)opts;
  (void)f;
  (void)chunk;
#endif
}

int compare_tables(const SweepOptions& opts, const std::vector<bl::MathFn>& fns,
                   const HashTable& mine) {
  std::map<std::string, std::string> prints;
  const HashTable ref = read_table(opts.compare_path, &prints);
  int bad = 0;
  for (bl::MathFn f : fns) {
    const std::string name = bl::math_fn_name(f);
    auto it = ref.find(name);
    if (it == ref.end()) {
      std::printf("%-10s MISSING from %s\n", name.c_str(), opts.compare_path.c_str());
      ++bad;
      continue;
    }
    auto fp = prints.find(name);
    const bool stale = fp != prints.end() && fp->second != fingerprint(f);
    // Chunks present in both files are compared; the first difference is reported.
    int first = -1, compared = 0;
    for (const auto& kv : mine.at(name)) {
      auto r = it->second.find(kv.first);
      if (r == it->second.end()) continue;
      ++compared;
      if (r->second != kv.second) {
        first = kv.first;
        break;
      }
    }
    if (stale) {
      ++bad;
      std::printf("%-10s STALE: %s was made from other math sources (fingerprint differs)%s\n",
                  name.c_str(), opts.compare_path.c_str(),
                  first < 0 ? "" : "; chunks differ as expected");
    } else if (compared == 0) {
      ++bad;
      std::printf("%-10s NOT COMPARED: no common chunks\n", name.c_str());
    } else if (first < 0) {
      std::printf("%-10s IDENTICAL (%d chunks compared of %zu in the reference)\n", name.c_str(),
                  compared, it->second.size());
    } else {
      ++bad;
      std::printf("%-10s DIFFERENT: first differing chunk %d (inputs from 0x%08X)\n", name.c_str(),
                  first, static_cast<unsigned>(static_cast<uint64_t>(first) * kChunk));
      explain_chunk(opts, f, first);
    }
  }
  return bad == 0 ? 0 : 1;
}

std::vector<int> chunks_of(bl::MathFn fn) {
  std::vector<int> v;
  const int step = fn == bl::MathFn::pow ? 1 : g_chunk_step;
  for (int c = 0; c < chunk_count(fn); c += step) v.push_back(c);
  return v;
}

}  // namespace

int run_sweep(const SweepOptions& opts) {
  const std::vector<bl::MathFn> fns = selected(opts.fn);
  HashTable table;
  std::string desc;
  g_max_chunks = opts.max_chunks;
  BL_CHECK(opts.chunk_step >= 1, "sweep: --sweep-chunk-step must be >= 1");
  g_chunk_step = opts.chunk_step;
  const auto t0 = std::chrono::steady_clock::now();
  BL_CHECK(opts.threads >= 1, "sweep: --threads must be >= 1");
  if (opts.device == "file") {
    // Compare an existing hash file (out_path) with the reference; nothing is computed or written.
    BL_CHECK(!opts.compare_path.empty(), "sweep: --device file needs --compare REF");
    std::map<std::string, std::string> prints;
    table = read_table(opts.out_path, &prints);
    std::vector<bl::MathFn> present;
    for (bl::MathFn f : fns)
      if (table.count(bl::math_fn_name(f))) present.push_back(f);
    return compare_tables(opts, present, table);
  }
  if (opts.device == "cpu") {
    desc = std::string("cpu, math_map_cpu, ") +
           (bl::cpu_has_avx2_fma() ? "AVX2+FMA chunk loop" : "baseline chunk loop");
    sweep_cpu(fns, opts.threads, table);
  } else if (opts.device == "cuda") {
#if defined(BITLEARN_HAS_CUDA)
    desc = std::string("cuda, math_map_cuda, ") + CudaSweepDevice::describe();
    sweep_cuda(fns, opts.threads, table);
#else
    throw bl::Error("sweep: --device cuda needs a build with -DBITLEARN_CUDA=ON");
#endif
  } else {
    throw bl::Error("sweep: --device must be cpu, cuda or file, got '" + opts.device + "'");
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_table(opts, fns, table, desc);
  std::printf("sweep: %zu function(s) on %s in %.1f s, written to %s\n", fns.size(), desc.c_str(),
              s, opts.out_path.c_str());
  if (!opts.compare_path.empty()) return compare_tables(opts, fns, table);
  return 0;
}

}  // namespace mathcheck
