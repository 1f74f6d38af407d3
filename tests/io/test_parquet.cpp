// Tests of the Parquet reader: a file written by pyarrow (tests/data/parquet/make_fixtures.py) gives
// the table read_csv gives for the same data, bit for bit; read_table picks the format; column types
// it cannot represent and damaged files are refused with errors naming the path and the cause.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "core/error.h"

namespace bl {
namespace {

const std::string kDir = std::string(BITLEARN_SOURCE_DIR) + "/tests/data/parquet/";

// Skips the test in a build without the Parquet reader (BITLEARN_PARQUET found no Apache Arrow).
#define SKIP_WITHOUT_PARQUET()                                                                        \
  do {                                                                                                \
    try {                                                                                             \
      read_parquet(kDir + "mixed.parquet");                                                           \
    } catch (const Error& e) {                                                                        \
      if (std::string(e.what()).find("this build has no Parquet reader") != std::string::npos)        \
        GTEST_SKIP() << "this build has no Parquet reader (Apache Arrow C++ not found at configure)"; \
    }                                                                                                 \
  } while (0)

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "bl_pq_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

std::string write_bytes(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = temp_path(name);
  write_file_atomic(path, bytes);
  return path;
}

void expect_error(const std::string& path, const std::vector<std::string>& needles, bool via_read_table = false) {
  try {
    if (via_read_table) {
      read_table(path);
    } else {
      read_parquet(path);
    }
    FAIL() << "no error for " << path;
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
}

TEST(Parquet, GivesTheTableOfTheSameCsv) {
  SKIP_WITHOUT_PARQUET();
  const CsvTable p = read_parquet(kDir + "mixed.parquet");
  const CsvTable c = read_csv(kDir + "mixed.csv");
  EXPECT_EQ(p.columns, c.columns);
  ASSERT_EQ(p.rows, 10);
  ASSERT_EQ(p.rows, c.rows);
  ASSERT_EQ(p.values.size(), c.values.size());
  // Bit for bit: nulls are the same NaN, -0.0 stays negative, int64 and uint32 round once.
  EXPECT_EQ(std::memcmp(p.values.data(), c.values.data(), p.values.size() * sizeof(float)), 0);
  ASSERT_EQ(p.text.size(), 2u);  // name and color; "nothing" (only nulls) is numeric NaN, as in the CSV
  ASSERT_EQ(p.text.size(), c.text.size());
  for (const auto& [col, t] : c.text) {
    ASSERT_TRUE(p.text.count(col)) << p.columns[col];
    EXPECT_EQ(p.text.at(col).cells, t.cells) << p.columns[col];
    EXPECT_EQ(p.text.at(col).first_line, t.first_line) << p.columns[col];
    EXPECT_EQ(p.text.at(col).first_cell, t.first_cell) << p.columns[col];
  }
  EXPECT_EQ(p.text.at(6).cells[2], "");  // a null string is a missing cell
  EXPECT_EQ(p.text.at(7).cells[4], "");  // in a dictionary-encoded column too
  EXPECT_EQ(p.text.at(6).cells[9], "\xC3\x9Cn\xC3\xAF" "code");
  // X and y from it are those of the CSV.
  const CsvXy a = csv_to_xy(p, "y", {"f32", "f64", "i64", "i8", "u32", "flag"});
  const CsvXy b = csv_to_xy(c, "y", {"f32", "f64", "i64", "i8", "u32", "flag"});
  EXPECT_EQ(std::memcmp(a.X.data<float>(), b.X.data<float>(), a.X.numel() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(a.y.data<float>(), b.y.data<float>(), a.y.numel() * sizeof(float)), 0);
}

TEST(Parquet, ReadTablePicksTheFormat) {
  SKIP_WITHOUT_PARQUET();
  const CsvTable p = read_table(kDir + "mixed.parquet");
  EXPECT_EQ(p.rows, 10);
  // By the magic: a Parquet file with another name is still Parquet.
  const std::string renamed = write_bytes("renamed.data", file_bytes(kDir + "mixed.parquet"));
  EXPECT_EQ(read_table(renamed).columns, p.columns);
  // A CSV file is CSV.
  EXPECT_EQ(read_table(kDir + "mixed.csv").columns, p.columns);
  // By the name: a CSV named .parquet is refused as a Parquet file, not read as CSV.
  const std::string csv_named = write_bytes("csv.parquet", file_bytes(kDir + "mixed.csv"));
  expect_error(csv_named, {csv_named, "not a Parquet file", "PAR1"}, true);
  std::remove(renamed.c_str());
  std::remove(csv_named.c_str());
}

TEST(Parquet, RefusesColumnTypesItCannotRepresent) {
  SKIP_WITHOUT_PARQUET();
  expect_error(kDir + "list.parquet", {"list.parquet", "column 'tags'", "list<", "only numbers, booleans and strings"});
  expect_error(kDir + "struct.parquet", {"column 'point'", "struct<"});
  expect_error(kDir + "timestamp_tz.parquet", {"column 'when'", "timestamp[us, tz=UTC]"});
  expect_error(kDir + "no_rows.parquet", {"no_rows.parquet", "no data rows"});
}

TEST(Parquet, RefusesDamagedFiles) {
  SKIP_WITHOUT_PARQUET();
  const std::vector<uint8_t> good = file_bytes(kDir + "mixed.parquet");
  ASSERT_GT(good.size(), 100u);
  // Empty, too short, random bytes, a truncated file, a file cut anywhere: an error, never a crash.
  expect_error(write_bytes("empty.parquet", {}), {"empty.parquet", "not a Parquet file", "0 bytes"}, true);
  expect_error(write_bytes("short.parquet", {'P', 'A', 'R', '1'}), {"not a Parquet file", "4 bytes"});
  std::vector<uint8_t> noise(4096);
  uint32_t s = 12345;
  for (auto& b : noise) b = static_cast<uint8_t>((s = s * 1664525u + 1013904223u) >> 24);
  expect_error(write_bytes("noise.parquet", noise), {"not a Parquet file", "does not start with PAR1"}, true);
  const std::vector<uint8_t> half(good.begin(), good.begin() + good.size() / 2);
  expect_error(write_bytes("half.parquet", half), {"half.parquet", "truncated or damaged", "does not end with PAR1"});
  // PAR1 at both ends around noise: a footer that cannot be parsed.
  std::vector<uint8_t> fake = {'P', 'A', 'R', '1'};
  fake.insert(fake.end(), noise.begin(), noise.begin() + 64);
  for (char ch : std::string("PAR1")) fake.push_back(static_cast<uint8_t>(ch));
  expect_error(write_bytes("fake.parquet", fake), {"fake.parquet", "damaged Parquet file"});
  // Every byte of the data region flipped in turn would be slow; flip a spread of them: each read
  // either succeeds (a byte no checksum covers) or throws bl::Error.
  int errors = 0;
  for (size_t at = 4; at + 8 < good.size(); at += 97) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x5A;
    const std::string path = write_bytes("flip.parquet", bad);
    try {
      read_parquet(path);
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
  // A directory is refused as one.
  expect_error(::testing::TempDir(), {"is a directory"}, true);
  // A missing file names the path.
  expect_error(temp_path("missing.parquet"), {"missing.parquet", "cannot open"});
}

}  // namespace
}  // namespace bl
