// The CPU LSTM cell's row loops built for AVX-512 (compiled with the AVX-512 flags of
// CMakeLists.txt; called only when the active ISA variant is avx512): the same source as the
// baseline and AVX2 builds (lstm_cell_rows.h), with the gate functions through the AVX-512 math
// map chunk loop, 16 lanes wide. BL_HD is redefined as `static inline` before the first inclusion
// of the contract headers, as in lstm_cell_avx2.cpp, so this translation unit keeps private copies.
#include "contract/compat.h"
#undef BL_HD
#define BL_HD static inline

#include "kernels/cpu/lstm_cell_rows.h"

namespace bl {

#if defined(__AVX512F__) && defined(__AVX512VL__)
void lstm_cell_forward_rows_avx512(const LstmCellForward& a, int64_t b0, int64_t b1) {
  lstm_forward_rows<math_map_chunk_avx512>(a, b0, b1);
}

void lstm_cell_backward_rows_avx512(const LstmCellBackward& a, int64_t b0, int64_t b1, float* scratch) {
  lstm_backward_rows(a, b0, b1, scratch);
}
#endif

}  // namespace bl
