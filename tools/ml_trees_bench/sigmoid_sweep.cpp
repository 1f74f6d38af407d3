// bitlearn_boost_sigmoid_sweep: the exhaustive evidence for boosting's binary64 sigmoid
// (src/ml/boosting/logistic_gradients.h). Every binary32 x with |x| <= 80 (the inputs the binary64
// path evaluates; the others go to bl::sigmoid itself) is run through sigmoid_f64_avx2 with the
// rounding test (margin 2^-44) and without it, and compared bit for bit with bl::sigmoid.
// Prints the number of inputs, the mismatches with the test (must be 0), the rows handed to
// bl::sigmoid, the mismatches without the test (the sabotage arm: must be > 0) and a few of those
// inputs; exit status 0 only when both hold. About 2.2e9 inputs: minutes on one core.
#include <cstdio>
#include <cstring>
#include <vector>

#include "contract/arith.h"
#include "contract/math.h"
#include "core/fp_probe.h"
#include "ml/boosting/logistic_gradients.h"

int main() {
  if (!bl::cpu_has_avx2_fma()) {
    std::printf("SKIP: no AVX2+FMA on this CPU (the binary64 sigmoid does not run here)\n");
    return 0;
  }
  const int64_t kBatch = int64_t{1} << 20;
  std::vector<float> x(kBatch), with_test(kBatch), without(kBatch);
  int64_t inputs = 0, fallbacks = 0, bad = 0, bad_without = 0;
  int shown = 0;
  const uint32_t limit = bl::bits_of(80.0f);
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint64_t u0 = 0; u0 <= limit; u0 += kBatch) {
      int64_t n = 0;
      for (uint64_t u = u0; u <= limit && u < u0 + kBatch; ++u) x[n++] = bl::float_of(static_cast<uint32_t>(u) | sign);
      fallbacks += bl::ml::sigmoid_f64_avx2(x.data(), with_test.data(), n, 44);
      bl::ml::sigmoid_f64_avx2(x.data(), without.data(), n, 0);
      inputs += n;
      for (int64_t i = 0; i < n; ++i) {
        const float want = bl::canonicalize(bl::sigmoid(x[i]));
        if (std::memcmp(&with_test[i], &want, sizeof want) != 0) ++bad;
        if (std::memcmp(&without[i], &want, sizeof want) != 0) {
          ++bad_without;
          if (shown < 8) {
            std::printf("without the test: x = %.9e (bits %08x) gives %08x, bl::sigmoid %08x\n", x[i],
                        bl::bits_of(x[i]), bl::bits_of(without[i]), bl::bits_of(want));
            ++shown;
          }
        }
      }
    }
  }
  std::printf("inputs %lld, mismatches with the rounding test %lld (%s), handed to bl::sigmoid %lld, "
              "mismatches without the test %lld (%s)\n",
              static_cast<long long>(inputs), static_cast<long long>(bad), bad == 0 ? "PASS" : "FAIL",
              static_cast<long long>(fallbacks), static_cast<long long>(bad_without),
              bad_without > 0 ? "sabotage caught" : "FAIL: sabotage not caught");
  return bad == 0 && bad_without > 0 ? 0 : 1;
}
