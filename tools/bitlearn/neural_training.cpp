// neural_training.cpp: `bitlearn verify --neural-training`.
#include "neural_training.h"

#include "bitlearn/ops_matmul.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "bitlearn/io.h"
#include "bitlearn/nn/evidence.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::cli {

int run_neural_training(const std::string& device, int threads, const std::string& data_dir,
                        const std::string& write_expected) {
  bl::set_num_threads(threads);
  std::vector<Device> devices;
  bool incomplete = false;
  if (device == "all") {
    devices.push_back(Device::cpu());
    for (int i = 0; i < cuda_device_count(); ++i) devices.push_back(Device::cuda(i));
    if (cuda_device_count() == 0) {
      std::printf("SKIPPED device cuda: no CUDA device (or a build without CUDA)\n");
      incomplete = true;
    }
  } else {
    Device d = Device::parse(device);
    if (d.is_cuda() && d.index >= cuda_device_count()) {
      std::fprintf(stderr, "bitlearn verify: --device %s: no such CUDA device\n", device.c_str());
      return 2;
    }
    devices.push_back(d);
  }
  if (!write_expected.empty()) devices = {Device::cpu()};
  BL_CHECK(write_expected.empty() || bl::gemm_profile() == bl::GemmProfile::contract,
           "verify --neural-training --write-expected: the recorded hashes are the default GEMM profile's "
           "(run it without --gemm-profile exact / BITLEARN_GEMM_PROFILE=exact)");
  char scratch_template[] = "/tmp/bitlearn_nn_XXXXXX";
  BL_CHECK(::mkdtemp(scratch_template) != nullptr, "verify --neural-training: cannot create a scratch folder");
  std::string scratch = scratch_template;
  std::printf("neural training workloads, threads %d, data %s\n", threads, data_dir.c_str());
  bool divergent = false;
  std::map<std::string, std::pair<std::string, std::string>> first_device;
  std::string expected_text =
      "// name, loss hash, checkpoint hash (regenerate: bitlearn verify --neural-training "
      "--write-expected FILE)\n";
  for (const Device& d : devices) {
    for (const std::string& name : bl::nn::neural_workload_names()) {
      bl::nn::NeuralWorkloadResult r = bl::nn::run_neural_workload(name, d, data_dir, scratch);
      auto expected = bl::nn::neural_expected_hashes(name);
      const char* state = "IDENTICAL";
      std::string reason;
      if (bl::gemm_profile() != bl::GemmProfile::contract) {
        state = "SKIPPED";  // the recorded hashes are the default profile's; devices are still compared
        reason = "no expected hash under the exact GEMM profile (devices compared with each other only)";
      } else if (expected.first.empty()) {
        state = "SKIPPED";
        reason = "no expected hash";
        incomplete = true;
      } else if (expected.first != r.loss_hash || expected.second != r.checkpoint_hash) {
        state = "DIVERGENT";
        reason = expected.first != r.loss_hash ? "loss bits differ from the expected" : "checkpoint differs";
        divergent = true;
      }
      auto it = first_device.find(name);
      if (it == first_device.end()) {
        first_device[name] = {r.loss_hash, r.checkpoint_hash};
      } else if (it->second != std::make_pair(r.loss_hash, r.checkpoint_hash)) {
        state = "DIVERGENT";
        reason = "differs from " + devices[0].str();
        divergent = true;
      }
      if (!write_expected.empty()) {
        state = "WRITTEN";
        reason.clear();
      }
      std::printf("%-7s %-8s %-9s steps %3lld  loss %.4f -> %.4f  %6.2f s  losses %s  checkpoint %s",
                  d.str().c_str(), name.c_str(), state, static_cast<long long>(r.steps), r.first_loss,
                  r.last_loss, r.seconds, r.loss_hash.substr(0, 16).c_str(),
                  r.checkpoint_hash.substr(0, 16).c_str());
      if (!reason.empty()) std::printf("  (%s)", reason.c_str());
      std::printf("\n");
      std::fflush(stdout);
      expected_text += "{\"" + name + "\", \"" + r.loss_hash + "\", \"" + r.checkpoint_hash + "\"},\n";
    }
  }
  if (!write_expected.empty()) {
    bl::write_file_atomic(write_expected, expected_text, "expected hashes");
    std::printf("wrote %s\n", write_expected.c_str());
    return 0;
  }
  if (divergent) return 1;
  if (incomplete) return 3;
  return 0;
}

}  // namespace bl::cli
