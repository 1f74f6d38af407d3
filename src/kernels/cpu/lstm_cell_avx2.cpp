// The CPU LSTM cell's row loops built for AVX2+FMA (compiled with -mavx2 -mfma; see
// CMakeLists.txt). Called only after cpu_has_avx2_fma() returned true. As in math_map_avx2.cpp,
// BL_HD is redefined as `static inline` before the first inclusion of the contract headers, so
// every contract function gets a private copy in this translation unit (no AVX2 copy can be picked
// by the linker for the baseline code). The arithmetic is unchanged (same source, same flags).
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/cpu/lstm_cell_rows.h"

namespace bl {

#if defined(__x86_64__) || defined(_M_X64)
void lstm_cell_forward_rows_avx2(const LstmCellForward& a, int64_t b0, int64_t b1) {
  lstm_forward_rows<math_map_chunk_avx2>(a, b0, b1);
}

void lstm_cell_backward_rows_avx2(const LstmCellBackward& a, int64_t b0, int64_t b1, float* scratch) {
  lstm_backward_rows(a, b0, b1, scratch);
}
#endif

}  // namespace bl
