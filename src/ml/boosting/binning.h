// binning.h: feature binning of histogram gradient boosting.
//
// Per feature, up to max_bins - 1 ascending thresholds t_0 < t_1 < ...; a finite value x falls in
// bin b = (number of thresholds < x), so bin <= b exactly when x <= t_b, and a split "bin <= b" is
// the split "x <= t_b" on raw values. NaN falls in the missing bin kMissingBin (255).
//
// Thresholds (deterministic): the non-NaN values of the column (of at most kBinningSample rows,
// taken at rows floor(i * n / kBinningSample) when n is larger) are sorted. With at most max_bins
// distinct values the thresholds are the midpoints of neighbours; otherwise threshold k (k = 1 ..
// max_bins - 1) is the sorted value at position floor(k * m / max_bins) (m values), duplicates
// removed.
//
// A categorical column (fit_bins' categorical[f] != 0) has no thresholds: its bin is the category
// code itself (its values are NaN or integers in [0, max_bins), checked by the caller).
#pragma once

#include <cstdint>
#include <vector>

namespace bl::ml {

constexpr int kMissingBin = 255;
constexpr int64_t kBinningSample = 200000;

struct BinMapper {
  std::vector<std::vector<float>> thresholds;  // per feature, ascending
  bool any_missing = false;
  std::vector<char> categorical;  // per feature, or empty (no categorical feature)
  bool is_categorical(int64_t f) const { return !categorical.empty() && categorical[f] != 0; }
};

// Thresholds of every column of X [n, d] (host, row-major; NaN allowed); max_bins in [2, 255].
// categorical: per feature 1 for a categorical column, or null (none).
BinMapper fit_bins(const float* X, int64_t n, int64_t d, int64_t max_bins, const std::vector<char>* categorical = nullptr);
// Row-major bins [n, d] of X under the mapper; columns run in parallel on the default pool.
std::vector<uint8_t> apply_bins(const BinMapper& mapper, const float* X, int64_t n, int64_t d);

}  // namespace bl::ml
