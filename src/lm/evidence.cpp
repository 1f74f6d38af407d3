// evidence.cpp: the cross-device language-model training evidence (bitlearn/lm_evidence.h).
#include "bitlearn/lm_evidence.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "bitlearn/io.h"
#include "bitlearn/tokenizer.h"
#include "core/digest.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "io/json_array.h"
#include "lm/report.h"

namespace bl::lm {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWhat = "lm evidence";

// The plain files of the fortunes folder (no extension: the *.dat indexes and *.u8 links are
// left out), sorted by name; restricted to `wanted` when it is not empty.
std::vector<std::string> fortune_files(const std::string& source, const std::vector<std::string>& wanted) {
  BL_CHECK(fs::is_directory(source), kWhat, ": the corpus folder ", source,
           " is missing; it comes with Debian's fortunes package (apt-get install fortunes)");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(source)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || name.find('.') != std::string::npos) continue;
    if (!fs::is_regular_file(e.path())) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  BL_CHECK(!names.empty(), kWhat, ": ", source, " holds no fortune text files (apt-get install fortunes)");
  if (wanted.empty()) return names;
  std::vector<std::string> out = wanted;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  for (const std::string& w : out)
    BL_CHECK(std::binary_search(names.begin(), names.end(), w), kWhat, ": no fortune file '", w, "' in ", source);
  return out;
}

// Copies the files into dir (which then holds exactly them) and returns the corpus SHA-256 over
// name, 0x00, size and bytes of each file in order.
std::string copy_corpus(const std::string& source, const std::vector<std::string>& names, const std::string& dir) {
  fs::create_directories(dir);
  const std::set<std::string> keep(names.begin(), names.end());
  for (const auto& e : fs::directory_iterator(dir))
    if (!keep.count(e.path().filename().string())) fs::remove_all(e.path());
  Sha256 h;
  for (const std::string& name : names) {
    const std::vector<uint8_t> bytes = read_file_bytes(source + "/" + name, "fortune file");
    const std::string dst = dir + "/" + name;
    if (!fs::exists(dst) || read_file_bytes(dst, "corpus copy") != bytes) write_file_atomic(dst, bytes, "corpus copy");
    h.update(name);
    h.update("\0", 1);
    h.update_i64_le(static_cast<int64_t>(bytes.size()));
    h.update(bytes.data(), bytes.size());
  }
  return h.finish_hex();
}

// tokenizer.json in scratch, trained on the corpus unless the one there was trained on the same
// corpus with the same vocabulary size (its stamp file says so).
std::string prepare_tokenizer(const std::string& scratch, const std::string& corpus_dir, const std::string& corpus_sha,
                              int32_t vocab_size, bool* reused) {
  const std::string path = scratch + "/tokenizer.json";
  const std::string stamp_path = path + ".corpus";
  const std::string stamp = "corpus_sha256 " + corpus_sha + "\nvocab_size " + std::to_string(vocab_size) + "\n";
  *reused = false;
  if (fs::exists(path) && fs::exists(stamp_path)) {
    const std::vector<uint8_t> s = read_file_bytes(stamp_path, "tokenizer stamp");
    if (std::string(s.begin(), s.end()) == stamp) {
      *reused = true;
      return path;
    }
  }
  std::vector<std::string> texts;
  for (const auto& [name, text] : read_corpus(corpus_dir)) texts.push_back(text);
  text::BpeTrainerOptions bo;
  bo.vocab_size = vocab_size;
  bo.special_tokens = {"<|endoftext|>"};
  text::train_byte_level_bpe(texts, bo).save(path);
  write_file_atomic(stamp_path, stamp, "tokenizer stamp");
  return path;
}

struct Segment {
  std::string device;
  int threads = 0;
  int64_t end = 0;
};

std::string segment_label(const Segment& s) {
  if (s.device != "cpu") return s.device;
  if (s.threads <= 0) return "cpu";
  return "cpu " + std::to_string(s.threads) + (s.threads == 1 ? " thread" : " threads");
}

RouteResult run_route(const std::string& name, const TrainOptions& base, const EvidenceOptions& o,
                      const std::string& scratch, int cpu_threads, int64_t* parameters) {
  RouteResult r;
  r.name = name;
  const bool have_cuda = cuda_device_count() > 0;
  const int64_t N = base.steps;
  std::vector<Segment> segs;
  if (name == "cpu-1t") {
    segs.push_back({"cpu", 1, N});
  } else if (name == "cpu-2t") {
    segs.push_back({"cpu", 2, N});
  } else if (name == "cuda") {
    if (!have_cuda) {
      r.skip_reason = "no CUDA device (or a build without CUDA)";
      return r;
    }
    segs.push_back({"cuda:0", 0, N});
  } else {  // cpu-cuda-cpu
    if (!have_cuda)
      r.note = "no CUDA device: the switches alternate CPU 1 and 2 threads";
    for (int64_t k = 0; k * o.switch_every < N; ++k) {
      const int64_t end = std::min(N, (k + 1) * o.switch_every);
      if (have_cuda) segs.push_back(k % 2 == 0 ? Segment{"cpu", cpu_threads, end} : Segment{"cuda:0", 0, end});
      else segs.push_back({"cpu", k % 2 == 0 ? 1 : 2, end});
    }
  }
  const std::string ckpt = scratch + "/" + name + ".ckpt";
  fs::remove(ckpt);
  const auto t0 = std::chrono::steady_clock::now();
  TrainResult all;
  std::string devices;
  int64_t done = 0;
  for (size_t i = 0; i < segs.size(); ++i) {
    TrainOptions t = base;
    t.device = segs[i].device;
    t.threads = segs[i].threads;
    t.checkpoint = ckpt;
    t.stop_at = segs[i].end == N ? 0 : segs[i].end;
    t.resume = i > 0;
    TrainResult tr = train(t);
    BL_CHECK(tr.first_step == done && tr.last_step == segs[i].end, kWhat, ": route ", name, " segment ", i + 1,
             " ran steps ", tr.first_step + 1, "-", tr.last_step, " instead of ", done + 1, "-", segs[i].end);
    r.segments.push_back(segment_label(segs[i]) + ": steps " + std::to_string(done + 1) + "-" +
                         std::to_string(segs[i].end));
    devices += (devices.empty() ? "" : ",") + segs[i].device;
    all.steps.insert(all.steps.end(), tr.steps.begin(), tr.steps.end());
    all.checkpoint_sha256 = tr.checkpoint_sha256;
    all.final_params_sha256 = tr.final_params_sha256;
    all.parameters = tr.parameters;
    done = segs[i].end;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.ran = true;
  r.steps = all.steps;
  r.records_sha256 = step_records_sha256(r.steps);
  r.checkpoint_sha256 = all.checkpoint_sha256;
  all.first_step = 0;
  all.last_step = done;
  TrainOptions shown = base;
  shown.device = devices;
  *parameters = all.parameters;
  r.report_path = scratch + "/" + name + ".report.json";
  write_file_atomic(r.report_path, report_json(all, shown), "route report");
  write_file_atomic(scratch + "/" + name + ".report.svg", loss_curve_svg(all.steps), "loss curve");
  return r;
}

}  // namespace

std::vector<std::string> evidence_route_names() { return {"cpu-1t", "cpu-2t", "cuda", "cpu-cuda-cpu"}; }

std::string step_records_sha256(const std::vector<StepRecord>& steps) {
  Sha256 h;
  for (const StepRecord& s : steps)
    h.update(std::to_string(s.step) + " " + float_bits_hex(s.loss) + " " + float_bits_hex(s.grad_norm) + " " + s.params_sha256 +
             "\n");
  return h.finish_hex();
}

std::string evidence_digest(const RouteResult& route) {
  const std::string text = route.records_sha256 + "\n" + route.checkpoint_sha256 + "\n";
  return sha256_hex(text.data(), text.size());
}

void compare_routes(EvidenceResult* result) {
  result->divergences.clear();
  result->digest.clear();
  const RouteResult* ref = nullptr;
  bool failed = false;
  for (const RouteResult& r : result->routes) {
    if (!r.error.empty()) {
      result->divergences.push_back("route " + r.name + " failed: " + r.error);
      failed = true;
    }
    if (!r.ran) continue;
    if (ref == nullptr) {
      ref = &r;
      result->digest = evidence_digest(r);
      continue;
    }
    const std::string vs = "route " + r.name + " differs from " + ref->name;
    if (r.steps.size() != ref->steps.size()) {
      result->divergences.push_back(vs + ": " + std::to_string(r.steps.size()) + " steps against " +
                                    std::to_string(ref->steps.size()));
      continue;
    }
    for (size_t i = 0; i < r.steps.size(); ++i) {
      const StepRecord &a = r.steps[i], &b = ref->steps[i];
      const char* what = a.step != b.step                           ? "step number"
                         : float_bits_hex(a.loss) != float_bits_hex(b.loss)     ? "loss bits"
                         : float_bits_hex(a.grad_norm) != float_bits_hex(b.grad_norm) ? "grad_norm bits"
                         : a.params_sha256 != b.params_sha256       ? "params_sha256"
                                                                    : nullptr;
      if (what != nullptr) {
        result->divergences.push_back(vs + " at step " + std::to_string(b.step) + " (" + what + ")");
        break;
      }
    }
    if (r.checkpoint_sha256 != ref->checkpoint_sha256)
      result->divergences.push_back(vs + ": final checkpoint sha256 " + r.checkpoint_sha256.substr(0, 16) +
                                    " against " + ref->checkpoint_sha256.substr(0, 16));
  }
  result->identical = ref != nullptr && !failed && result->divergences.empty();
}

EvidenceResult run_lm_evidence(const EvidenceOptions& o) {
  BL_CHECK(!o.scratch_dir.empty(), kWhat, ": a scratch folder is required");
  BL_CHECK(o.steps >= 1, kWhat, ": the step count must be >= 1, got ", o.steps);
  BL_CHECK(o.switch_every >= 1, kWhat, ": the switch interval must be >= 1, got ", o.switch_every);
  BL_CHECK(o.vocab_size >= 258, kWhat, ": the vocabulary must hold at least the 256 bytes and <|endoftext|>, got ",
           o.vocab_size);
  const std::vector<std::string> known = evidence_route_names();
  std::vector<std::string> routes = o.routes.empty() ? known : o.routes;
  for (const std::string& r : routes) {
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    BL_CHECK(std::find(known.begin(), known.end(), r) != known.end(), kWhat, ": unknown route '", r, "' (known: ",
             list, ")");
  }
  for (size_t i = 0; i < routes.size(); ++i)
    for (size_t j = 0; j < i; ++j) BL_CHECK(routes[i] != routes[j], kWhat, ": route '", routes[i], "' given twice");

  EvidenceResult result;
  result.scratch_dir = o.scratch_dir;
  result.steps = o.steps;
  result.switch_every = o.switch_every;
  fs::create_directories(o.scratch_dir);
  result.corpus_files = fortune_files(o.corpus_source, o.corpus_files);
  result.corpus_dir = o.scratch_dir + "/corpus";
  result.corpus_sha256 = copy_corpus(o.corpus_source, result.corpus_files, result.corpus_dir);
  result.tokenizer_path =
      prepare_tokenizer(o.scratch_dir, result.corpus_dir, result.corpus_sha256, o.vocab_size, &result.tokenizer_reused);
  const std::vector<uint8_t> tok = read_file_bytes(result.tokenizer_path, "tokenizer");
  result.tokenizer_sha256 = sha256_hex(tok.data(), tok.size());
  // The token file is made here so that no route's time includes the tokenization.
  const std::string tokens_path = o.scratch_dir + "/corpus.tokens";
  prepare_tokens(result.corpus_dir,
                 text::Tokenizer::from_json_text(std::string(tok.begin(), tok.end()), result.tokenizer_path),
                 result.tokenizer_sha256, tokens_path);

  TrainOptions base;
  base.model = o.model;
  base.config_path = o.config_path;
  base.data = result.corpus_dir;
  base.tokenizer = result.tokenizer_path;
  base.tokens = tokens_path;
  base.steps = o.steps;
  base.batch = o.batch;
  base.seq_len = o.seq_len;
  base.lr = 1e-3f;
  base.warmup = 20;
  base.weight_decay = 0.1f;
  base.clip = 1.0f;
  base.seed = 1;
  base.hash_every = 1;
  base.progress = o.progress;

  // train() sets the process-wide thread count per route; the caller's count comes back after.
  const int threads_before = num_threads();
  const int cpu_threads = o.cpu_threads > 0 ? o.cpu_threads : threads_before;
  try {
    for (const std::string& name : routes) {
      int64_t parameters = 0;
      try {
        result.routes.push_back(run_route(name, base, o, o.scratch_dir, cpu_threads, &parameters));
      } catch (const Error& e) {
        // A route that fails (a device error, a NaN loss) is a result of the evidence, not bad usage.
        RouteResult failed;
        failed.name = name;
        failed.error = e.what();
        result.routes.push_back(failed);
      }
      if (parameters > 0) result.parameters = parameters;
    }
  } catch (...) {
    set_num_threads(threads_before);
    throw;
  }
  set_num_threads(threads_before);
  compare_routes(&result);
  return result;
}

std::string evidence_json(const EvidenceResult& r) {
  nlohmann::ordered_json j;
  j["format"] = "bitlearn.lm.evidence.v1";
  j["corpus"] = "Debian package fortunes";
  j["corpus_files"] = r.corpus_files;
  j["corpus_sha256"] = r.corpus_sha256;
  j["tokenizer_sha256"] = r.tokenizer_sha256;
  j["parameters"] = r.parameters;
  j["steps"] = r.steps;
  j["switch_every"] = r.switch_every;
  j["identical"] = r.identical;
  j["divergences"] = r.divergences;
  j["digest"] = r.digest;
  j["routes"] = json_object_array(r.routes, [](const RouteResult& route, nlohmann::ordered_json& e) {
    e["route"] = route.name;
    e["ran"] = route.ran;
    if (!route.skip_reason.empty()) e["skip_reason"] = route.skip_reason;
    if (!route.error.empty()) e["error"] = route.error;
    if (!route.note.empty()) e["note"] = route.note;
    e["segments"] = route.segments;
    e["seconds"] = route.seconds;
    e["records_sha256"] = route.records_sha256;
    e["checkpoint_sha256"] = route.checkpoint_sha256;
    e["report"] = route.report_path;
    e["records"] = json_object_array(route.steps, [](const StepRecord& s, nlohmann::ordered_json& x) {
      x["step"] = s.step;
      put_float(x, "loss", s.loss);
      x["grad_norm_bits"] = float_bits_hex(s.grad_norm);
      x["params_sha256"] = s.params_sha256;
    });
  });
  return j.dump(1) + "\n";
}

}  // namespace bl::lm
