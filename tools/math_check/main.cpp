// bitlearn_math_check: the accuracy checker of the contract math functions, and the CPU = GPU
// sweep. See tools/math_check/README.md.
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "check.h"
#include "core/error.h"
#include "kernels/math_map.h"
#include "report.h"
#include "sweep.h"

int main(int argc, char** argv) {
  CLI::App app{"bitlearn_math_check: accuracy of the contract math functions against MPFR, and "
               "per-chunk output hashes for the CPU = GPU sweep"};
  std::string fn = "all";
  bool exhaustive = false, verbose = false, force_mpfr = false;
  uint64_t sample = 1ull << 24;
  std::string json_path, sweep_path, device = "cpu", compare_path, note;
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads < 1) threads = 1;
  app.add_option("--fn", fn, "function name or 'all'");
  app.add_flag("--exhaustive", exhaustive, "all 2^32 inputs (pow: still sampled)");
  app.add_option("--sample", sample, "number of spread inputs (pairs for pow) plus special values");
  app.add_option("--json", json_path, "write the full report as JSON");
  app.add_option("--threads", threads, "worker threads")->check(CLI::Range(1, 1024));
  app.add_flag("--verbose", verbose, "print every special value");
  app.add_flag("--mpfr-all", force_mpfr, "use MPFR for every input (slow; validates the oracle)");
  bool self_check = false, sabotage = false;
  app.add_flag("--sabotage", sabotage,
               "test the checker: perturb sampled results by 2 ulps and make NaNs non-canonical");
  app.add_flag("--oracle-self-check", self_check,
               "compare the oracle's float64 path with MPFR alone on --sample inputs, then exit");
  app.add_option("--sweep-hashes", sweep_path, "sweep mode: write per-chunk SHA-256 hashes to FILE");
  app.add_option("--device", device,
                 "sweep device: cpu, cuda, or file (compare the existing FILE with --compare)");
  app.add_option("--compare", compare_path, "sweep mode: compare with this reference hash file");
  app.add_option("--note", note, "sweep mode: comment line for the hash file");
  int sweep_chunks = 0, chunk_step = 1;
  app.add_option("--sweep-chunk-step", chunk_step,
                 "sweep mode: only every S-th chunk of the unary functions (0, S, 2S, ...)");
  app.add_option("--sweep-chunks", sweep_chunks, "sweep mode: only the first K chunks per function");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!sweep_path.empty()) {
      mathcheck::SweepOptions so;
      so.out_path = sweep_path;
      so.device = device;
      so.compare_path = compare_path;
      so.fn = fn;
      so.note = note;
      so.threads = threads;
      so.max_chunks = sweep_chunks;
      so.chunk_step = chunk_step;
      return mathcheck::run_sweep(so);
    }
    std::vector<bl::MathFn> fns;
    if (fn == "all") fns = bl::all_math_fns();
    else fns.push_back(bl::math_fn_from_name(fn));
    BL_CHECK(sample >= 1, "bitlearn_math_check: --sample must be >= 1");

    mathcheck::CheckOptions opts;
    opts.exhaustive = exhaustive;
    opts.sample = sample;
    opts.threads = threads;
    opts.force_mpfr = force_mpfr;
    opts.sabotage = sabotage;
    if (self_check) {
      uint64_t total_bad = 0;
      for (bl::MathFn f : fns) {
        const uint64_t bad = mathcheck::oracle_self_check(f, opts);
        std::printf("%-10s oracle self-check: %s (%llu disagreements)\n", bl::math_fn_name(f),
                    bad ? "FAIL" : "OK", static_cast<unsigned long long>(bad));
        total_bad += bad;
      }
      return total_bad == 0 ? 0 : 1;
    }
    std::printf("bitlearn_math_check: %s, %d thread(s), oracle %s\n",
                exhaustive ? "exhaustive (2^32 inputs per unary function)"
                           : ("sample of " + std::to_string(sample) + " inputs per function").c_str(),
                threads, force_mpfr ? "MPFR everywhere" : "float64, MPFR near rounding boundaries");
    std::vector<mathcheck::FnReport> reports;
    bool ok = true;
    for (bl::MathFn f : fns) {
      reports.push_back(mathcheck::check_function(f, opts));
      mathcheck::print_report(reports.back(), verbose);
      std::fflush(stdout);
      ok = ok && reports.back().passed();
    }
    if (!json_path.empty()) mathcheck::write_json(json_path, reports, opts);
    std::printf("%s\n", ok ? "PASS: every function faithful, every NaN canonical"
                           : "FAIL: see the FAIL lines above");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bitlearn_math_check: error: %s\n", e.what());
    return 2;
  }
}
