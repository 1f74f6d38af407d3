// bench_pool: the thread pool's hand-off cost, in microseconds per parallel_for of 2 tasks on a pool
// of 2 threads, less the time of one task (the ideal when both threads run one task each). Tasks
// are empty ("work 0": a caller that runs both tasks itself needs no worker) or busy-wait 20 us
// ("work 20": the call ends when the worker's task does, so the worker's wake-up is on the clock).
// "back to back" calls parallel_for in a loop (the worker never idles long); "gap G us" busy-waits
// G microseconds on the calling thread between calls, as the serial parts of a training step do, so
// a worker that stops spinning sooner than G must be woken from its sleep.
// Each figure is the median of 7 rounds of 2000 calls (gap time not counted). Rows run with
// BITLEARN_POOL_SPIN=0 (workers always sleep) and with the default spin.
//
// usage: build/bench/bench_pool [gap_us ...]   (default gaps: 0 10 30 100)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

void busy_wait(double us) {
  if (us <= 0) return;
  const auto end = Clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(us * 1e3));
  while (Clock::now() < end) {
  }
}

double us_per_call(bl::ThreadPool& pool, double gap_us, double work_us) {
  constexpr int kCalls = 2000;
  std::vector<double> rounds;
  for (int r = 0; r < 7; ++r) {
    double in_pool = 0;
    for (int c = 0; c < kCalls; ++c) {
      busy_wait(gap_us);
      const auto t0 = Clock::now();
      pool.parallel_for(2, [work_us](int64_t) { busy_wait(work_us); });
      in_pool += std::chrono::duration<double, std::micro>(Clock::now() - t0).count() - work_us;
    }
    rounds.push_back(in_pool / kCalls);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> gaps;
  for (int i = 1; i < argc; ++i) gaps.push_back(std::atof(argv[i]));
  if (gaps.empty()) gaps = {0, 10, 30, 100};
  const char* configured = std::getenv("BITLEARN_POOL_SPIN");
  const std::string spin_default = configured && *configured ? configured : "";
  std::printf("%-36s", "us per parallel_for(2 tasks) - work");
  for (double g : gaps) std::printf(g == 0 ? "  back to back" : "     gap %3.0f us", g);
  std::printf("\n");
  for (const std::string& spin : {std::string("0"), spin_default}) {
    if (spin.empty())
      unsetenv("BITLEARN_POOL_SPIN");
    else
      setenv("BITLEARN_POOL_SPIN", spin.c_str(), 1);
    bl::ThreadPool pool(2);     // reads BITLEARN_POOL_SPIN
    us_per_call(pool, 0, 0);    // warm-up
    for (double work : {0.0, 20.0}) {
      const std::string name = "BITLEARN_POOL_SPIN=" + (spin.empty() ? std::string("default") : spin);
      std::printf("%-28s work %2.0f", name.c_str(), work);
      for (double g : gaps) std::printf("  %13.2f", us_per_call(pool, g, work));
      std::printf("\n");
    }
  }
  return 0;
}
