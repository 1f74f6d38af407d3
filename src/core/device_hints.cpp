// device_hints.cpp: see bitlearn/device_hints.h.
#include "bitlearn/device_hints.h"

namespace bl {

int64_t tile_bytes_hint(Device device) { return device.is_cuda() ? int64_t{64} << 20 : int64_t{2} << 20; }

}  // namespace bl
