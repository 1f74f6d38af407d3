// test_hostile_threads.cpp: thread counts a hostile user may ask for. A count above kMaxThreads is
// refused with a message naming the limit, and a pool whose threads the system refuses to start
// joins those it started and throws bl::Error instead of calling std::terminate (SIGABRT).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"
#include "core/thread_pool.h"

namespace bl {
namespace {

std::string error_of(void (*f)()) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HostileThreads, CountAboveTheLimitIsRefused) {
  std::string e = error_of([] { ThreadPool pool(100000); });
  EXPECT_NE(e.find("1024"), std::string::npos) << e;
  e = error_of([] { set_num_threads(100000); });
  EXPECT_NE(e.find("set_num_threads 100000"), std::string::npos) << e;
  EXPECT_NE(e.find("at most 1024"), std::string::npos) << e;
  e = error_of([] { check_thread_count(100000, "--threads"); });
  EXPECT_NE(e.find("--threads 100000: the thread count must be at most 1024"), std::string::npos) << e;
  e = error_of([] { check_thread_count(-3, "--threads"); });
  EXPECT_NE(e.find("--threads -3: the thread count must be at least 1"), std::string::npos) << e;
  EXPECT_EQ(error_of([] { check_thread_count(kMaxThreads, "--threads"); }), "");
}

TEST(HostileThreads, RefusedThreadStartJoinsTheOthersAndThrows) {
  set_thread_start_failure_for_testing(3);  // workers 1 and 2 start, worker 3 is refused
  std::string e = error_of([] { ThreadPool pool(8); });
  set_thread_start_failure_for_testing(0);
  EXPECT_NE(e.find("refused to start thread 4 of the 8"), std::string::npos) << e;
  EXPECT_NE(e.find("--threads"), std::string::npos) << e;
  // The next pool starts normally and runs its tasks.
  ThreadPool pool(8);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(100, [&](int64_t i) { sum += i; });
  EXPECT_EQ(sum.load(), 4950);
}

#if defined(__SANITIZE_ADDRESS__)
#define BL_HOSTILE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BL_HOSTILE_ASAN 1
#endif
#endif

// The real failure: a child process whose address space has no room for the thread stacks.
TEST(HostileThreads, AddressSpaceLimitGivesAnErrorNotAbort) {
#ifdef BL_HOSTILE_ASAN
  GTEST_SKIP() << "an address-space limit cannot hold AddressSanitizer's shadow memory";
#else
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child's mapped size now plus 64 MiB: room for the error message, not for 256 stacks.
    long pages = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    if (pages <= 0) _exit(4);
    const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (64u << 20);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(5);
    try {
      ThreadPool pool(256);
    } catch (const Error& e) {
      _exit(std::string(e.what()).find("refused to start thread") != std::string::npos ? 0 : 2);
    }
    _exit(3);  // every thread started: the limit did not bite
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "this system starts 256 threads within 64 MiB";
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

}  // namespace
}  // namespace bl
