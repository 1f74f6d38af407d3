// binning.cpp: deterministic quantile thresholds and bin assignment (see binning.h).
#include "ml/boosting/binning.h"

#include <algorithm>

#include "core/thread_pool.h"

namespace bl::ml {

namespace {
float midpoint(float a, float b) {
  float m = static_cast<float>((static_cast<double>(a) + static_cast<double>(b)) * 0.5);
  return (m >= b) ? a : m;
}
}  // namespace

BinMapper fit_bins(const float* X, int64_t n, int64_t d, int64_t max_bins) {
  BinMapper m;
  m.thresholds.resize(static_cast<size_t>(d));
  const int64_t take = std::min(n, kBinningSample);
  std::vector<char> missing(static_cast<size_t>(d), 0);
  default_pool().parallel_for(d, [&](int64_t f) {
    std::vector<float> v;
    v.reserve(static_cast<size_t>(take));
    for (int64_t i = 0; i < take; ++i) {
      int64_t r = (take == n) ? i : static_cast<int64_t>((static_cast<unsigned __int128>(i) * n) / take);
      float x = X[r * d + f];
      if (x != x) missing[f] = 1;
      else v.push_back(x == 0.0f ? 0.0f : x);  // -0 and +0 are one value
    }
    std::sort(v.begin(), v.end());
    std::vector<float> distinct = v;
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::vector<float>& t = m.thresholds[f];
    if (static_cast<int64_t>(distinct.size()) <= max_bins) {
      for (size_t i = 0; i + 1 < distinct.size(); ++i) t.push_back(midpoint(distinct[i], distinct[i + 1]));
    } else {
      const int64_t count = static_cast<int64_t>(v.size());
      for (int64_t k = 1; k < max_bins; ++k) {
        float q = v[static_cast<size_t>(k * count / max_bins)];
        if (t.empty() || q > t.back()) t.push_back(q);
      }
      // The largest value must stay alone above the last threshold.
      if (!t.empty() && t.back() >= v.back()) t.pop_back();
    }
  });
  for (char c : missing) m.any_missing = m.any_missing || c;
  return m;
}

std::vector<uint8_t> apply_bins(const BinMapper& mapper, const float* X, int64_t n, int64_t d) {
  std::vector<uint8_t> bins(static_cast<size_t>(n * d));
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  default_pool().parallel_for(chunks, [&](int64_t c) {
    for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
      for (int64_t f = 0; f < d; ++f) {
        float x = X[i * d + f];
        const std::vector<float>& t = mapper.thresholds[f];
        uint8_t b;
        if (x != x) b = kMissingBin;
        else b = static_cast<uint8_t>(std::lower_bound(t.begin(), t.end(), x) - t.begin());
        bins[i * d + f] = b;
      }
    }
  });
  return bins;
}

}  // namespace bl::ml
