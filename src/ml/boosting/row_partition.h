// row_partition.h: the row partition of histogram boosting's tree growth.
//
// A split sends each of a node's rows to its left or right child by the row's bin in the split
// feature (goes_left[column[row]]). The partition is stable: within each child the rows keep their
// order in the node (ascending row index), and the gathered fixed-point gradient pairs move with
// them. The serial form and the blocked form give the same arrays and the same integer sums for
// any block size and thread count; which one runs depends on the node's size only.
#pragma once

#include <cstdint>

namespace bl {
class ThreadPool;
}

namespace bl::ml {

// Rows at or above 2 * kPartitionBlock are partitioned in blocks of kPartitionBlock rows.
constexpr int64_t kPartitionBlock = 8192;

// The arrays a partition moves, all indexed by position in the grower's row list: rows and their
// gathered pairs (h null: constant hessians, nothing to move), and scratch arrays of the same
// length (the partition of [begin, end) uses only their positions [begin, end)).
struct RowPartitionArrays {
  int32_t* rows;
  int64_t* g;
  int64_t* h;
  int32_t* scratch_rows;
  int64_t* scratch_g;
  int64_t* scratch_h;
};

// Serial stable partition of positions [begin, end); returns the left count and adds the left
// rows' g (and h) to *g_left, *h_left modulo 2^64. Branch-free: one pass, the right rows go
// through the scratch arrays and are copied back after the left ones.
int64_t partition_rows_serial(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                              int64_t begin, int64_t end, uint64_t* g_left, uint64_t* h_left);

// Blocked stable partition, the same result as partition_rows_serial: fixed blocks of `block`
// rows (a function of the node only) count their left rows, prefix offsets place each block's
// left and right rows, the blocks scatter into the scratch arrays, which are copied back. Each
// step is one set of pool tasks.
int64_t partition_rows_blocked(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                               int64_t begin, int64_t end, int64_t block, uint64_t* g_left, uint64_t* h_left,
                               ThreadPool& pool);

// The partition tree growth uses: blocked (kPartitionBlock) from 2 * kPartitionBlock rows up,
// else serial on the calling thread.
int64_t partition_rows(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                       int64_t begin, int64_t end, uint64_t* g_left, uint64_t* h_left, ThreadPool& pool);

// The same partitions, but the result lands in the scratch arrays' positions [begin, end) and the
// source positions [begin, end) are left as scratch (their contents unspecified): tree growth
// alternates the two sets of arrays level by level instead of copying each result back. The
// serial form writes the left rows to the scratch arrays and compacts the right rows in the
// source, then copies them after the left ones; the blocked form scatters into the scratch arrays
// and stops there. Same rows, order and sums as partition_rows_serial.
int64_t partition_rows_serial_into(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                                   int64_t begin, int64_t end, uint64_t* g_left, uint64_t* h_left);
int64_t partition_rows_blocked_into(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                                    int64_t begin, int64_t end, int64_t block, uint64_t* g_left, uint64_t* h_left,
                                    ThreadPool& pool);
// Blocked (kPartitionBlock) from 2 * kPartitionBlock rows up, else serial on the calling thread.
int64_t partition_rows_into(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                            int64_t begin, int64_t end, uint64_t* g_left, uint64_t* h_left, ThreadPool& pool);

}  // namespace bl::ml
