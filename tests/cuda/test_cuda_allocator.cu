// test_cuda_allocator.cu: the CUDA caching allocator on a real device: a freed block is handed
// to the next request of its size without a new cudaMalloc, sizes 0 / 1 / odd / large, many host
// threads at once, the out-of-memory path (clear bl::Error, cache released, device still usable),
// cuda_empty_cache, and the BITLEARN_CUDA_CACHE=0 path (run this binary again with the variable
// set: every test then expects plain cudaMalloc / cudaFree). Skips when no GPU is present.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bitlearn/cuda_memory.h"
#include "bitlearn/ops.h"
#include "bitlearn/tensor.h"
#include "core/allocator.h"
#include "core/block_pool.h"
#include "core/error.h"

namespace bl {
namespace {

#define BL_REQUIRE_GPU() \
  if (cuda_count_devices() == 0) GTEST_SKIP() << "no CUDA device"

const Device kGpu = Device::cuda(0);

bool cache_expected() {
  const char* env = std::getenv("BITLEARN_CUDA_CACHE");
  return env == nullptr || std::string(env) != "0";
}

TEST(CudaAllocator, CachingFollowsTheEnvironment) {
  BL_REQUIRE_GPU();
  Tensor t = Tensor::empty({4}, DType::f32, kGpu);
  EXPECT_EQ(cuda_memory_stats(0).caching, cache_expected());
}

TEST(CudaAllocator, FreeThenAllocateSameSizeReusesTheBlock) {
  BL_REQUIRE_GPU();
  const size_t bytes = 1009 * 37 * 4;  // an odd size
  const void* first = nullptr;
  size_t block = 0;  // the block's size: its size class, or a cached block up to twice that
  {
    const size_t in_use = cuda_memory_stats(0).bytes_in_use;
    Tensor t = Tensor::empty({1009, 37}, DType::f32, kGpu);
    first = t.raw_data();
    block = cuda_memory_stats(0).bytes_in_use - in_use;
  }
  EXPECT_TRUE(block_fits(block, block_size_class(bytes))) << block;
  CudaMemoryStats before = cuda_memory_stats(0);
  Tensor again = Tensor::empty({1009, 37}, DType::f32, kGpu);
  CudaMemoryStats after = cuda_memory_stats(0);
  if (cache_expected()) {
    EXPECT_EQ(again.raw_data(), first);
    EXPECT_EQ(after.cuda_malloc_count, before.cuda_malloc_count);
    EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
    EXPECT_EQ(after.bytes_cached + block, before.bytes_cached);
  } else {
    EXPECT_EQ(block, block_size_class(bytes));
    EXPECT_EQ(after.cuda_malloc_count, before.cuda_malloc_count + 1);
    EXPECT_EQ(after.bytes_cached, 0u);
  }
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use + block);
}

TEST(CudaAllocator, ReusedBlocksHoldTheirNewOwnersData) {
  BL_REQUIRE_GPU();
  for (int round = 0; round < 20; ++round) {
    std::vector<float> values(4099);
    for (size_t i = 0; i < values.size(); ++i) values[i] = float(round * 10000 + int(i));
    Tensor a = Tensor::from_vector(values, {4099}, kGpu);
    Tensor b = add(a, a);
    Tensor s = sum(b);  // a reduction: DeviceScratch goes through the allocator too
    std::vector<float> got = b.to_vector<float>();
    for (size_t i = 0; i < values.size(); i += 101) ASSERT_EQ(got[i], 2 * values[i]);
    EXPECT_EQ(s.to_vector<float>().size(), 1u);
  }
}

TEST(CudaAllocator, SizesZeroOneOddAndLarge) {
  BL_REQUIRE_GPU();
  CudaMemoryStats start = cuda_memory_stats(0);
  {
    Tensor zero_a = Tensor::empty({0}, DType::f32, kGpu);
    Tensor zero_b = Tensor::empty({0, 5}, DType::u8, kGpu);
    EXPECT_NE(zero_a.buffer()->ptr, nullptr);
    EXPECT_NE(zero_a.buffer()->ptr, zero_b.buffer()->ptr);
    Tensor one = Tensor::from_vector(std::vector<uint8_t>{7}, {1}, DType::u8, kGpu);
    EXPECT_EQ(one.to_vector<uint8_t>()[0], 7);
    std::vector<uint8_t> odd_values(12345);
    for (size_t i = 0; i < odd_values.size(); ++i) odd_values[i] = uint8_t(i * 31);
    Tensor odd = Tensor::from_vector(odd_values, {12345}, DType::u8, kGpu);
    EXPECT_EQ(odd.to_vector<uint8_t>(), odd_values);
    Tensor large = Tensor::zeros({int64_t(1) << 28}, DType::f32, kGpu);  // 1 GiB
    EXPECT_EQ(sum(large).item(), 0.0);
    EXPECT_GE(cuda_memory_stats(0).bytes_in_use, start.bytes_in_use + (size_t(1) << 30));
  }
  EXPECT_EQ(cuda_memory_stats(0).bytes_in_use, start.bytes_in_use);
}

TEST(CudaAllocator, ManyHostThreadsAllocatingAtOnce) {
  BL_REQUIRE_GPU();
  CudaMemoryStats start = cuda_memory_stats(0);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &wrong] {
      uint32_t state = 777u + uint32_t(t);
      for (int r = 0; r < 60; ++r) {
        state = state * 1664525u + 1013904223u;
        int64_t n = int64_t(state >> 12) % 70000 + 1;
        Tensor x = Tensor::full({n}, double(t * 1000 + r), DType::i32, kGpu);
        std::vector<int32_t> back = x.to_vector<int32_t>();
        if (back.front() != t * 1000 + r || back.back() != t * 1000 + r) wrong.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cuda_memory_stats(0).bytes_in_use, start.bytes_in_use);
}

TEST(CudaAllocator, OutOfMemoryIsAClearErrorAndReleasesTheCache) {
  BL_REQUIRE_GPU();
  { Tensor cached = Tensor::empty({int64_t(1) << 20}, DType::f32, kGpu); }  // leaves a block cached
  const int64_t too_many = int64_t(1) << 40;  // 4 TiB of f32: more than any device holds
  try {
    Tensor t = Tensor::empty({too_many}, DType::f32, kGpu);
    FAIL() << "expected bl::Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("Tensor::empty"), std::string::npos) << m;
    EXPECT_NE(m.find("out of memory on cuda:0"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(too_many * 4)), std::string::npos) << m;
  }
  CudaMemoryStats after = cuda_memory_stats(0);
  EXPECT_EQ(after.bytes_cached, 0u);
  // The device is still usable and no CUDA error is left behind.
  Tensor ok = Tensor::full({1000}, 3.0, DType::f32, kGpu);
  EXPECT_EQ(sum(ok).item(), 3000.0);
}

TEST(CudaAllocator, EmptyCacheReturnsCachedBlocks) {
  BL_REQUIRE_GPU();
  { Tensor t = Tensor::empty({1 << 22}, DType::f32, kGpu); }
  CudaMemoryStats before = cuda_memory_stats(0);
  size_t released = cuda_empty_cache();
  CudaMemoryStats after = cuda_memory_stats(0);
  EXPECT_EQ(released, before.bytes_cached);
  EXPECT_EQ(after.bytes_cached, 0u);
  if (cache_expected()) {
    EXPECT_GE(released, size_t(16) << 20);
    EXPECT_GT(after.cuda_free_count, before.cuda_free_count);
  }
}

TEST(CudaAllocator, NegativeDeviceIsAnError) {
  EXPECT_THROW(cuda_memory_stats(-1), Error);
}

}  // namespace
}  // namespace bl
