// device_hints.h: performance hints about a device, for code above the ops layer that must size
// its own work (tiles it streams through the host). The ops choose their kernels themselves; these
// hints only size loops, and no result may depend on them (the callers' tests vary them).
#pragma once

#include <cstdint>

#include "bitlearn/tensor.h"

namespace bl {

// Bytes of results a host loop should take per step when it streams tiles of a larger result
// computed on `device`: 2 MiB on the CPU (the tile stays in cache for the host pass), 64 MiB on
// CUDA (larger tiles amortize launches and copies).
int64_t tile_bytes_hint(Device device);

}  // namespace bl
