#include "core/thread_pool.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/error.h"

namespace bl {

namespace {

// How long a thread that waits for the pool spins (checking an atomic, with a pause instruction)
// before it sleeps on a condition variable. Waking a sleeping thread costs tens of microseconds on
// a virtual machine, more than a small kernel's whole work; a thread still spinning sees new work
// within a fraction of a microsecond. BITLEARN_POOL_SPIN sets it in microseconds (0: never spin).
constexpr int64_t kDefaultSpinMicroseconds = 50;
constexpr int64_t kMaxSpinMicroseconds = 100000;

int64_t spin_microseconds() {
  const char* env = std::getenv("BITLEARN_POOL_SPIN");
  if (env == nullptr || env[0] == '\0') return kDefaultSpinMicroseconds;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(env, &end, 10);
  BL_CHECK(errno == 0 && end != env && *end == '\0' && n >= 0 && n <= kMaxSpinMicroseconds, "BITLEARN_POOL_SPIN='",
           env, "': expected a whole number of microseconds from 0 (no spinning) to ", kMaxSpinMicroseconds);
  return n;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until ready() holds or `spin` has passed; returns ready(). Every few dozen pauses it reads
// the clock, and every kYieldEvery it yields the core, so that on an oversubscribed machine the
// thread it waits for gets to run (sched_yield returns at once when nothing else is runnable, but
// costs a system call, so not on every check).
constexpr std::chrono::microseconds kYieldEvery{10};

template <class Ready>
bool spin_until(std::chrono::nanoseconds spin, Ready ready) {
  if (spin.count() <= 0) return ready();
  auto now = std::chrono::steady_clock::now();
  const auto deadline = now + spin;
  auto next_yield = now + kYieldEvery;
  for (;;) {
    for (int k = 0; k < 64; ++k) {
      if (ready()) return true;
      cpu_relax();
    }
    now = std::chrono::steady_clock::now();
    if (now >= deadline) return ready();
    if (now >= next_yield) {
      std::this_thread::yield();
      next_yield = now + kYieldEvery;
    }
  }
}

}  // namespace

// Hand-off. `gate` holds 2 * generation + (1 while the generation's tasks may be claimed).
// parallel_for stores the task fields, then opens a new generation (release) under the mutex; a
// worker spinning on `gate` (acquire) starts without a system call, a sleeping one is woken through
// `wake`. Workers sleep only after checking the gate under the mutex, so a generation opened
// between their last spin check and their sleep is never lost.
// The caller waits for its tasks, not for its workers: once `pending` (tasks not yet finished)
// reaches zero it closes the gate and waits only for workers inside run_tasks (`inside`). A worker
// enters by incrementing `inside` and then re-reading the gate (both sequentially consistent, as is
// the caller's close then read of `inside`), so either the caller waits for it or it sees the gate
// closed and leaves without reading the task fields, which the next call may then rewrite. A worker
// descheduled or slow to wake therefore never delays a call whose tasks the others have finished.
// Waits spin first (spin_until), then sleep; the thread that ends a wait notifies under the mutex.
struct ThreadPool::State {
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable done;
  std::vector<std::thread> workers;
  const std::function<void(int64_t)>* task = nullptr;
  int64_t n_tasks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> pending{0};
  std::atomic<int> inside{0};
  std::atomic<uint64_t> gate{0};
  std::atomic<bool> stopping{false};
  int sleeping = 0;              // workers waiting on `wake` (under the mutex)
  bool caller_sleeping = false;  // parallel_for waiting on `done` (under the mutex)
  std::chrono::nanoseconds spin{0};
  std::exception_ptr error;

  void run_tasks() {
    for (;;) {
      int64_t i = next.fetch_add(1);
      if (i >= n_tasks) return;
      try {
        (*task)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
      }
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) notify_caller();
    }
  }

  void notify_caller() {
    std::lock_guard<std::mutex> lock(mutex);
    if (caller_sleeping) done.notify_all();
  }

  // The calling thread of parallel_for waits until ready() holds.
  template <class Ready>
  void caller_wait(Ready ready) {
    if (spin_until(spin, ready)) return;
    std::unique_lock<std::mutex> lock(mutex);
    caller_sleeping = true;
    done.wait(lock, ready);
    caller_sleeping = false;
  }

  // Wakes every worker to return and joins it.
  void stop_and_join() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping.store(true);
    }
    wake.notify_all();
    for (auto& w : workers) w.join();
    workers.clear();
  }

  void worker_loop() {
    uint64_t seen = 0;  // the last generation this worker looked at
    for (;;) {
      auto ready = [&] {
        return stopping.load(std::memory_order_acquire) || (gate.load(std::memory_order_acquire) >> 1) != seen;
      };
      if (!spin_until(spin, ready)) {
        std::unique_lock<std::mutex> lock(mutex);
        ++sleeping;
        wake.wait(lock, ready);
        --sleeping;
      }
      if (stopping.load(std::memory_order_acquire)) return;
      const uint64_t g = gate.load(std::memory_order_acquire);
      seen = g >> 1;
      if ((g & 1) == 0) continue;  // closed already: the others finished its tasks
      inside.fetch_add(1, std::memory_order_seq_cst);
      if (gate.load(std::memory_order_seq_cst) == g) run_tasks();
      if (inside.fetch_sub(1, std::memory_order_acq_rel) == 1) notify_caller();
    }
  }
};

namespace {
std::atomic<int> g_fail_thread{0};
}  // namespace

void set_thread_start_failure_for_testing(int n) { g_fail_thread.store(n); }

void check_thread_count(int64_t threads, const char* what) {
  BL_CHECK(threads >= 1, what, " ", threads, ": the thread count must be at least 1");
  BL_CHECK(threads <= kMaxThreads, what, " ", threads, ": the thread count must be at most ", kMaxThreads,
           " (the limit of the CPU thread pool)");
}

ThreadPool::ThreadPool(int threads) : threads_(threads), state_(new State) {
  BL_CHECK(threads >= 1 && threads <= kMaxThreads, "ThreadPool: thread count must lie in [1, ", kMaxThreads,
           "], got ", threads);
  state_->spin = std::chrono::microseconds(spin_microseconds());
  // A constructor that throws runs no destructor: the workers already started must be joined here,
  // or their std::thread destructors would call std::terminate.
  try {
    state_->workers.reserve(static_cast<size_t>(threads - 1));
    for (int t = 1; t < threads; ++t) start_worker(t);
  } catch (const std::exception& e) {
    const size_t started = state_->workers.size();
    state_->stop_and_join();
    throw Error(detail::concat("ThreadPool: the system refused to start thread ", started + 2, " of the ", threads,
                               " asked for (", e.what(), "); ask for fewer threads (--threads or BITLEARN_THREADS)"));
  }
}

void ThreadPool::start_worker(int t) {
  const int fail = g_fail_thread.load();
  if (fail > 0 && t == fail)
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            "thread start refused for a test");
  state_->workers.emplace_back([s = state_.get()] { s->worker_loop(); });
}

ThreadPool::~ThreadPool() { state_->stop_and_join(); }

void ThreadPool::parallel_for(int64_t n_tasks, const std::function<void(int64_t)>& task) {
  if (n_tasks <= 0) return;
  if (threads_ == 1 || n_tasks == 1) {
    for (int64_t i = 0; i < n_tasks; ++i) task(i);
    return;
  }
  State& s = *state_;
  // No worker reads these fields now: the last call closed the gate and saw no worker inside.
  s.task = &task;
  s.n_tasks = n_tasks;
  s.next.store(0, std::memory_order_relaxed);
  s.pending.store(n_tasks, std::memory_order_relaxed);
  s.error = nullptr;
  const uint64_t generation = (s.gate.load(std::memory_order_relaxed) >> 1) + 1;
  bool any_sleeping;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.gate.store(2 * generation + 1, std::memory_order_release);
    any_sleeping = s.sleeping > 0;
  }
  if (any_sleeping) s.wake.notify_all();
  s.run_tasks();
  s.caller_wait([&] { return s.pending.load(std::memory_order_acquire) == 0; });
  s.gate.store(2 * generation, std::memory_order_seq_cst);
  s.caller_wait([&] { return s.inside.load(std::memory_order_seq_cst) == 0; });
  s.task = nullptr;
  if (s.error) std::rethrow_exception(s.error);
}

namespace {
std::mutex g_pool_mutex;
std::unique_ptr<ThreadPool> g_pool;
int g_requested = 0;

int initial_threads() {
  const char* env = std::getenv("BITLEARN_THREADS");
  if (env != nullptr && env[0] != '\0') {
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(env, &end, 10);
    BL_CHECK(errno == 0 && end != env && *end == '\0', "BITLEARN_THREADS='", env,
             "': expected a whole number of threads from 1 to ", kMaxThreads);
    check_thread_count(n, "BITLEARN_THREADS");
    return static_cast<int>(n);
  }
  unsigned hw = std::thread::hardware_concurrency();
  if (hw < 1) return 1;
  return hw > static_cast<unsigned>(kMaxThreads) ? kMaxThreads : static_cast<int>(hw);
}
}  // namespace

ThreadPool& default_pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool) g_pool.reset(new ThreadPool(g_requested >= 1 ? g_requested : initial_threads()));
  return *g_pool;
}

void set_num_threads(int threads) {
  check_thread_count(threads, "set_num_threads");
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_requested = threads;
  if (g_pool && g_pool->threads() != threads) g_pool.reset();
}

int num_threads() { return default_pool().threads(); }

}  // namespace bl
