// image_folder.cpp: class-per-subfolder image data sets of PNG (through libpng) and binary PGM/PPM
// files.
#include "bitlearn/nn/image_folder.h"

#ifdef BITLEARN_HAS_PNG
#include <png.h>
#endif

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "bitlearn/io.h"
#include "bitlearn/ops.h"
#include "core/error.h"

namespace bl::nn {

namespace {

namespace fs = std::filesystem;

// The entries of a folder (hidden ones skipped) in byte order of their names.
std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind('.', 0) != 0) out.push_back(it->path());
  BL_CHECK(!ec, "image folder '", dir.string(), "': cannot list it (", ec.message(), ")");
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });
  return out;
}

std::string lower_extension(const fs::path& p) {
  std::string e = p.extension().string();
  for (char& c : e) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return e;
}

}  // namespace

DecodedImage parse_png(const std::string& bytes, const std::string& source) {
  static const char kSignature[] = "\x89PNG\r\n\x1a\n";
  BL_CHECK(bytes.size() >= 8 && bytes.compare(0, 8, kSignature, 8) == 0, source, ": not a PNG file (bad signature)");
#ifndef BITLEARN_HAS_PNG
  throw Error(source + ": this build has no PNG support: install libpng-dev and rebuild");
#else
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  // png_image_free on every path (a no-op once png_image_finish_read has released the reader).
  struct Release {
    png_image* image;
    ~Release() { png_image_free(image); }
  } release{&image};
  BL_CHECK(png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()), source, ": not a readable PNG (",
           image.message, ")");
  DecodedImage img;
  img.width = image.width;
  img.height = image.height;
  const int64_t limit = int64_t{1} << 28;  // pixels
  BL_CHECK(img.width * img.height <= limit, source, ": PNG size ", img.width, "x", img.height, " is too large");
  // Colour (RGB, RGBA, palette) gives 3 channels, grey 1. An alpha channel is read and then dropped:
  // the stored colour values are kept (reading straight into RGB or grey would compose them onto
  // the buffer's contents).
  const bool colour = (image.format & PNG_FORMAT_FLAG_COLOR) != 0;
  const bool alpha = (image.format & PNG_FORMAT_FLAG_ALPHA) != 0;
  img.channels = colour ? 3 : 1;
  const int64_t read_channels = img.channels + (alpha ? 1 : 0);
  image.format = colour ? (alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB) : (alpha ? PNG_FORMAT_GA : PNG_FORMAT_GRAY);
  // A 16-bit image without gAMA/sRGB chunks is taken as sRGB like an 8-bit one (each value scaled
  // to 8 bits) rather than as linear light.
  image.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
  std::vector<uint8_t> buf(static_cast<size_t>(img.width * img.height * read_channels));
  BL_CHECK(png_image_finish_read(&image, nullptr, buf.data(), 0, nullptr), source, ": a damaged PNG (",
           image.message, ")");
  if (!alpha) {
    img.pixels = std::move(buf);
  } else {
    img.pixels.reserve(static_cast<size_t>(img.width * img.height * img.channels));
    for (size_t i = 0; i < buf.size(); ++i)
      if (static_cast<int64_t>(i % static_cast<size_t>(read_channels)) != img.channels) img.pixels.push_back(buf[i]);
  }
  return img;
#endif
}

DecodedImage parse_pnm(const std::string& bytes, const std::string& source) {
  size_t pos = 2;
  BL_CHECK(bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6'), source,
           ": not a binary PGM (P5) or PPM (P6) image");
  // The header: width, height, maxval as decimal numbers separated by whitespace and # comments.
  auto number = [&](const char* field) -> int64_t {
    while (pos < bytes.size()) {
      if (bytes[pos] == '#') {
        while (pos < bytes.size() && bytes[pos] != '\n') ++pos;
      } else if (bytes[pos] == ' ' || bytes[pos] == '\t' || bytes[pos] == '\n' || bytes[pos] == '\r') {
        ++pos;
      } else {
        break;
      }
    }
    int64_t v = 0;
    size_t start = pos;
    while (pos < bytes.size() && bytes[pos] >= '0' && bytes[pos] <= '9' && pos - start < 9) v = v * 10 + (bytes[pos++] - '0');
    BL_CHECK(pos > start && v > 0, source, ": bad or missing ", field, " in the image header");
    return v;
  };
  DecodedImage img;
  img.channels = bytes[1] == '5' ? 1 : 3;
  img.width = number("width");
  img.height = number("height");
  const int64_t maxval = number("maxval");
  BL_CHECK(maxval == 255, source, ": maxval ", maxval, " (only 8-bit images with maxval 255 are read)");
  BL_CHECK(img.width * img.height <= (int64_t{1} << 28), source, ": image size ", img.width, "x", img.height,
           " is too large");
  BL_CHECK(pos < bytes.size(), source, ": truncated header");
  ++pos;  // the single whitespace byte before the pixels
  const int64_t n = img.width * img.height * img.channels;
  BL_CHECK(static_cast<int64_t>(bytes.size() - pos) >= n, source, ": truncated: ", img.width, "x", img.height, "x",
           img.channels, " needs ", n, " pixel bytes, the file has ", bytes.size() - pos);
  img.pixels.assign(bytes.begin() + static_cast<std::ptrdiff_t>(pos), bytes.begin() + static_cast<std::ptrdiff_t>(pos + n));
  return img;
}

ImageFolder load_image_folder(const std::string& dir, const std::vector<std::string>& classes) {
  std::error_code ec;
  BL_CHECK(fs::is_directory(dir, ec), "image folder '", dir, "': not a folder");
  ImageFolder out;
  std::vector<fs::path> class_dirs;
  for (const fs::path& p : sorted_entries(dir))
    if (fs::is_directory(p, ec)) class_dirs.push_back(p);
  BL_CHECK(!class_dirs.empty(), "image folder '", dir,
           "' holds no class subfolders (expected one subfolder per class, e.g. ", dir, "/cat/1.pgm)");
  out.classes = classes;
  if (classes.empty()) {
    for (const fs::path& p : class_dirs) out.classes.push_back(p.filename().string());
    BL_CHECK(out.classes.size() >= 2, "image folder '", dir, "' holds one class only ('", out.classes[0],
             "'); a classifier needs at least two class subfolders");
  }
  std::vector<uint8_t> pixels;
  std::vector<int64_t> labels;
  std::string first;
  DecodedImage shape;
  for (const fs::path& cdir : class_dirs) {
    const std::string name = cdir.filename().string();
    auto at = std::find(out.classes.begin(), out.classes.end(), name);
    BL_CHECK(at != out.classes.end(), "image folder '", dir, "': class '", name,
             "' is not one of the training classes");
    const int64_t label = at - out.classes.begin();
    int64_t count = 0;
    for (const fs::path& f : sorted_entries(cdir)) {
      if (fs::is_directory(f, ec)) continue;
      const std::string e = lower_extension(f);
      BL_CHECK(e == ".png" || e == ".pgm" || e == ".ppm" || e == ".pnm", "'", f.string(),
               "': only PNG and binary PGM/PPM images (.png, .pgm, .ppm) are read; convert other formats first (for "
               "example ImageMagick: convert in.jpg out.png)");
      const std::vector<uint8_t> raw = read_file_bytes(f.string(), "image");
      const std::string bytes(raw.begin(), raw.end());
      DecodedImage img = e == ".png" ? parse_png(bytes, f.string()) : parse_pnm(bytes, f.string());
      if (first.empty()) {
        first = f.string();
        shape = img;
      }
      BL_CHECK(img.width == shape.width && img.height == shape.height && img.channels == shape.channels, "'",
               f.string(), "' is ", img.width, "x", img.height, "x", img.channels, " but '", first, "' is ",
               shape.width, "x", shape.height, "x", shape.channels,
               " (width x height x channels); every image must have the same size");
      pixels.insert(pixels.end(), img.pixels.begin(), img.pixels.end());
      labels.push_back(label);
      ++count;
    }
    BL_CHECK(count > 0, "class folder '", cdir.string(), "' holds no images");
  }
  const int64_t n = static_cast<int64_t>(labels.size());
  const int64_t d = shape.width * shape.height * shape.channels;
  Tensor raw = Tensor::from_vector(pixels, {n, d}, DType::u8);
  out.data.images = bl::div(bl::cast(raw, DType::f32), Tensor::scalar(255.0));
  out.data.labels = Tensor::from_vector(labels, {n});
  out.data.height = shape.height;
  out.data.width = shape.width;
  out.channels = shape.channels;
  return out;
}

}  // namespace bl::nn
