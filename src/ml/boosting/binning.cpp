// binning.cpp: deterministic quantile thresholds and bin assignment (see binning.h).
#include "ml/boosting/binning.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::ml {

namespace {
float midpoint(float a, float b) {
  float m = static_cast<float>((static_cast<double>(a) + static_cast<double>(b)) * 0.5);
  return (m >= b) ? a : m;
}

// Unsigned keys in the order of the float values (no NaN): positives above negatives, negatives
// reversed.
inline uint32_t float_key(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
inline float key_float(uint32_t k) {
  const uint32_t u = (k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k;
  float x;
  std::memcpy(&x, &u, sizeof(x));
  return x;
}

// Ascending sort of NaN-free floats by a least-significant-digit radix sort on float_key (4 byte
// passes, a pass skipped when every key has the same byte there). Equal values have equal bits
// here (-0 was made +0), so the result is exactly std::sort's.
void radix_sort_floats(std::vector<float>& v) {
  const size_t m = v.size();
  std::vector<uint32_t> keys(m), other(m);
  for (size_t i = 0; i < m; ++i) keys[i] = float_key(v[i]);
  for (int shift = 0; shift < 32; shift += 8) {
    size_t count[256] = {};
    for (uint32_t k : keys) ++count[(k >> shift) & 0xFFu];
    if (m == 0 || count[(keys[0] >> shift) & 0xFFu] == m) continue;
    size_t start = 0;
    for (size_t& c : count) {
      const size_t n = c;
      c = start;
      start += n;
    }
    for (uint32_t k : keys) other[count[(k >> shift) & 0xFFu]++] = k;
    keys.swap(other);
  }
  for (size_t i = 0; i < m; ++i) v[i] = key_float(keys[i]);
}

// Number of entries of t[0..255) below x, for t ascending and padded with +inf: a branch-free
// binary search (the comparisons become conditional moves), equal to std::lower_bound's index.
inline int bins_below(const float* t, float x) {
  int pos = 0;
  for (int step = 128; step > 0; step >>= 1) pos += t[pos + step - 1] < x ? step : 0;
  return pos;
}
}  // namespace

BinMapper fit_bins(const float* X, int64_t n, int64_t d, int64_t max_bins, const std::vector<char>* categorical) {
  BinMapper m;
  m.thresholds.resize(static_cast<size_t>(d));
  if (categorical) {
    BL_CHECK(static_cast<int64_t>(categorical->size()) == d, "fit_bins: categorical has ", categorical->size(),
             " entries, expected ", d);
    if (std::find(categorical->begin(), categorical->end(), 1) != categorical->end()) m.categorical = *categorical;
  }
  const int64_t take = std::min(n, kBinningSample);
  std::vector<char> missing(static_cast<size_t>(d), 0);
  default_pool().parallel_for(d, [&](int64_t f) {
    if (m.is_categorical(f)) {  // bins are the codes: no thresholds
      for (int64_t i = 0; i < n && !missing[f]; ++i) missing[f] = X[i * d + f] != X[i * d + f];
      return;
    }
    std::vector<float> v;
    v.reserve(static_cast<size_t>(take));
    for (int64_t i = 0; i < take; ++i) {
      int64_t r = (take == n) ? i : static_cast<int64_t>((static_cast<unsigned __int128>(i) * n) / take);
      float x = X[r * d + f];
      if (x != x) missing[f] = 1;
      else v.push_back(x == 0.0f ? 0.0f : x);  // -0 and +0 are one value
    }
    radix_sort_floats(v);
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
  constexpr int64_t kTable = 256;
  std::vector<float> tables(static_cast<size_t>(d * kTable), std::numeric_limits<float>::infinity());
  for (int64_t f = 0; f < d; ++f) {
    const std::vector<float>& t = mapper.thresholds[f];
    BL_CHECK(static_cast<int64_t>(t.size()) < kTable - 1, "apply_bins: feature ", f, " has ", t.size(),
             " thresholds, expected at most 254");
    std::copy(t.begin(), t.end(), tables.begin() + f * kTable);
  }
  std::vector<uint8_t> bins(static_cast<size_t>(n * d));
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  default_pool().parallel_for(chunks, [&](int64_t c) {
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t f = 0; f < d; ++f) {
      const float* t = tables.data() + f * kTable;
      if (mapper.is_categorical(f)) {  // the code is the bin (values checked at fit)
        for (int64_t i = c * kChunk; i < end; ++i) {
          const float x = X[i * d + f];
          bins[i * d + f] = x != x ? static_cast<uint8_t>(kMissingBin) : static_cast<uint8_t>(x);
        }
        continue;
      }
      for (int64_t i = c * kChunk; i < end; ++i) {
        const float x = X[i * d + f];
        bins[i * d + f] = x != x ? static_cast<uint8_t>(kMissingBin) : static_cast<uint8_t>(bins_below(t, x));
      }
    }
  });
  return bins;
}

}  // namespace bl::ml
