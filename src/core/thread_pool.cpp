#include "core/thread_pool.h"

#include <atomic>
#include <cerrno>
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

struct ThreadPool::State {
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable done;
  std::vector<std::thread> workers;
  const std::function<void(int64_t)>* task = nullptr;
  int64_t n_tasks = 0;
  std::atomic<int64_t> next{0};
  int active = 0;
  uint64_t generation = 0;
  bool stopping = false;
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
    }
  }

  // Wakes every worker to return and joins it.
  void stop_and_join() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (auto& w : workers) w.join();
    workers.clear();
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
  state_->workers.emplace_back([s = state_.get()] {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(s->mutex);
        s->wake.wait(lock, [&] { return s->stopping || s->generation != seen; });
        if (s->stopping) return;
        seen = s->generation;
      }
      s->run_tasks();
      std::lock_guard<std::mutex> lock(s->mutex);
      if (--s->active == 0) s->done.notify_all();
    }
  });
}

ThreadPool::~ThreadPool() { state_->stop_and_join(); }

void ThreadPool::parallel_for(int64_t n_tasks, const std::function<void(int64_t)>& task) {
  if (n_tasks <= 0) return;
  if (threads_ == 1 || n_tasks == 1) {
    for (int64_t i = 0; i < n_tasks; ++i) task(i);
    return;
  }
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.task = &task;
    s.n_tasks = n_tasks;
    s.next.store(0);
    s.error = nullptr;
    s.active = static_cast<int>(s.workers.size());
    ++s.generation;
  }
  s.wake.notify_all();
  s.run_tasks();
  std::unique_lock<std::mutex> lock(s.mutex);
  s.done.wait(lock, [&] { return s.active == 0; });
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
