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

class ThreadPool {
 public:
  // threads >= 1; threads == 1 runs every task on the calling thread.
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
  int threads_;
  std::unique_ptr<State> state_;
};

// The process-wide pool used when a caller passes none. Its size comes from set_num_threads, else
// the environment variable BITLEARN_THREADS, else the number of hardware threads.
ThreadPool& default_pool();
void set_num_threads(int threads);
int num_threads();

}  // namespace bl
