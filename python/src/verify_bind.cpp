// bitlearn.verify() and `python -m bitlearn ...`: the verification suite and the program's own
// command line, run in this process.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "bitlearn/tensor.h"
#include "bitlearn/verify.h"
#include "command.h"
#include "convert.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "bitlearn/ops_matmul.h"
#include "bitlearn/version.h"

namespace bl::py {

namespace {

// Runs the suite on the devices asked for ("cpu", "cuda:N" or "all") like `bitlearn verify` and
// returns the report as the JSON text `bitlearn verify --json` writes.
std::string verify_json(const std::string& device, bool quick, int threads) {
  using namespace bl::verify;
  if (threads > 0) check_thread_count(threads, "verify: threads");
  Report report;
  report.version = kVersion;
  report.contract_profile =
      gemm_profile() == GemmProfile::exact ? gemm_profile_name(GemmProfile::exact) : kContractProfile;
  report.suite = quick ? Suite::quick : Suite::full;
  report.threads = threads > 0 ? threads : num_threads();
  report.cpu_isa = isa_name(active_isa());
  std::vector<DeviceId> devices;
  if (device == "all") {
    devices.push_back(DeviceId{});
    if (!cuda_backend_built()) {
      report.skipped_devices.push_back("cuda: bitlearn was built without CUDA");
    } else {
      std::vector<DeviceId> gpus = cuda_devices();
      if (gpus.empty()) report.skipped_devices.push_back("cuda: no CUDA device found");
      devices.insert(devices.end(), gpus.begin(), gpus.end());
    }
  } else {
    DeviceId d = parse_device(device);
    BL_CHECK(!d.is_cuda || cuda_backend_built(), "verify: device ", device,
             ": this bitlearn was built without CUDA (use device='cpu')");
    bool present = !d.is_cuda;
    for (const DeviceId& g : cuda_devices()) present = present || g.index == d.index;
    if (present) devices.push_back(d);
    else report.skipped_devices.push_back(d.name() + ": no such CUDA device");
  }
  for (const DeviceId& d : devices) report.runs.push_back(run_suite(report.suite, d, report.threads));
  compare_devices(report);
  // write_report_json is the one serializer of reports; a private temporary file carries it.
  std::string path = (std::filesystem::temp_directory_path() /
                      ("bitlearn-verify-" + std::to_string(static_cast<long>(::getpid())) + ".json"))
                         .string();
  write_report_json(report, path);
  std::ifstream f(path, std::ios::binary);
  std::stringstream text;
  text << f.rdbuf();
  f.close();
  std::remove(path.c_str());
  return text.str();
}

// The `bitlearn` command line with args (without the program name); returns its exit code.
int run_cli(const std::vector<std::string>& args) {
  std::vector<std::string> storage;
  storage.reserve(args.size() + 1);
  storage.push_back("bitlearn");
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  int code = cli::run_command_line(static_cast<int>(storage.size()), argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  return code;
}

}  // namespace

void bind_verify(nb::module_& m) {
  m.attr("__version__") = kVersion;
  m.attr("contract_profile") = kContractProfile;
  m.def("set_gemm_profile",
        [](const std::string& name) { set_gemm_profile(parse_gemm_profile(name, "set_gemm_profile")); },
        nb::arg("name"),
        "GEMM profile of every later matrix product of the process: 'contract' (the default, fixed-order "
        "fp32) or 'exact' (bitlearn.exact_gemm.v1: exact integer products rounded once).");
  m.def("gemm_profile", [] { return std::string(gemm_profile_short_name(gemm_profile())); },
        "The process's GEMM profile: 'contract' or 'exact'.");
  m.def("_verify_json",
        [](const std::string& device, bool quick, int threads) {
          nb::gil_scoped_release r;
          return verify_json(device, quick, threads);
        },
        nb::arg("device") = "cpu", nb::arg("quick") = false, nb::arg("threads") = 0);
  m.def("_run_cli",
        [](const std::vector<std::string>& args) {
          nb::gil_scoped_release r;
          return run_cli(args);
        },
        nb::arg("args"), "Runs the `bitlearn` command line in this process; returns its exit code.");
  m.def("cpu_isa", [] { return std::string(isa_name(active_isa())); });
}

}  // namespace bl::py
