// `bitlearn verify`: runs the verification suite and compares every check hash with the hashes
// compiled into the library (src/verify/expected_hashes.inc). See include/bitlearn/verify.h.
//
// Output: one line per check (name, IDENTICAL / DIVERGENT / SKIPPED, 16 hex of the hash, reason),
// the suite time, then `digest: <64 hex>` (SHA-256 over the check hashes in suite order).
// Exit codes: 0 all IDENTICAL; 1 any DIVERGENT; 3 incomplete (something SKIPPED that should have run;
// a CPU-only algorithm skipped on a GPU does not count); 2 bad usage.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "bitlearn/tensor.h"
#include "bitlearn/io.h"
#include "bitlearn/ops_matmul.h"
#include "bitlearn/verify.h"
#include "command.h"
#include "lm_training.h"
#include "neural_training.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "bitlearn/version.h"

#include <unistd.h>

namespace {

struct VerifyOptions {
  std::string device = "cpu";
  int threads = 0;
  bool threads_given = false;
  std::string json;
  bool json_given = false;
  bool quick = false;
  std::string write_expected;
  std::string gemm_profile;  // empty: the process's (BITLEARN_GEMM_PROFILE or contract)
  bool list = false;
  bool neural_training = false;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  bool lm_training = false;
  bl::cli::LmTrainingOptions lm;
};

void print_run(const bl::verify::DeviceRun& run, bool with_device) {
  for (const auto& c : run.checks) {
    std::string hash = c.hash.empty() ? std::string(16, '-') : c.hash.substr(0, 16);
    if (with_device) std::printf("%-7s ", run.device.c_str());
    std::printf("%-22s %-9s %s", c.name.c_str(), bl::verify::state_name(c.state), hash.c_str());
    if (!c.reason.empty()) std::printf("  (%s)", c.reason.c_str());
    std::printf("\n");
  }
}

// Writes the expected-hash source file from CPU runs of both suites (atomically).
int write_expected(const VerifyOptions& o, int threads) {
  using namespace bl::verify;
  bl::ScopedGemmProfile contract(bl::GemmProfile::contract);
  DeviceRun quick = run_suite(Suite::quick, DeviceId{}, threads);
  DeviceRun full = run_suite(Suite::full, DeviceId{}, threads);
  DeviceRun quick_exact, full_exact;
  {
    bl::ScopedGemmProfile exact(bl::GemmProfile::exact);
    quick_exact = run_suite(Suite::quick, DeviceId{}, threads);
    full_exact = run_suite(Suite::full, DeviceId{}, threads);
  }
  std::string text = expected_hashes_source(quick, full, quick_exact, full_exact);
  bl::write_file_atomic(o.write_expected, text, "verify --write-expected");
  std::printf("wrote %zu quick and %zu full hashes to %s (quick digest %s, full digest %s)\n",
              quick.checks.size(), full.checks.size(), o.write_expected.c_str(),
              quick.digest.c_str(), full.digest.c_str());
  return 0;
}

// "" when a report can be written at path, else why not. Probed before any check runs, so an
// unwritable path costs no suite run and never ends a finished run without its report.
std::string unwritable_reason(const std::string& path) {
  if (path.empty()) return "needs a file name (got an empty one)";
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return "'" + path + "' is a directory";
  const auto kind = std::filesystem::status(path, ec).type();
  if (kind == std::filesystem::file_type::character || kind == std::filesystem::file_type::fifo) return "";  // written in place
  const std::string probe = path + ".probe." + std::to_string(static_cast<long>(::getpid()));
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr) return "cannot write beside '" + path + "' (" + std::strerror(errno) + ")";
  std::fclose(f);
  std::remove(probe.c_str());
  return "";
}

int run_verify(const VerifyOptions& o) {
  using namespace bl::verify;
  if (o.threads_given && o.threads < 1) {
    std::fprintf(stderr, "bitlearn verify: --threads must be >= 1, got %d\n", o.threads);
    return 2;
  }
  if (o.threads_given) bl::check_thread_count(o.threads, "--threads");
  if (o.json_given) {
    const std::string why = unwritable_reason(o.json);
    if (!why.empty()) {
      std::fprintf(stderr, "bitlearn verify: --json %s\n", why.c_str());
      return 2;
    }
  }
  const int threads = o.threads > 0 ? o.threads : bl::num_threads();
  if (o.lm_training) {
    bl::cli::LmTrainingOptions lm = o.lm;
    lm.json = o.json;
    return bl::cli::run_lm_training(lm);
  }
  if (o.neural_training)
    return bl::cli::run_neural_training(o.device, threads, o.data_dir, o.write_expected);
  if (!o.write_expected.empty()) return write_expected(o, threads);
  if (o.list) {
    for (const std::string& name : list_checks(o.quick ? Suite::quick : Suite::full))
      std::printf("%s\n", name.c_str());
    return 0;
  }

  Report report;
  report.version = bl::kVersion;
  if (!o.gemm_profile.empty()) bl::set_gemm_profile(bl::parse_gemm_profile(o.gemm_profile, "--gemm-profile"));
  const bool exact_gemm = bl::gemm_profile() == bl::GemmProfile::exact;
  report.contract_profile = exact_gemm ? bl::gemm_profile_name(bl::GemmProfile::exact) : bl::kContractProfile;
  report.suite = o.quick ? Suite::quick : Suite::full;
  report.threads = threads;
  report.cpu_isa = bl::isa_name(bl::active_isa());

  std::vector<DeviceId> devices;
  std::vector<std::string> missing;  // devices asked for that cannot run here
  if (o.device == "all") {
    devices.push_back(DeviceId{});
    if (!bl::cuda_backend_built()) {
      missing.push_back("cuda: bitlearn was built without CUDA");
    } else {
      std::vector<DeviceId> gpus = cuda_devices();
      if (gpus.empty()) missing.push_back("cuda: no CUDA device found");
      devices.insert(devices.end(), gpus.begin(), gpus.end());
    }
  } else {
    DeviceId d;
    try {
      d = parse_device(o.device);
    } catch (const bl::Error& e) {
      std::fprintf(stderr, "bitlearn verify: %s\n", e.what());
      return 2;
    }
    if (d.is_cuda && !bl::cuda_backend_built()) {
      std::fprintf(stderr,
                   "bitlearn verify: --device %s: this bitlearn was built without CUDA "
                   "(rebuild with -DBITLEARN_CUDA=ON, or use --device cpu)\n",
                   o.device.c_str());
      return 2;
    }
    if (d.is_cuda) {
      bool present = false;
      for (const DeviceId& g : cuda_devices()) present = present || g.index == d.index;
      if (!present) {
        missing.push_back(d.name() + ": no such CUDA device");
        d = DeviceId{};
        devices.clear();
      } else {
        devices.push_back(d);
      }
    } else {
      devices.push_back(d);
    }
  }

  std::printf("bitlearn %s, contract %s, suite %s, threads %d, cpu isa %s\n", bl::kVersion,
              report.contract_profile.c_str(), suite_name(report.suite), threads, report.cpu_isa.c_str());
  for (const DeviceId& d : devices) report.runs.push_back(run_suite(report.suite, d, threads));
  compare_devices(report);

  double seconds = 0.0;
  for (const DeviceRun& run : report.runs) {
    print_run(run, report.runs.size() > 1);
    seconds += run.seconds;
  }
  for (const std::string& line : report.cross_device_divergences)
    std::printf("DIVERGENT between devices: %s\n", line.c_str());
  for (const std::string& m : missing) std::printf("SKIPPED device %s\n", m.c_str());
  if (report.runs.size() > 1)
    for (const DeviceRun& run : report.runs)
      std::printf("digest %-7s %s\n", run.device.c_str(), run.digest.c_str());

  report.skipped_devices = missing;
  if (!o.json.empty()) write_report_json(report, o.json);
  std::printf("time: %.2f s\n", seconds);
  // An incomplete run (a device missing, a check skipped) has no digest to compare: printing one
  // would invite comparing it with a complete run's.
  const int code = exit_code(report);
  if (code == 3 || report.runs.empty())
    std::printf("digest: none (incomplete run: %s)\n",
                report.runs.empty() ? "no device ran the suite" : "see the SKIPPED lines above");
  else
    std::printf("digest: %s\n", report.runs[0].digest.c_str());
  return code;
}

void setup(CLI::App& root) {
  auto opts = std::make_shared<VerifyOptions>();
  auto* cmd = root.add_subcommand(
      "verify", "Run the verification suite and compare with the expected hashes (exit 0 identical, "
                "1 divergent, 3 incomplete, 2 bad usage)");
  cmd->add_option("--device", opts->device, "cpu, cuda, cuda:N or all (all: every device, compared "
                                            "with each other)")
      ->capture_default_str();
  auto* threads_opt =
      cmd->add_option("--threads", opts->threads, "CPU threads (default: BITLEARN_THREADS or all cores)");
  auto* json_opt = cmd->add_option("--json", opts->json, "Write a JSON report to FILE (atomically)");
  cmd->add_flag("--quick", opts->quick, "Run the quick suite (smaller workloads, a few seconds)");
  // Hidden: regenerates src/verify/expected_hashes.inc on the CPU (see src/verify/README.md).
  cmd->add_option("--write-expected", opts->write_expected, "")->group("");
  cmd->add_option("--gemm-profile", opts->gemm_profile,
                  "GEMM profile: contract (default) or exact (the exact-integer products of docs/contract.md, "
                  "section 4; its own expected hashes and digest)")
      ->check(CLI::IsMember({"contract", "exact"}));
  cmd->add_flag("--list", opts->list, "Print the names of the suite's checks and exit");
  cmd->add_flag("--neural-training", opts->neural_training,
                "Run the opt-in neural-training workloads (MLP, CNN, LSTM on Fashion-MNIST; minutes)");
  cmd->add_option("--data", opts->data_dir, "Fashion-MNIST folder for --neural-training")
      ->capture_default_str();
  cmd->add_flag("--lm-training", opts->lm_training,
                "Run the language-model training evidence: llama-tiny on Debian's fortunes corpus along the "
                "routes CPU 1 thread, CPU 2 threads, CUDA, CPU->CUDA->CPU (minutes; exit 0 identical, 1 "
                "divergent, 2 bad usage or missing data)");
  cmd->add_option("--lm-steps", opts->lm.steps, "Training steps for --lm-training")->capture_default_str();
  cmd->add_option("--lm-switch-every", opts->lm.switch_every,
                  "Steps between the device switches of the cpu-cuda-cpu route of --lm-training")
      ->capture_default_str();
  cmd->add_option("--lm-routes", opts->lm.routes,
                  "Comma-separated routes for --lm-training: cpu-1t, cpu-2t, cuda, cpu-cuda-cpu (default all)");
  cmd->add_option("--lm-corpus", opts->lm.corpus,
                  "Folder of the fortunes text files for --lm-training (default /usr/share/games/fortunes, "
                  "Debian package fortunes)");
  cmd->add_option("--lm-dir", opts->lm.dir,
                  "Scratch folder for --lm-training (corpus copy, tokenizer, checkpoints, per-route reports; "
                  "default a new temporary folder)");
  cmd->callback([opts, threads_opt, json_opt] {
    opts->threads_given = threads_opt->count() > 0;
    opts->json_given = json_opt->count() > 0;
    int code = run_verify(*opts);
    std::fflush(stdout);
    if (code != 0) throw bl::cli::CommandExit{code};
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
