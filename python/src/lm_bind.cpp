// bitlearn.lm: causal language-model training (bitlearn/lm.h), the same lm::train the `bitlearn
// train --model gpt2|llama|<preset>` command runs, so the same checkpoints and reports.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bitlearn/lm.h"
#include "convert.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::py {

namespace {

// The record of one step as the report writes it (bitlearn.lm.train.v1's steps).
nb::dict step_dict(const lm::StepRecord& s) {
  nb::dict d;
  d["step"] = s.step;
  d["loss"] = s.loss;
  d["loss_bits"] = lm::float_bits_hex(s.loss);
  d["grad_norm"] = s.grad_norm;
  d["grad_norm_bits"] = lm::float_bits_hex(s.grad_norm);
  d["lr"] = s.lr;
  d["lr_bits"] = lm::float_bits_hex(s.lr);
  if (s.val_loss >= 0) d["val_loss"] = s.val_loss;
  if (!s.params_sha256.empty()) d["params_sha256"] = s.params_sha256;
  d["seconds"] = s.seconds;
  d["tokens"] = s.tokens;
  return d;
}

// Options from the keyword dictionary bitlearn.lm.train builds (its names are TrainOptions').
lm::TrainOptions options_of(const nb::dict& kw) {
  lm::TrainOptions o;
  std::vector<std::string> unknown;
  for (auto [key_obj, value] : kw) {
    const std::string key = nb::cast<std::string>(key_obj);
    auto text = [&] { return nb::cast<std::string>(value); };
    auto integer = [&] { return nb::cast<int64_t>(value); };
    auto real = [&] { return nb::cast<float>(value); };
    auto flag = [&] { return nb::cast<bool>(value); };
    if (key == "model") o.model = text();
    else if (key == "config") o.config_path = text();
    else if (key == "init_from") o.init_from = text();
    else if (key == "data") o.data = text();
    else if (key == "tokenizer") o.tokenizer = text();
    else if (key == "tokens") o.tokens = text();
    else if (key == "steps") o.steps = integer();
    else if (key == "batch") o.batch = integer();
    else if (key == "seq_len") o.seq_len = integer();
    else if (key == "shards") o.shards = integer();
    else if (key == "accumulate") o.accumulate = integer();
    else if (key == "lr") o.lr = real();
    else if (key == "min_lr") o.min_lr = real();
    else if (key == "weight_decay") o.weight_decay = real();
    else if (key == "clip") o.clip = real();
    else if (key == "beta1") o.beta1 = real();
    else if (key == "beta2") o.beta2 = real();
    else if (key == "eps") o.eps = real();
    else if (key == "warmup") o.warmup = integer();
    else if (key == "sampler") {
      const std::string s = text();
      BL_CHECK(s == "random" || s == "sequential", "lm.train: sampler must be 'random' or 'sequential', got '", s,
               "'");
      o.sampler = s == "sequential" ? lm::Sampler::sequential : lm::Sampler::random;
    } else if (key == "seed") o.seed = nb::cast<uint64_t>(value);
    else if (key == "device") o.device = text();
    else if (key == "threads") o.threads = nb::cast<int>(value);
    else if (key == "recompute") o.recompute = flag();
    else if (key == "checkpoint") o.checkpoint = text();
    else if (key == "checkpoint_every") o.checkpoint_every = integer();
    else if (key == "resume") o.resume = flag();
    else if (key == "stop_at") o.stop_at = integer();
    else if (key == "save_hf") o.save_hf = text();
    else if (key == "report") o.report = text();
    else if (key == "val_fraction") o.val_fraction = real();
    else if (key == "eval_every") o.eval_every = integer();
    else if (key == "eval_batches") o.eval_batches = integer();
    else if (key == "hash_every") o.hash_every = integer();
    else if (key == "progress") o.progress = flag();
    else unknown.push_back(key);
  }
  BL_CHECK(unknown.empty(), "lm.train: unknown option '", unknown.empty() ? "" : unknown.front(), "'");
  return o;
}

// Runs lm::train without the GIL; on_step (when not None) is called with each step's record and
// may raise to stop the run (the exception reaches the caller; the last checkpoint stays intact).
// The thread count the options set is restored afterwards. Returns the report's JSON text.
std::string train(const nb::dict& kw, nb::object on_step) {
  lm::TrainOptions o = options_of(kw);
  if (!on_step.is_none()) {
    o.on_step = [on_step](const lm::StepRecord& s) {
      nb::gil_scoped_acquire gil;
      on_step(step_dict(s));
    };
  }
  const int saved_threads = num_threads();
  std::string report;
  try {
    nb::gil_scoped_release no_gil;
    const lm::TrainResult r = lm::train(o);
    report = lm::report_json(r, o);
  } catch (...) {
    set_num_threads(saved_threads);
    throw;
  }
  set_num_threads(saved_threads);
  return report;
}

}  // namespace

void bind_lm(nb::module_& m) {
  m.def("_lm_train", &train, nb::arg("options"), nb::arg("on_step").none(),
        "lm::train with the options of a dict (bitlearn.lm.train builds it); returns the JSON report.");
  m.def("_lm_presets", &lm::preset_names, "The names of the trainable model presets.");
}

}  // namespace bl::py
