#include "core/thread_pool.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
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
};

ThreadPool::ThreadPool(int threads) : threads_(threads), state_(new State) {
  BL_CHECK(threads >= 1, "ThreadPool: thread count must be >= 1, got ", threads);
  for (int t = 1; t < threads; ++t) {
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
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  for (auto& w : state_->workers) w.join();
}

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
  if (const char* env = std::getenv("BITLEARN_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1) return n;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw >= 1 ? static_cast<int>(hw) : 1;
}
}  // namespace

ThreadPool& default_pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool) g_pool.reset(new ThreadPool(g_requested >= 1 ? g_requested : initial_threads()));
  return *g_pool;
}

void set_num_threads(int threads) {
  BL_CHECK(threads >= 1, "set_num_threads: thread count must be >= 1, got ", threads);
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_requested = threads;
  if (g_pool && g_pool->threads() != threads) g_pool.reset();
}

int num_threads() { return default_pool().threads(); }

}  // namespace bl
