// Image folders (bitlearn/nn/image_folder.h): PNG decoding through libpng (8-bit grey, grey+alpha,
// RGB, RGBA, palette, 16-bit and interlaced images, written here with libpng's writers), PGM/PPM
// parsing, class order, labels and pixel scaling, a held-out folder keeping the training classes'
// indices, and the errors.
#include "bitlearn/nn/image_folder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#ifdef BITLEARN_HAS_PNG
#include <png.h>
#endif

#include <csetjmp>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "bitlearn/io.h"
#include "core/error.h"

namespace bl::nn {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class ImageFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "bl_image_folder_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  // Writes a 2x1 grey image with pixels a, b at root/cls/name.
  void grey(const std::string& cls, const std::string& name, uint8_t a, uint8_t b) {
    fs::create_directories(root_ + "/" + cls);
    std::string bytes = "P5\n2 1\n255\n";
    bytes += static_cast<char>(a);
    bytes += static_cast<char>(b);
    write_file_atomic(root_ + "/" + cls + "/" + name, bytes, "image");
  }
  std::string root_;
};

#ifdef BITLEARN_HAS_PNG
// A PNG from libpng's simplified writer: 8-bit pixels, 16-bit linear ones (PNG_FORMAT_LINEAR_*, written
// with a gAMA chunk of 1.0), or palette indices (PNG_FORMAT_FLAG_COLORMAP with colormap).
std::string write_png(png_uint_32 w, png_uint_32 h, png_uint_32 format, const void* pixels,
                      const std::vector<uint8_t>& colormap = {}) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = w;
  image.height = h;
  image.format = format;
  image.colormap_entries = static_cast<png_uint_32>(colormap.size() / 3);
  const void* cmap = colormap.empty() ? nullptr : colormap.data();
  png_alloc_size_t size = 0;
  std::string out;
  if (png_image_write_to_memory(&image, nullptr, &size, 0, pixels, 0, cmap)) {
    out.resize(size);
    if (!png_image_write_to_memory(&image, out.data(), &size, 0, pixels, 0, cmap)) out.clear();
  }
  png_image_free(&image);
  EXPECT_FALSE(out.empty()) << image.message;
  return out;
}

void append_to_string(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}

// A PNG from libpng's row writer, for what the simplified writer does not write: interlaced images and
// 16-bit images without a gAMA chunk. bytes: the rows, big-endian samples of `depth` bits.
std::string write_png_rows(png_uint_32 w, png_uint_32 h, int depth, int color_type, bool interlaced,
                           std::vector<uint8_t> bytes) {
  std::string out;
  std::vector<png_bytep> rows;
  for (png_uint_32 y = 0; y < h; ++y) rows.push_back(bytes.data() + y * (bytes.size() / h));
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    ADD_FAILURE() << "libpng could not write the test image";
    return "";
  }
  png_set_write_fn(png, &out, append_to_string, nullptr);
  png_set_IHDR(png, info, w, h, depth, color_type, interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

// The IHDR fields of a written PNG: bit depth, colour type, interlace method.
int ihdr(const std::string& png, int field) { return static_cast<uint8_t>(png[static_cast<size_t>(24 + field)]); }
#define BL_NEEDS_PNG()
#else
#define BL_NEEDS_PNG() GTEST_SKIP() << "this build has no PNG support (libpng-dev not found)"
#endif

TEST(PngTest, EightBitGreyColourAndAlphaDropped) {
  BL_NEEDS_PNG();
#ifdef BITLEARN_HAS_PNG
  std::vector<uint8_t> rgba, rgb, grey, ga;
  for (int i = 0; i < 4 * 5 * 4; ++i) rgba.push_back(static_cast<uint8_t>((i * 97 + (i / 7) * 31) & 255));
  rgba[3] = 0;  // fully transparent: the colour stored is still what is read
  for (size_t i = 0; i < rgba.size(); ++i)
    if (i % 4 != 3) rgb.push_back(rgba[i]);
  DecodedImage c = parse_png(write_png(4, 5, PNG_FORMAT_RGBA, rgba.data()), "c.png");
  EXPECT_EQ(c.width, 4);
  EXPECT_EQ(c.height, 5);
  EXPECT_EQ(c.channels, 3);
  EXPECT_EQ(c.pixels, rgb);
  EXPECT_EQ(parse_png(write_png(4, 5, PNG_FORMAT_RGB, rgb.data()), "rgb.png").pixels, rgb);
  // Grey 3x5 and grey+alpha 3x5: one channel, the grey bytes kept.
  grey.assign(rgba.begin(), rgba.begin() + 15);
  for (uint8_t v : grey) ga.insert(ga.end(), {v, static_cast<uint8_t>(v ^ 0x5a)});
  const std::string ga_png = write_png(3, 5, PNG_FORMAT_GA, ga.data());
  EXPECT_EQ(ihdr(ga_png, 1), PNG_COLOR_TYPE_GRAY_ALPHA);
  DecodedImage g = parse_png(write_png(3, 5, PNG_FORMAT_GRAY, grey.data()), "g.png");
  EXPECT_EQ(g.channels, 1);
  EXPECT_EQ(g.pixels, grey);
  DecodedImage g2 = parse_png(ga_png, "ga.png");
  EXPECT_EQ(g2.channels, 1);
  EXPECT_EQ(g2.pixels, grey);
#endif
}

TEST(PngTest, PaletteSixteenBitAndInterlaced) {
  BL_NEEDS_PNG();
#ifdef BITLEARN_HAS_PNG
  // Palette: 3 colours, 2x2 indices; read as RGB.
  const std::vector<uint8_t> colormap{255, 0, 0, 0, 128, 0, 7, 8, 9}, index{2, 0, 1, 2};
  const std::string pal = write_png(2, 2, PNG_FORMAT_RGB | PNG_FORMAT_FLAG_COLORMAP, index.data(), colormap);
  EXPECT_EQ(ihdr(pal, 1), PNG_COLOR_TYPE_PALETTE);
  DecodedImage p = parse_png(pal, "p.png");
  EXPECT_EQ(p.channels, 3);
  EXPECT_EQ(p.pixels, (std::vector<uint8_t>{7, 8, 9, 255, 0, 0, 0, 128, 0, 7, 8, 9}));
  // 16-bit grey and RGB without gAMA: each value scaled to 8 bits (v * 257 gives v; 1000 gives 4).
  const std::string g16 = write_png_rows(4, 1, 16, PNG_COLOR_TYPE_GRAY, false, {0, 0, 3, 232, 128, 128, 255, 255});
  EXPECT_EQ(ihdr(g16, 0), 16);
  EXPECT_EQ(parse_png(g16, "g16.png").pixels, (std::vector<uint8_t>{0, 4, 128, 255}));
  DecodedImage c16 = parse_png(write_png_rows(1, 1, 16, PNG_COLOR_TYPE_RGB, false, {10, 10, 200, 200, 33, 33}), "c16.png");
  EXPECT_EQ(c16.channels, 3);
  EXPECT_EQ(c16.pixels, (std::vector<uint8_t>{10, 200, 33}));
  // 16-bit linear light (gAMA 1.0): converted to sRGB by libpng's power law 1/2.2, so 0.5 of linear
  // light gives 0.5^(1/2.2) = 0.7297 (186 of 255).
  const std::vector<uint16_t> linear{0, 32768, 65535};
  DecodedImage lin = parse_png(write_png(3, 1, PNG_FORMAT_LINEAR_Y, linear.data()), "lin.png");
  ASSERT_EQ(lin.pixels.size(), 3u);
  EXPECT_EQ(lin.pixels[0], 0);
  EXPECT_NEAR(lin.pixels[1], 186, 1);
  EXPECT_EQ(lin.pixels[2], 255);
  // Interlaced (Adam7) grey 9x7 and RGB 3x3: the same pixels as written.
  std::vector<uint8_t> grey, rgb;
  for (int i = 0; i < 9 * 7; ++i) grey.push_back(static_cast<uint8_t>(i * 37 + 5));
  for (int i = 0; i < 3 * 3 * 3; ++i) rgb.push_back(static_cast<uint8_t>(i * 53 + 1));
  const std::string il = write_png_rows(9, 7, 8, PNG_COLOR_TYPE_GRAY, true, grey);
  EXPECT_EQ(ihdr(il, 4), PNG_INTERLACE_ADAM7);
  EXPECT_EQ(parse_png(il, "il.png").pixels, grey);
  EXPECT_EQ(parse_png(write_png_rows(3, 3, 8, PNG_COLOR_TYPE_RGB, true, rgb), "ilc.png").pixels, rgb);
#endif
}

TEST(PngTest, DamagedFilesNameTheFile) {
  EXPECT_NE(error_of([&] { parse_png("GIF89a..", "x.png"); }).find("x.png: not a PNG file (bad signature)"),
            std::string::npos);
  BL_NEEDS_PNG();
#ifdef BITLEARN_HAS_PNG
  std::vector<uint8_t> px(9, 7);
  const std::string good = write_png(3, 3, PNG_FORMAT_GRAY, px.data());
  std::string bad = good;
  bad[bad.size() - 20] = static_cast<char>(bad[bad.size() - 20] ^ 1);  // inside the IDAT chunk
  EXPECT_NE(error_of([&] { parse_png(bad, "b.png"); }).find("b.png: a damaged PNG ("), std::string::npos);
  const std::string cut = error_of([&] { parse_png(good.substr(0, 30), "t.png"); });
  EXPECT_EQ(cut.rfind("t.png: ", 0), 0u) << cut;
#endif
}

#ifndef BITLEARN_HAS_PNG
TEST(PngTest, BuildWithoutLibpngSaysWhatToInstall) {
  EXPECT_NE(error_of([&] { parse_png(std::string("\x89PNG\r\n\x1a\n....", 12), "n.png"); })
                .find("n.png: this build has no PNG support: install libpng-dev and rebuild"),
            std::string::npos);
}
#endif

TEST(PnmTest, ParsesGreyAndColourWithComments) {
  DecodedImage g = parse_pnm(std::string("P5 # grey\n3 2\n# maxval next\n255\n") + std::string("\x01\x02\x03\x04\x05\x06", 6),
                         "g.pgm");
  EXPECT_EQ(g.width, 3);
  EXPECT_EQ(g.height, 2);
  EXPECT_EQ(g.channels, 1);
  EXPECT_EQ(g.pixels, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  DecodedImage c = parse_pnm(std::string("P6\n1 1\n255\n") + std::string("\x0a\x0b\x0c", 3), "c.ppm");
  EXPECT_EQ(c.channels, 3);
  EXPECT_EQ(c.pixels, (std::vector<uint8_t>{10, 11, 12}));
}

TEST(PnmTest, RefusesOtherFormatsAndTruncation) {
  EXPECT_NE(error_of([] { parse_pnm("P2\n1 1\n255\n7", "a.pgm"); }).find("a.pgm: not a binary PGM (P5) or PPM (P6)"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_pnm("P5\n1 1\n65535\n77", "b.pgm"); }).find("maxval 65535"), std::string::npos);
  EXPECT_NE(error_of([] { parse_pnm("P5\n2 2\n255\nabc", "c.pgm"); }).find("c.pgm: truncated: 2x2x1 needs 4"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_pnm("P5\nx 2\n255\nabcd", "d.pgm"); }).find("bad or missing width"), std::string::npos);
}

TEST_F(ImageFolderTest, ClassesInByteOrderLabelsAndScaling) {
  grey("zebra", "b.pgm", 0, 255);
  grey("ant", "2.pgm", 51, 102);
  grey("ant", "1.pgm", 255, 0);
  grey("zebra", ".hidden", 1, 1);  // skipped (hidden)
  ImageFolder f = load_image_folder(root_);
  EXPECT_EQ(f.classes, (std::vector<std::string>{"ant", "zebra"}));
  EXPECT_EQ(f.channels, 1);
  EXPECT_EQ(f.data.height, 1);
  EXPECT_EQ(f.data.width, 2);
  EXPECT_EQ(f.data.labels.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1}));
  // Files in name order within a class; byte / 255 correctly rounded (51 / 255 = 0.2f).
  EXPECT_EQ(f.data.images.to_vector<float>(), (std::vector<float>{1.0f, 0.0f, 0.2f, 0.4f, 0.0f, 1.0f}));
}

TEST_F(ImageFolderTest, HeldOutFolderKeepsTheTrainingIndices) {
  grey("b", "1.pgm", 1, 2);
  ImageFolder f = load_image_folder(root_, {"a", "b", "c"});
  EXPECT_EQ(f.data.labels.to_vector<int64_t>(), (std::vector<int64_t>{1}));
  grey("d", "1.pgm", 1, 2);
  EXPECT_NE(error_of([&] { load_image_folder(root_, {"a", "b", "c"}); }).find("class 'd' is not one of the training classes"),
            std::string::npos);
}

TEST_F(ImageFolderTest, PngFilesOfEveryKindTogether) {
  BL_NEEDS_PNG();
#ifdef BITLEARN_HAS_PNG
  // A palette PNG and an 8-bit RGB one of the same size: both 3 channels.
  const std::vector<uint8_t> colormap{0, 51, 255, 255, 0, 0}, index{1, 0}, rgb{0, 0, 0, 255, 255, 255};
  fs::create_directories(root_ + "/a");
  fs::create_directories(root_ + "/b");
  write_file_atomic(root_ + "/a/1.png", write_png(2, 1, PNG_FORMAT_RGB | PNG_FORMAT_FLAG_COLORMAP, index.data(), colormap),
                    "image");
  write_file_atomic(root_ + "/b/1.PNG", write_png(2, 1, PNG_FORMAT_RGB, rgb.data()), "image");
  ImageFolder f = load_image_folder(root_);
  EXPECT_EQ(f.channels, 3);
  EXPECT_EQ(f.data.images.to_vector<float>(),
            (std::vector<float>{1.0f, 0.0f, 0.0f, 0.0f, 0.2f, 1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f}));
#endif
}

TEST_F(ImageFolderTest, Errors) {
  EXPECT_NE(error_of([&] { load_image_folder(root_); }).find("holds no class subfolders"), std::string::npos);
  grey("only", "1.pgm", 1, 2);
  EXPECT_NE(error_of([&] { load_image_folder(root_); }).find("holds one class only ('only')"), std::string::npos);
  fs::create_directories(root_ + "/other");
  EXPECT_NE(error_of([&] { load_image_folder(root_); }).find("/other' holds no images"), std::string::npos);
  write_file_atomic(root_ + "/other/1.pgm", std::string("P5\n1 2\n255\nab"), "image");
  EXPECT_NE(error_of([&] { load_image_folder(root_); }).find("is 1x2x1 but"), std::string::npos);
  EXPECT_NE(error_of([&] { load_image_folder(root_ + "/nowhere"); }).find("not a folder"), std::string::npos);
}

}  // namespace
}  // namespace bl::nn
