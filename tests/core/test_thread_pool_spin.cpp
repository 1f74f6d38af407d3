// test_thread_pool_spin.cpp: the pool's hand-off (workers spin briefly on an atomic before they
// sleep on a condition variable; BITLEARN_POOL_SPIN sets how long). Every task of every call must
// run exactly once and parallel_for must return, whatever the timing: back to back, with gaps
// around the spin window (a worker stopping its spin just as work arrives), with more threads than
// cores, and with pools destroyed right after a call. A lost wake-up would hang these loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"

namespace bl {
namespace {

// Sets BITLEARN_POOL_SPIN for the pools built in its lifetime, then restores it.
class SpinEnv {
 public:
  explicit SpinEnv(const char* value) {
    const char* old = std::getenv("BITLEARN_POOL_SPIN");
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value)
      ::setenv("BITLEARN_POOL_SPIN", value, 1);
    else
      ::unsetenv("BITLEARN_POOL_SPIN");
  }
  ~SpinEnv() {
    if (had_)
      ::setenv("BITLEARN_POOL_SPIN", old_.c_str(), 1);
    else
      ::unsetenv("BITLEARN_POOL_SPIN");
  }

 private:
  bool had_ = false;
  std::string old_;
};

void busy_wait_us(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

// Runs `calls` parallel_for calls of varying task counts on `pool`, pausing gap(c) microseconds
// before call c, and checks every task ran exactly once.
template <class Gap>
void run_calls(ThreadPool& pool, int calls, Gap gap) {
  std::vector<std::atomic<int>> hits(64);
  for (int c = 0; c < calls; ++c) {
    const int64_t n = 2 + c % 63;
    for (auto& h : hits) h.store(0, std::memory_order_relaxed);
    busy_wait_us(gap(c));
    pool.parallel_for(n, [&](int64_t i) { hits[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed); });
    for (int64_t i = 0; i < 64; ++i) {
      const int expect = i < n ? 1 : 0;
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), expect) << "call " << c << " task " << i << " of " << n;
    }
  }
}

struct SpinCase {
  const char* spin;  // BITLEARN_POOL_SPIN, nullptr = default
  int threads;
};

class PoolSpin : public ::testing::TestWithParam<SpinCase> {};

TEST_P(PoolSpin, EveryTaskRunsOnceWhateverTheGap) {
  SpinEnv env(GetParam().spin);
  ThreadPool pool(GetParam().threads);
  run_calls(pool, 300, [](int) { return 0; });                     // back to back: workers spinning
  run_calls(pool, 100, [](int c) { return c % 7 == 0 ? 120 : 0; });  // past the default spin: workers asleep
  run_calls(pool, 200, [](int c) { return c % 60; });               // gaps across the spin window's end
}

TEST_P(PoolSpin, FirstExceptionIsRethrownAndThePoolStaysUsable) {
  SpinEnv env(GetParam().spin);
  ThreadPool pool(GetParam().threads);
  for (int round = 0; round < 20; ++round) {
    EXPECT_THROW(pool.parallel_for(16,
                                   [&](int64_t i) {
                                     if (i == round % 16) throw std::runtime_error("task failed");
                                   }),
                 std::runtime_error);
    std::atomic<int64_t> sum{0};
    pool.parallel_for(16, [&](int64_t i) { sum += i; });
    EXPECT_EQ(sum.load(), 120);
  }
}

TEST_P(PoolSpin, PoolDestroyedRightAfterACall) {
  SpinEnv env(GetParam().spin);
  for (int k = 0; k < 50; ++k) {
    ThreadPool pool(GetParam().threads);
    std::atomic<int64_t> sum{0};
    pool.parallel_for(8, [&](int64_t i) { sum += i; });
    EXPECT_EQ(sum.load(), 28);
  }
}

// "0": never spin (workers sleep at once); "1": a 1 us window, so most hand-offs race the end of
// the spin; default (50 us). 8 threads on a small machine: more spinners than cores.
INSTANTIATE_TEST_SUITE_P(Modes, PoolSpin,
                         ::testing::Values(SpinCase{"0", 2}, SpinCase{"1", 2}, SpinCase{nullptr, 2},
                                           SpinCase{"0", 3}, SpinCase{"1", 3}, SpinCase{nullptr, 3},
                                           SpinCase{nullptr, 8}, SpinCase{"1", 8}),
                         [](const ::testing::TestParamInfo<SpinCase>& info) {
                           return std::string("Spin") + (info.param.spin ? info.param.spin : "Default") + "Threads" +
                                  std::to_string(info.param.threads);
                         });

// Two pools that each have more threads than the machine has cores, driven at once from two
// threads: spinning waiters must yield to the threads they wait for, so this finishes promptly.
TEST(PoolSpinOversubscribed, TwoBusyPoolsAtOnceFinish) {
  SpinEnv env(nullptr);
  const int threads = 2 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto drive = [threads] {
    ThreadPool pool(threads);
    run_calls(pool, 300, [](int c) { return c % 5 == 0 ? 30 : 0; });
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::thread other(drive);
  drive();
  other.join();
  // Generous: the loops take milliseconds; a starved waiter would take far longer (timeslices).
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
}

std::string pool_error(const char* spin) {
  SpinEnv env(spin);
  try {
    ThreadPool pool(2);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(PoolSpinEnv, BadValuesAreRefusedWithAMessage) {
  for (const char* bad : {"abc", "-1", "100001", "5us", "1e3"}) {
    const std::string e = pool_error(bad);
    EXPECT_NE(e.find(std::string("BITLEARN_POOL_SPIN='") + bad + "'"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("microseconds from 0 (no spinning) to 100000"), std::string::npos) << bad << ": " << e;
  }
  for (const char* good : {"0", "1", "50", "100000", ""}) EXPECT_EQ(pool_error(good), "") << good;
}

}  // namespace
}  // namespace bl
