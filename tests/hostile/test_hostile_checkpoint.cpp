// Hostile training checkpoints: incomplete or inconsistent optimizer state, step counts that
// disagree or are negative. Each is refused naming the entry, and the model is left untouched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "bitlearn/io.h"
#include "bitlearn/safetensors.h"
#include "core/error.h"
#include "nn/nn_test_util.h"

namespace bl::nn::testing {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "bl_hostile_ckpt_" + std::to_string(::getpid()) + "_" + name;
}

TrainConfig config(int64_t steps, const std::string& path) {
  TrainConfig cfg;
  cfg.steps = steps;
  cfg.batch_size = 16;
  cfg.data_seed = 9;
  cfg.input_shape = {-1, 64};
  cfg.schedule = cosine_lr(0.01f, 1, 10);
  cfg.checkpoint_path = path;
  cfg.resume = true;
  return cfg;
}

// An Adam checkpoint of the MLP after 3 training steps.
std::string good_checkpoint() {
  static const std::string path = [] {
    const std::string p = temp_path("good.safetensors");
    std::remove(p.c_str());
    Built b = build_model(ModelKind::mlp, 8, 4, 3);
    Adam opt(b.model->named_parameters(), 0.01f);
    train_classifier(*b.model, opt, synthetic_images(48, 8, 4, 5), config(3, p));
    return p;
  }();
  return path;
}

struct Contents {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> meta;
};

Contents read_all(const std::string& path) {
  const SafetensorsFile f = SafetensorsFile::open(path);
  Contents c;
  for (const auto& n : f.names()) c.tensors[n] = f.get(n);
  c.meta = f.metadata();
  return c;
}

// The good checkpoint altered by `edit`, written to its own file.
std::string altered(const std::string& tag, const std::function<void(Contents&)>& edit) {
  Contents c = read_all(good_checkpoint());
  edit(c);
  const std::string p = temp_path(tag + ".safetensors");
  save_safetensors(p, c.tensors, c.meta);
  return p;
}

// The error of loading path into a fresh MLP + Adam; also checks the refusal changed no weight.
std::string load_error(const std::string& path) {
  Built b = build_model(ModelKind::mlp, 8, 4, 11);
  Adam opt(b.model->named_parameters(), 0.01f);
  const std::string before = model_digest(*b.model);
  std::string message = "(no error)";
  try {
    load_checkpoint(path, *b.model, opt);
  } catch (const Error& e) {
    message = e.what();
    EXPECT_EQ(model_digest(*b.model), before) << "a refused checkpoint changed the model";
    EXPECT_EQ(opt.steps(), 0);
  }
  return message;
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

std::string first_param() {
  Built b = build_model(ModelKind::mlp, 8, 4, 3);
  return b.model->named_parameters().front().first;
}

TEST(HostileCheckpoint, TheGoodCheckpointLoads) {
  EXPECT_EQ(load_error(good_checkpoint()), "(no error)");
}

TEST(HostileCheckpoint, MissingOptimizerTensorIsRefusedNamingIt) {
  const std::string p = first_param();
  std::string e = load_error(altered("no_m", [&](Contents& c) { c.tensors.erase("optim.m." + p); }));
  EXPECT_HAS(e, "entry 'm." + p + "' is missing, but optimizer.steps is 3");
  // Both moments of one parameter gone: the others still have theirs.
  e = load_error(altered("no_mv", [&](Contents& c) {
    c.tensors.erase("optim.m." + p);
    c.tensors.erase("optim.v." + p);
  }));
  EXPECT_HAS(e, "is missing, but optimizer.steps is 3");
  e = load_error(altered("no_power", [&](Contents& c) { c.tensors.erase("optim.beta2_power"); }));
  EXPECT_HAS(e, "missing scalar 'beta2_power'");
}

TEST(HostileCheckpoint, MisshapenOptimizerTensorIsRefused) {
  const std::string p = first_param();
  const std::string e = load_error(altered("shape", [&](Contents& c) { c.tensors["optim.v." + p] = Tensor::zeros({3}); }));
  EXPECT_HAS(e, "entry 'v." + p + "' has shape [3]");
}

TEST(HostileCheckpoint, OptimizerStepsDifferentFromTheTrainingStepIsRefused) {
  std::string e = load_error(altered("steps2", [](Contents& c) { c.meta["optimizer.steps"] = "2"; }));
  EXPECT_HAS(e, "has step 3 but optimizer.steps 2");
  // Both counts changed together: the beta powers then disagree with the count.
  e = load_error(altered("both2", [](Contents& c) {
    c.meta["optimizer.steps"] = "2";
    c.meta["step"] = "2";
  }));
  EXPECT_HAS(e, "entry 'beta1_power' = ");
  EXPECT_HAS(e, "disagrees with optimizer.steps 2");
}

TEST(HostileCheckpoint, BetaPowersOutsideTheirRangeOrInconsistentAreRefused) {
  std::string e = load_error(altered("power1", [](Contents& c) { c.tensors["optim.beta1_power"] = Tensor::scalar(1.0); }));
  EXPECT_HAS(e, "entry 'beta1_power' = 1 must lie in [0, 1) after optimizer.steps 3");
  e = load_error(altered("power15", [](Contents& c) { c.tensors["optim.beta2_power"] = Tensor::scalar(1.5); }));
  EXPECT_HAS(e, "entry 'beta2_power' = 1.5 is not a power of a beta in [0, 1)");
  e = load_error(altered("power_nan", [](Contents& c) { c.tensors["optim.beta1_power"] = Tensor::scalar(std::nan("")); }));
  EXPECT_HAS(e, "is not a power of a beta");
  e = load_error(altered("power_other", [](Contents& c) { c.tensors["optim.beta1_power"] = Tensor::scalar(0.5); }));
  EXPECT_HAS(e, "entry 'beta1_power' = 0.5 disagrees with optimizer.steps 3, which gives 0.729");
}

TEST(HostileCheckpoint, NegativeOrMalformedStepIsRefusedNotAnIndexError) {
  std::string e = load_error(altered("negative", [](Contents& c) {
    c.meta["step"] = "-5";
    c.meta["optimizer.steps"] = "-5";
  }));
  EXPECT_HAS(e, "metadata field 'step' = '-5', expected a count of steps");
  e = load_error(altered("trailing", [](Contents& c) { c.meta["step"] = "3abc"; }));
  EXPECT_HAS(e, "metadata field 'step' = '3abc'");
  e = load_error(altered("huge", [](Contents& c) { c.meta["step"] = "99999999999999999999"; }));
  EXPECT_HAS(e, "expected a count of steps");
  // Through the training loop's resume: the same message, no index_select error.
  const std::string bad = altered("resume_negative", [](Contents& c) {
    c.meta["step"] = "-5";
    c.meta["optimizer.steps"] = "-5";
  });
  Built b = build_model(ModelKind::mlp, 8, 4, 3);
  Adam opt(b.model->named_parameters(), 0.01f);
  try {
    train_classifier(*b.model, opt, synthetic_images(48, 8, 4, 5), config(6, bad));
    ADD_FAILURE() << "resume from a negative step was accepted";
  } catch (const Error& err) {
    EXPECT_HAS(err.what(), "expected a count of steps");
    EXPECT_EQ(std::string(err.what()).find("index_select"), std::string::npos) << err.what();
  }
}

TEST(HostileCheckpoint, StateWithoutStepsIsRefused) {
  const std::string e = load_error(altered("zero", [](Contents& c) {
    c.meta["step"] = "0";
    c.meta["optimizer.steps"] = "0";
  }));
  EXPECT_HAS(e, "is present, but optimizer.steps is 0");
}

TEST(HostileCheckpoint, OtherOptimizersRoundTrip) {
  // SGD with momentum (one slot) and RMSprop reload and continue to the uninterrupted run's bytes.
  for (int kind = 0; kind < 2; ++kind) {
    const std::string full = temp_path("rt_full" + std::to_string(kind)), part = temp_path("rt_part" + std::to_string(kind));
    std::remove(full.c_str());
    std::remove(part.c_str());
    auto run = [&](int64_t steps, const std::string& path) {
      Built b = build_model(ModelKind::mlp, 8, 4, 3);
      std::unique_ptr<Optimizer> opt;
      if (kind == 0) opt = std::make_unique<RMSprop>(b.model->named_parameters(), 0.001f);
      else opt = std::make_unique<SGD>(b.model->named_parameters(), 0.01f, 0.9f);
      train_classifier(*b.model, *opt, synthetic_images(48, 8, 4, 5), config(steps, path));
    };
    run(5, full);
    run(2, part);
    run(5, part);
    EXPECT_EQ(read_file_bytes(full), read_file_bytes(part)) << kind;
  }
}

TEST(HostileCheckpoint, AdafactorFactoredSlotsReload) {
  // Matrices keep row [rows] and col [cols] slots, vectors a full v: load_state accepts exactly that.
  Built b = build_model(ModelKind::mlp, 8, 4, 3);
  Adafactor opt(b.model->named_parameters(), 0.01f);
  for (auto& [name, v] : b.model->named_parameters()) {
    ag::Var handle = v;
    handle.set_grad(Tensor::full(v.shape(), 0.5, DType::f32));
  }
  opt.step();
  const auto state = opt.state();
  Built b2 = build_model(ModelKind::mlp, 8, 4, 3);
  Adafactor opt2(b2.model->named_parameters(), 0.01f);
  opt2.load_state(state, 1);
  const auto again = opt2.state();
  ASSERT_EQ(again.size(), state.size());
  for (const auto& [k, t] : state) EXPECT_EQ(again.at(k).digest(), t.digest()) << k;
  // A matrix given a full v instead of its factors is refused.
  auto bad = state;
  const std::string w = b.model->named_parameters().front().first;
  bad.erase("row." + w);
  try {
    opt2.load_state(bad, 1);
    ADD_FAILURE() << "a missing row slot was accepted";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "entry 'row." + w + "' is missing");
  }
}

}  // namespace
}  // namespace bl::nn::testing
