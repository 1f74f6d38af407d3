// sweep.h: the CPU = GPU sweep. Every unary function on all 2^32 inputs, plus pow on a fixed
// pseudo-random pair sample, hashed per chunk of 2^24 inputs (SHA-256 of the outputs as
// little-endian bytes), written as a text file that another device's run is compared with.
#pragma once

#include <cstdint>
#include <string>

namespace mathcheck {

struct SweepOptions {
  std::string out_path;       // hash file to write
  std::string device = "cpu"; // "cpu", "cuda", or "file" (out_path is read, not written)
  std::string compare_path;   // reference hash file to compare with (optional)
  std::string fn = "all";     // one function name, or all
  std::string note;           // free text written as a comment line
  int threads = 1;            // CPU worker threads (cpu device) / hashing threads (cuda)
  int max_chunks = 0;         // > 0: only the first max_chunks chunks per function (quick runs)
  int chunk_step = 1;         // > 1: only every chunk_step-th unary chunk (0, step, 2*step, ...)
};

// Chunks of the sweep: 2^24 inputs each; 256 chunks per unary function, 4 for pow.
constexpr int kSweepChunkLog2 = 24;
constexpr int kPowSweepChunks = 4;
constexpr uint64_t kPowSweepSeed = 20261130;

// Runs the sweep; returns the process exit code (0 when written and, with a reference, identical).
int run_sweep(const SweepOptions& opts);

}  // namespace mathcheck
