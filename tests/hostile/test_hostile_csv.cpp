// test_hostile_csv.cpp: CSV input a hostile user may give. A column name given twice is refused
// naming the column (a lookup by name would silently pick the first one), a directory is reported as
// a directory, and a model whose feature names repeat is refused before it reads a column twice.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "bitlearn/csv.h"
#include "core/error.h"

namespace bl {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HostileCsv, DuplicateColumnNamesAreRefused) {
  std::string e = error_of([] { parse_csv("f0,f0,f2,f2,target\n1,2,3,4,5\n", "dup.csv"); });
  EXPECT_NE(e.find("dup.csv: header (line 1) names column 'f0' twice (columns 1 and 2)"), std::string::npos) << e;
  e = error_of([] { parse_csv("a,target,b,target\n1,2,3,4\n", "t.csv"); });
  EXPECT_NE(e.find("column 'target' twice (columns 2 and 4)"), std::string::npos) << e;
  // Names are compared after trimming: " a" and "a" are one name.
  e = error_of([] { parse_csv("a, a\n1,2\n", "s.csv"); });
  EXPECT_NE(e.find("column 'a' twice"), std::string::npos) << e;
  EXPECT_EQ(error_of([] { parse_csv("a,A,b\n1,2,3\n"); }), "");  // names are case-sensitive
}

TEST(HostileCsv, RepeatedFeatureNamesOfAModelAreRefused) {
  const CsvTable t = parse_csv("f0,f1,y\n1,2,3\n");
  std::string e = error_of([&] { csv_to_xy(t, "", {"f0", "f0"}, "p.csv"); });
  EXPECT_NE(e.find("p.csv: feature column 'f0' is asked for twice"), std::string::npos) << e;
}

TEST(HostileCsv, DirectoryIsReportedAsADirectory) {
  const std::string dir = testing::TempDir() + "/bl_hostile_csv_dir";
  std::filesystem::create_directories(dir);
  std::string e = error_of([&] { read_csv(dir); });
  EXPECT_NE(e.find(dir + ": is a directory, not a CSV file"), std::string::npos) << e;
  std::filesystem::remove(dir);
}

TEST(HostileCsv, WideFileParsesInMemoryOfItsOwnSize) {
  // 3 rows x 20,001 columns (about 120 KB): the table holds 60,003 floats, nothing quadratic.
  const int64_t cols = 20001;
  std::string text;
  for (int64_t c = 0; c < cols; ++c) text += (c ? ",c" : "c") + std::to_string(c);
  text += "\n";
  for (int r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < cols; ++c) text += c ? ",1" : "1";
    text += "\n";
  }
  const CsvTable t = parse_csv(text, "wide.csv");
  EXPECT_EQ(t.rows, 3);
  EXPECT_EQ(static_cast<int64_t>(t.columns.size()), cols);
  EXPECT_EQ(static_cast<int64_t>(t.values.size()), 3 * cols);
}

}  // namespace
}  // namespace bl
