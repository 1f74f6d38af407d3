// thread_pool.h: the CPU worker pool.
//
// The pool runs numbered tasks; which thread runs which task is left to timing, so a kernel must
// make every task's result independent of the thread that runs it. Kernels choose the number of
// tasks from the problem size alone (never from the thread count), which keeps results identical
// for any number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace bl {

// The most threads a pool may have. Far above any useful CPU count (the kernels' task counts do not
// grow past a few hundred), and low enough that a mistyped count fails with a message instead of
// exhausting the address space with thread stacks. The same limit holds for set_num_threads,
// BITLEARN_THREADS and the command line's --threads.
constexpr int kMaxThreads = 1024;

class ThreadPool {
 public:
  // 1 <= threads <= kMaxThreads; threads == 1 runs every task on the calling thread. When the system
  // cannot start a worker thread, the workers already started are stopped and joined and a bl::Error
  // says so (never std::terminate).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  // Runs task(i) for i in [0, n_tasks), returns when all are done. The first exception thrown by a
  // task is rethrown here.
  void parallel_for(int64_t n_tasks, const std::function<void(int64_t)>& task);

 private:
  struct State;
  void start_worker(int t);  // starts worker number t (1-based), or throws
  int threads_;
  std::unique_ptr<State> state_;
};

// The process-wide pool used when a caller passes none. Its size comes from set_num_threads, else
// the environment variable BITLEARN_THREADS, else the number of hardware threads.
// BITLEARN_THREADS, when set and non-empty, must be a whole number in [1, kMaxThreads] (else a
// bl::Error); the hardware count is capped at kMaxThreads.
ThreadPool& default_pool();
void set_num_threads(int threads);
int num_threads();

// Throws a bl::Error unless 1 <= threads <= kMaxThreads; `what` names where the count came from
// ("--threads", "BITLEARN_THREADS") and starts the message.
void check_thread_count(int64_t threads, const char* what);

// For tests: the next pools fail to start their worker thread number `n` (1-based) as though the
// system had refused it; 0 (the default) turns this off.
void set_thread_start_failure_for_testing(int n);

}  // namespace bl
