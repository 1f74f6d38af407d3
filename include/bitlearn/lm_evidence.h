// lm_evidence.h: the cross-device language-model training evidence of `bitlearn verify --lm-training`.
//
// One small Llama-style model ("llama-tiny": 4 layers, width 256, 8 heads / 4 key-value heads,
// context 128) is trained from one initialization on the English text of Debian's `fortunes`
// package, tokenized by a byte-level BPE of 2048 ids trained on that corpus, along several routes:
// CPU 1 thread, CPU 2 threads, CUDA, and CPU -> CUDA -> CPU switching device through a checkpoint
// every `switch_every` steps. Every route that runs must give the same per-step records (loss and
// gradient-norm bits, parameter SHA-256) and the same final checkpoint bytes. See docs/lm-training.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bitlearn/lm.h"

namespace bl::lm {

// Where Debian's `fortunes` package installs its text files.
constexpr const char* kFortunesDir = "/usr/share/games/fortunes";

struct EvidenceOptions {
  std::string scratch_dir;                   // required: corpus copy, tokenizer, tokens, checkpoints, reports
  std::string corpus_source = kFortunesDir;  // folder of the fortunes files
  std::vector<std::string> corpus_files;     // names to use (empty: every plain file, no *.dat / *.u8)
  std::vector<std::string> routes;           // route names (empty: all of evidence_route_names())
  int64_t steps = 200;
  int64_t switch_every = 50;                 // steps between device switches of "cpu-cuda-cpu"
  int32_t vocab_size = 2048;                 // BPE ids, the special token "<|endoftext|>" included
  // The model: a preset name, or a config.json (config_path) whose shape replaces it (smaller
  // models for tests). batch and seq_len as the evidence uses them.
  std::string model = "llama-tiny";
  std::string config_path;
  int64_t batch = 8, seq_len = 128;
  int cpu_threads = 0;                       // CPU segments of "cpu-cuda-cpu" with CUDA (0: current)
  bool progress = false;                     // the trainer's per-step line on stderr
};

struct RouteResult {
  std::string name;
  bool ran = false;
  std::string skip_reason;            // why it did not run (no CUDA device)
  std::string error;                  // the error that stopped it (then ran is false; a divergence)
  std::string note;                   // e.g. how the route ran without CUDA
  std::vector<std::string> segments;  // "cpu 1 thread: steps 1-50", "cuda:0: steps 51-100", ...
  std::vector<StepRecord> steps;
  std::string records_sha256;         // step_records_sha256(steps)
  std::string checkpoint_sha256;      // of the final checkpoint file
  std::string report_path;            // the route's report_json, in the scratch folder
  double seconds = 0;
};

struct EvidenceResult {
  std::string scratch_dir, corpus_dir, corpus_sha256, tokenizer_path, tokenizer_sha256;
  std::vector<std::string> corpus_files;
  bool tokenizer_reused = false;      // the cached tokenizer of the same corpus was used
  int64_t steps = 0, switch_every = 0, parameters = 0;
  std::vector<RouteResult> routes;
  bool identical = false;             // every route that ran agrees (and at least one ran)
  std::vector<std::string> divergences;
  std::string digest;                 // evidence_digest of the first route that ran
};

// "cpu-1t", "cpu-2t", "cuda", "cpu-cuda-cpu".
std::vector<std::string> evidence_route_names();

// Prepares the corpus, tokenizer and token file in options.scratch_dir and trains every route
// from the same initialization. Throws bl::Error on bad options or a missing corpus (naming
// `apt-get install fortunes`); a route that cannot run here (CUDA) is reported as skipped, one
// that stops with an error keeps it in its error field.
EvidenceResult run_lm_evidence(const EvidenceOptions& options);

// SHA-256 over one line per step, "<step> <loss bits> <grad_norm bits> <params_sha256>\n" (bits
// as 8 lowercase hex digits), so the same value can be recomputed from a report_json file.
std::string step_records_sha256(const std::vector<StepRecord>& steps);
// SHA-256 over "<records sha256>\n<checkpoint sha256>\n": the `lm-training digest`.
std::string evidence_digest(const RouteResult& route);
// Compares the routes that ran (records and checkpoint against the first), setting identical,
// divergences (one line each, naming the first differing step, or the error that stopped a
// route) and digest.
void compare_routes(EvidenceResult* result);
// The whole result as JSON: corpus and tokenizer hashes, then every route with its per-step records.
std::string evidence_json(const EvidenceResult& result);

}  // namespace bl::lm
