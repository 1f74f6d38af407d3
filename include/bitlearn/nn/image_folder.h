// image_folder.h: a labelled image data set read from a folder with one subfolder per class.
//
// Images are PNG files (read through libpng: grey, grey+alpha, RGB, RGBA or palette, any bit depth,
// interlaced or not; 8 bits per channel out, alpha dropped; a build without libpng refuses them
// saying so) or binary PGM (P5, grey) / PPM (P6, colour) files with maxval 255; other files in a
// class folder are refused with the conversion to make. Every image must have the same width, height
// and channel count.
#pragma once

#include <string>
#include <vector>

#include "bitlearn/nn/data.h"

namespace bl::nn {

struct ImageFolder {
  Dataset data;                      // images f32 [N, H * W * C] in [0, 1] (byte / 255), labels i64 [N]
  int64_t channels = 0;              // 1 (grey) or 3 (colour), channels-last within each image
  std::vector<std::string> classes;  // label k is classes[k]
};

// Reads dir/<class>/<image>: classes are the subfolder names in byte order, images within a class in
// byte order of their names (hidden entries, starting with '.', are skipped). classes non-empty:
// the label names of a training set (a held-out folder): each subfolder must be one of them and
// keeps its index there. Errors name the folder or file: no subfolders, an empty class folder, a
// single class, an unreadable or malformed image, a file of another format, mixed sizes.
ImageFolder load_image_folder(const std::string& dir, const std::vector<std::string>& classes = {});

// One decoded image: pixels row-major, channels last (1 grey or 3 colour).
struct DecodedImage {
  int64_t width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;
};
// Parses one binary PGM/PPM image (source names it in errors).
DecodedImage parse_pnm(const std::string& bytes, const std::string& source);
// Decodes one PNG image with libpng: grey and grey+alpha give 1 channel, RGB, RGBA and palette 3;
// alpha is dropped (the stored colour values kept); 16-bit values are scaled to 8 bits (an image
// tagged as linear light by its gAMA chunk is converted to sRGB). A damaged file or a build without
// libpng throws bl::Error naming source.
DecodedImage parse_png(const std::string& bytes, const std::string& source);

}  // namespace bl::nn
