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

// Where a partition's result lands. source: back in the arrays' positions [begin, end) (the
// scratch arrays only pass it through). scratch: in the scratch arrays' positions [begin, end),
// the source positions [begin, end) left as scratch (their contents unspecified): tree growth
// alternates the two sets of arrays level by level instead of copying each result back. Same
// rows, order and sums either way.
enum class PartitionTo { source, scratch };

// Serial stable partition of positions [begin, end); returns the left count and adds the left
// rows' g (and h) to *g_left, *h_left modulo 2^64. Branch-free: one pass over the rows. To source,
// the right rows go through the scratch arrays and are copied back after the left ones; to
// scratch, the left rows go to the scratch arrays, the right rows are compacted in the source and
// then copied after the left ones.
int64_t partition_rows_serial(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                              int64_t begin, int64_t end, uint64_t* g_left, uint64_t* h_left,
                              PartitionTo to = PartitionTo::source);

// Blocked stable partition, the same result as partition_rows_serial: fixed blocks of `block`
// rows (a function of the node only) count their left rows, prefix offsets place each block's
// left and right rows, the blocks scatter into the scratch arrays, which are copied back when the
// result goes to source. Each step is one set of pool tasks.
int64_t partition_rows_blocked(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                               int64_t begin, int64_t end, int64_t block, uint64_t* g_left, uint64_t* h_left,
                               ThreadPool& pool, PartitionTo to = PartitionTo::source);

// The partition tree growth uses: blocked (kPartitionBlock) from 2 * kPartitionBlock rows up,
// else serial on the calling thread.
int64_t partition_rows(const uint8_t* column, const uint8_t* goes_left, const RowPartitionArrays& a,
                       int64_t begin, int64_t end, uint64_t* g_left, uint64_t* h_left, ThreadPool& pool,
                       PartitionTo to = PartitionTo::source);

}  // namespace bl::ml
