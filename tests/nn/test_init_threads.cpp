// The initializers fill blocks of elements on the thread pool: the bits do not depend on the
// thread count (each element is a pure function of (seed, stream, index)).
#include <gtest/gtest.h>

#include <cstring>

#include "bitlearn/nn/init.h"
#include "contract/rng.h"
#include "core/thread_pool.h"

namespace bl::nn {
namespace {

TEST(InitThreads, EveryThreadCountGivesTheSameBits) {
  const int saved = num_threads();
  const Shape shape{3, 100003};  // several blocks and a partial one
  std::vector<std::vector<float>> ref;
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    std::vector<std::vector<float>> got{init::normal(shape, 0.5f, 0.02f, 9, 4).to_vector<float>(),
                                        init::uniform(shape, -1.0f, 2.0f, 9, 5).to_vector<float>(),
                                        init::truncated_normal(shape, 0.0f, 1.0f, -2.0f, 2.0f, 9, 6).to_vector<float>()};
    if (ref.empty()) ref = got;
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_EQ(0, std::memcmp(got[k].data(), ref[k].data(), got[k].size() * 4)) << t << " threads, init " << k;
  }
  set_num_threads(saved);
  // And element i is the element function of i (the last block included).
  const auto v = init::normal(shape, 0.5f, 0.02f, 9, 4).to_vector<float>();
  const uint64_t last = static_cast<uint64_t>(v.size() - 1);
  EXPECT_EQ(v[last], normal_element(9, 4, last, 0.5f, 0.02f));
}

}  // namespace
}  // namespace bl::nn
