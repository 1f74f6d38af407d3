// test_block_pool.cpp: the caching allocator's size classes, best-fit free list, out-of-memory
// release-and-retry and thread safety, run against a host-memory fake of cudaMalloc / cudaFree.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/block_pool.h"
#include "core/error.h"

namespace {

constexpr size_t kMiB = size_t(1) << 20;

// Host memory with a capacity, counting calls like cudaMalloc / cudaFree would be counted.
class FakeSource final : public bl::BlockSource {
 public:
  explicit FakeSource(size_t capacity) : capacity_(capacity) {}
  ~FakeSource() override { EXPECT_EQ(held_, 0u) << "blocks left with the source's caller"; }
  void* allocate(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++allocations;
    if (held_ + bytes > capacity_) return nullptr;
    held_ += bytes;
    return std::malloc(bytes);
  }
  void release(void* ptr, size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++releases;
    held_ -= bytes;
    std::free(ptr);
  }
  size_t held() const { return held_; }
  std::atomic<int> allocations{0};
  std::atomic<int> releases{0};

 private:
  std::mutex mutex_;
  size_t capacity_;
  size_t held_ = 0;
};

TEST(BlockPool, SizeClasses) {
  EXPECT_EQ(bl::block_size_class(0), 512u);
  EXPECT_EQ(bl::block_size_class(1), 512u);
  EXPECT_EQ(bl::block_size_class(512), 512u);
  EXPECT_EQ(bl::block_size_class(513), 1024u);
  EXPECT_EQ(bl::block_size_class(4099), 4608u);
  EXPECT_EQ(bl::block_size_class(kMiB), kMiB);
  EXPECT_EQ(bl::block_size_class(kMiB + 1), 2 * kMiB);
  EXPECT_EQ(bl::block_size_class(3 * kMiB), 4 * kMiB);
  EXPECT_EQ(bl::block_size_class(100 * kMiB + 7), 102 * kMiB);
  EXPECT_TRUE(bl::block_fits(1024, 1024));
  EXPECT_TRUE(bl::block_fits(2048, 1024));   // small: up to twice the request
  EXPECT_FALSE(bl::block_fits(2560, 1024));
  EXPECT_FALSE(bl::block_fits(512, 1024));   // too small
  EXPECT_TRUE(bl::block_fits(10 * kMiB, 8 * kMiB));  // large: up to a quarter more
  EXPECT_FALSE(bl::block_fits(12 * kMiB, 8 * kMiB));
}

TEST(BlockPool, ReuseGivesTheCachedBlockWithoutANewAllocation) {
  FakeSource source(64 * kMiB);
  bl::BlockPool pool(source, true, "fake");
  void* a = pool.allocate(1000, "test");
  ASSERT_TRUE(pool.free(a));
  bl::BlockPoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.bytes_cached, 1024u);
  void* b = pool.allocate(1000, "test");
  EXPECT_EQ(a, b);
  s = pool.stats();
  EXPECT_EQ(s.source_allocations, 1u);
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.bytes_in_use, 1024u);
  EXPECT_EQ(s.bytes_cached, 0u);
  EXPECT_EQ(source.allocations.load(), 1);
  pool.free(b);
  EXPECT_EQ(pool.release_cached(), 1024u);
  EXPECT_EQ(source.releases.load(), 1);
}

TEST(BlockPool, BestFitTakesTheSmallestBlockThatFits) {
  FakeSource source(64 * kMiB);
  bl::BlockPool pool(source, true, "fake");
  void* big = pool.allocate(4096, "test");
  void* mid = pool.allocate(2048, "test");
  void* small = pool.allocate(512, "test");
  pool.free(big);
  pool.free(mid);
  pool.free(small);
  EXPECT_EQ(pool.allocate(1500, "test"), mid);  // class 1536: 2048 fits, 4096 is too big
  void* fresh = pool.allocate(1500, "test");     // 4096 > 2 * 1536: a new block
  EXPECT_NE(fresh, big);
  EXPECT_EQ(pool.allocate(3000, "test"), big);
  EXPECT_EQ(pool.allocate(1, "test"), small);
  EXPECT_EQ(pool.stats().source_allocations, 4u);
  EXPECT_EQ(pool.stats().cache_hits, 3u);
  for (void* p : {mid, fresh, big, small}) pool.free(p);
  pool.release_cached();
}

TEST(BlockPool, LargeRequestsDoNotTakeMuchLargerBlocks) {
  FakeSource source(512 * kMiB);
  bl::BlockPool pool(source, true, "fake");
  void* huge = pool.allocate(100 * kMiB, "test");
  pool.free(huge);
  void* ten = pool.allocate(10 * kMiB, "test");
  EXPECT_NE(ten, huge);
  EXPECT_EQ(pool.stats().source_allocations, 2u);
  void* again = pool.allocate(90 * kMiB, "test");  // class 90 MiB; 100 <= 90 + 22.5
  EXPECT_EQ(again, huge);
  pool.free(ten);
  pool.free(again);
  pool.release_cached();
}

TEST(BlockPool, ZeroOneAndOddSizesGetDistinctBlocks) {
  FakeSource source(64 * kMiB);
  bl::BlockPool pool(source, true, "fake");
  std::vector<void*> blocks;
  std::set<void*> distinct;
  for (size_t bytes : {size_t(0), size_t(0), size_t(1), size_t(3), size_t(511), size_t(513),
                       size_t(65537), kMiB - 1, kMiB + 3}) {
    void* p = pool.allocate(bytes, "test");
    ASSERT_NE(p, nullptr);
    std::memset(p, 0xab, bytes);  // the whole request is usable
    blocks.push_back(p);
    distinct.insert(p);
  }
  EXPECT_EQ(distinct.size(), blocks.size());
  for (void* p : blocks) EXPECT_TRUE(pool.free(p));
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  pool.release_cached();
}

TEST(BlockPool, OutOfMemoryReleasesTheCacheAndRetriesOnce) {
  FakeSource source(8 * kMiB);
  bl::BlockPool pool(source, true, "fake");
  void* six = pool.allocate(6 * kMiB, "test");
  pool.free(six);                                   // 6 MiB cached, source full but for 2 MiB
  void* four = pool.allocate(4 * kMiB, "test");     // 6 MiB does not fit class 4; source says no
  ASSERT_NE(four, nullptr);
  bl::BlockPoolStats s = pool.stats();
  EXPECT_EQ(s.oom_releases, 1u);
  EXPECT_EQ(s.bytes_cached, 0u);
  EXPECT_EQ(s.bytes_in_use, 4 * kMiB);
  EXPECT_EQ(s.source_releases, 1u);
  pool.free(four);
  pool.release_cached();
}

TEST(BlockPool, OutOfMemoryThrowsNamingTheOpAndSizeAndLeavesThePoolUsable) {
  FakeSource source(8 * kMiB);
  bl::BlockPool pool(source, true, "fake:0");
  void* kept = pool.allocate(2 * kMiB, "test");
  void* cached = pool.allocate(4 * kMiB, "test");
  pool.free(cached);
  try {
    pool.allocate(7 * kMiB, "my_op");
    FAIL() << "expected bl::Error";
  } catch (const bl::Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("my_op"), std::string::npos) << m;
    EXPECT_NE(m.find("7340032 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("out of memory on fake:0"), std::string::npos) << m;
  }
  EXPECT_EQ(pool.stats().bytes_cached, 0u);  // the cache was released
  EXPECT_EQ(pool.stats().bytes_in_use, 2 * kMiB);
  void* after = pool.allocate(4 * kMiB, "test");
  EXPECT_NE(after, nullptr);
  pool.free(after);
  pool.free(kept);
  pool.release_cached();
}

TEST(BlockPool, ImpossibleSizesAreRefusedWithAClearError) {
  FakeSource source(8 * kMiB);
  bl::BlockPool pool(source, true, "fake");
  EXPECT_THROW(pool.allocate(SIZE_MAX, "huge_op"), bl::Error);
  EXPECT_THROW(pool.allocate(bl::kBlockMaxRequest + 1, "huge_op"), bl::Error);
  EXPECT_EQ(source.allocations.load(), 0);
  EXPECT_THROW(pool.allocate(bl::kBlockMaxRequest, "huge_op"), bl::Error);  // source says no
}

TEST(BlockPool, CachingOffGivesEveryBlockBack) {
  FakeSource source(64 * kMiB);
  bl::BlockPool pool(source, false, "fake");
  for (int i = 0; i < 5; ++i) pool.free(pool.allocate(1000, "test"));
  bl::BlockPoolStats s = pool.stats();
  EXPECT_EQ(s.source_allocations, 5u);
  EXPECT_EQ(s.source_releases, 5u);
  EXPECT_EQ(s.cache_hits, 0u);
  EXPECT_EQ(s.bytes_cached, 0u);
  EXPECT_EQ(source.held(), 0u);
}

TEST(BlockPool, UnknownPointersAreNotTaken) {
  FakeSource source(64 * kMiB);
  bl::BlockPool pool(source, true, "fake");
  int local = 0;
  EXPECT_FALSE(pool.free(&local));
  void* p = pool.allocate(8, "test");
  EXPECT_TRUE(pool.free(p));
  EXPECT_FALSE(pool.free(p));  // a second free of the same block is refused
  pool.release_cached();
}

TEST(BlockPool, ManyThreadsNeverShareABlock) {
  FakeSource source(size_t(1) << 30);
  bl::BlockPool pool(source, true, "fake");
  constexpr int kThreads = 6, kRounds = 800;
  std::atomic<int> corrupted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint32_t state = 12345u + static_cast<uint32_t>(t);
      std::vector<std::pair<unsigned char*, size_t>> held;
      for (int r = 0; r < kRounds; ++r) {
        state = state * 1664525u + 1013904223u;
        size_t bytes = (state >> 8) % 5000 + ((state & 1) ? 0 : (state >> 4) % (3 * kMiB));
        auto* p = static_cast<unsigned char*>(pool.allocate(bytes, "test"));
        for (size_t i = 0; i < bytes; i += 97) p[i] = static_cast<unsigned char>(t + 1);
        held.emplace_back(p, bytes);
        if (held.size() > 4 || (state & 2)) {
          auto [q, n] = held.front();
          for (size_t i = 0; i < n; i += 97)
            if (q[i] != t + 1) corrupted.fetch_add(1);
          pool.free(q);
          held.erase(held.begin());
        }
      }
      for (auto [q, n] : held) pool.free(q);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(corrupted.load(), 0);
  bl::BlockPoolStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_GT(s.cache_hits, 0u);
  EXPECT_EQ(s.source_allocations, static_cast<uint64_t>(source.allocations.load()));
  EXPECT_EQ(s.bytes_cached, source.held());
  pool.release_cached();
}

}  // namespace
