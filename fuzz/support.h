// support.h: what the fuzz targets share: a private scratch folder and writing an input to a file
// there, for the readers that only take a path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bl::fuzz {

// A folder private to this process (created on first use, removed at exit).
const std::string& scratch_dir();
// Writes the bytes to scratch_dir()/name (replacing it) and returns the path.
std::string write_scratch_file(const std::string& name, const uint8_t* data, size_t size);

}  // namespace bl::fuzz
