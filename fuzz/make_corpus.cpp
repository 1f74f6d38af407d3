// make_corpus: writes the generated seed files of fuzz/corpus/ (small valid inputs of the binary
// and bitlearn-written formats), so every target starts from files its reader accepts.
// Usage: bitlearn_fuzz_corpus <corpus folder>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "bitlearn/io.h"
#include "bitlearn/ml/estimator.h"
#include "bitlearn/nn/checkpoint.h"
#include "bitlearn/nn/layers.h"
#include "bitlearn/nn/module.h"
#include "bitlearn/nn/optim.h"
#include "bitlearn/safetensors.h"
#include "bitlearn/verify.h"

namespace {

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void safetensors_seeds(const std::string& dir) {
  std::map<std::string, bl::Tensor> t;
  t["a.f32"] = bl::Tensor::from_vector(std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f, 0.0f, -0.0f}, {2, 3});
  t["b.i64"] = bl::Tensor::from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  t["c.i32"] = bl::Tensor::from_vector(std::vector<int32_t>{7}, {1});
  t["d.u8"] = bl::Tensor::from_vector(std::vector<uint8_t>{1, 2, 3, 4}, {2, 2}, bl::DType::u8);
  bl::save_safetensors(dir + "/mixed.safetensors", t, {{"format", "pt"}});
  bl::save_safetensors(dir + "/empty.safetensors", {});
}

void idx_seeds(const std::string& dir) {
  // images [2, 3, 3] and labels [2]: magic 00 00 08 <ndim>, big-endian u32 dims, bytes.
  std::vector<uint8_t> images = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 3};
  for (int i = 0; i < 18; ++i) images.push_back(static_cast<uint8_t>(i * 13));
  write_bytes(dir + "/images.idx", images);
  write_bytes(dir + "/labels.idx", {0, 0, 8, 1, 0, 0, 0, 2, 3, 9});
  gzFile gz = gzopen((dir + "/images.idx.gz").c_str(), "wb9");
  gzwrite(gz, images.data(), static_cast<unsigned>(images.size()));
  gzclose(gz);
}

void checkpoint_seeds(const std::string& dir) {
  bl::nn::InitStream init(1);
  bl::nn::Linear model(4, 3, init);
  bl::nn::Adam opt(model.named_parameters(), 0.01f);
  bl::nn::save_checkpoint(dir + "/step0.safetensors", model, opt, 0);
  for (int s = 0; s < 2; ++s) {
    for (auto& [name, v] : model.named_parameters()) v.set_grad(bl::Tensor::full(v.shape(), 0.125));
    opt.step();
  }
  bl::nn::save_checkpoint(dir + "/step2.safetensors", model, opt, 2, {{"rng.seed", "7"}});
}

void model_seeds(const std::string& dir) {
  const std::vector<float> x = {0, 0, 1, 0, 0, 1, 1, 1, 2, 1, 1, 2, 3, 2, 2, 3};
  const std::vector<float> y_reg = {0.5f, 1.0f, 1.5f, 2.5f, 3.0f, 3.5f, 5.0f, 5.5f};
  const std::vector<float> y_cls = {0, 0, 0, 1, 1, 1, 2, 2};
  const bl::Tensor X = bl::Tensor::from_vector(x, {8, 2});
  const struct {
    const char* name;
    bool classifier;
    bl::ml::Params params;
  } models[] = {
      {"ridge", false, {}},
      {"logistic_regression", true, {}},
      {"decision_tree_classifier", true, {{"max_depth", "2"}}},
      {"random_forest_regressor", false, {{"n_estimators", "2"}, {"max_depth", "2"}}},
      {"hist_gradient_boosting_classifier", true, {{"max_iter", "2"}}},
      {"kmeans", false, {{"n_clusters", "2"}}},
      {"pca", false, {{"n_components", "1"}}},
      {"kneighbors_regressor", false, {{"n_neighbors", "2"}}},
  };
  for (const auto& m : models) {
    auto est = bl::ml::make_estimator(m.name, m.params);
    const bool unsupervised = std::string(m.name) == "kmeans" || std::string(m.name) == "pca";
    if (unsupervised)
      est->fit(X);
    else
      est->fit(X, bl::Tensor::from_vector(m.classifier ? y_cls : y_reg, {8}));
    est->save(dir + "/" + m.name + ".json");
  }
}

void report_seeds(const std::string& dir) {
  bl::verify::Report r;
  r.version = "0.1.0";
  r.contract_profile = "bitlearn.identical.v1";
  r.suite = bl::verify::Suite::quick;
  r.threads = 2;
  r.cpu_isa = "avx2";
  for (const char* device : {"cpu", "cuda:0"}) {
    bl::verify::DeviceRun run;
    run.device = device;
    for (const char* check : {"gemm", "op.softmax"}) {
      bl::verify::CheckResult c;
      c.name = check;
      c.device = device;
      c.state = bl::verify::State::identical;
      c.hash = std::string(64, 'a');
      c.expected = c.hash;
      c.seconds = 0.25;
      run.checks.push_back(c);
    }
    run.digest = bl::verify::suite_digest(run.checks);
    r.runs.push_back(run);
  }
  r.skipped_devices.push_back("rocm: not supported");
  bl::verify::write_report_json(r, dir + "/two_devices.json");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus folder>\n", argv[0]);
    return 2;
  }
  const std::string root = argv[1];
  auto sub = [&](const char* name) {
    const std::string d = root + "/" + name;
    std::filesystem::create_directories(d);
    return d;
  };
  safetensors_seeds(sub("safetensors"));
  idx_seeds(sub("idx"));
  checkpoint_seeds(sub("checkpoint"));
  model_seeds(sub("model_json"));
  report_seeds(sub("verify_report"));
  return 0;
}
