// test_csv.cpp: the CSV reader's parsing and its errors (missing target, non-numeric cell, ragged
// rows, empty file, NaN target), and the prediction writer's exact float text.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "core/error.h"
#include "ml_test_util.h"

namespace bl {
namespace {

using ml_test::error_of;

TEST(MlCsv, ParsesHeaderCellsAndTarget) {
  CsvTable t = parse_csv("a, b ,y\n1,2.5,0\n-3e2,\"4\",1\n\n5,,1\n");
  ASSERT_EQ(t.columns, (std::vector<std::string>{"a", "b", "y"}));
  ASSERT_EQ(t.rows, 3);
  EXPECT_EQ(t.values[3], -300.0f);
  EXPECT_EQ(t.values[4], 4.0f);
  EXPECT_TRUE(std::isnan(t.values[7]));  // empty cell = missing
  CsvXy xy = csv_to_xy(t, "y");
  EXPECT_EQ(xy.X.shape(), (Shape{3, 2}));
  EXPECT_EQ(xy.y.to_vector<float>(), (std::vector<float>{0, 1, 1}));
  EXPECT_EQ(xy.feature_names, (std::vector<std::string>{"a", "b"}));
  CsvXy picked = csv_to_xy(t, "", {"b"});
  EXPECT_EQ(picked.X.shape(), (Shape{3, 1}));
  EXPECT_FALSE(picked.y.defined());
}

TEST(MlCsv, ClearErrors) {
  EXPECT_NE(error_of([] { csv_to_xy(parse_csv("a,b\n1,2\n"), "label"); }).find("target column 'label' not found"),
            std::string::npos);
  // A cell that is not a number makes a text column, refused as a feature.
  std::string e = error_of([] { csv_to_xy(parse_csv("a,b\n1,2\n3,x7\n", "t.csv"), "", {}, "t.csv"); });
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("column 'b'"), std::string::npos) << e;
  EXPECT_NE(e.find("'x7' is not a number"), std::string::npos) << e;
  EXPECT_NE(error_of([] { parse_csv("a,b\n1,2\n3\n"); }).find("ragged row"), std::string::npos);
  EXPECT_NE(error_of([] { parse_csv(""); }).find("empty file"), std::string::npos);
  EXPECT_NE(error_of([] { parse_csv("a,b\n"); }).find("no data rows"), std::string::npos);
  EXPECT_NE(error_of([] { csv_to_xy(parse_csv("a,y\n1,2\n3,\n"), "y"); }).find("missing or NaN"),
            std::string::npos);
  EXPECT_NE(error_of([] { csv_to_xy(parse_csv("a,y\n1,2\n"), "y", {"zz"}); }).find("'zz'"), std::string::npos);
  EXPECT_NE(error_of([] { read_csv("/nonexistent/nowhere.csv"); }).find("/nonexistent/nowhere.csv"),
            std::string::npos);
}

TEST(MlCsv, TextColumnsAreLabels) {
  CsvTable t = parse_csv("a,label\n1,2\n2,\"cat, tabby\"\n3,dog\n4,\n5,\"say \"\"hi\"\"\"\n", "t.csv");
  ASSERT_EQ(t.text.size(), 1u);
  const CsvTextColumn& col = t.text.at(1);
  EXPECT_EQ(col.cells, (std::vector<std::string>{"2", "cat, tabby", "dog", "", "say \"hi\""}));
  EXPECT_EQ(col.first_line, 3);
  EXPECT_EQ(col.first_cell, "cat, tabby");
  EXPECT_TRUE(std::isnan(t.values[1]) && std::isnan(t.values[3]));  // a text column's values are NaN
  EXPECT_NE(error_of([&] { csv_to_xy(t, "label"); }).find("target column 'label' is missing on data row 4"),
            std::string::npos);
  CsvTable u = parse_csv("a,label\n1,dog\n2,cat\n3,dog\n4,2\n");
  CsvXy xy = csv_to_xy(u, "label");
  EXPECT_EQ(xy.label_names, (std::vector<std::string>{"2", "cat", "dog"}));  // byte order
  EXPECT_EQ(xy.y.to_vector<float>(), (std::vector<float>{2, 1, 2, 0}));
  EXPECT_NE(error_of([&] { csv_to_xy(u, "a", {"label"}); }).find("'dog' is not a number"), std::string::npos);
  // Fields that need quotes are quoted so that the reader gives them back.
  for (const std::string s : {"plain", "a,b", "say \"hi\"", " padded ", ""}) {
    CsvTable back = parse_csv("x,y\n1," + csv_field(s) + "\n2,z\n");
    EXPECT_EQ(back.text.at(1).cells[0], s.empty() ? "" : (s == " padded " ? "padded" : s)) << s;
  }
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
}

TEST(MlCsv, FloatTextRoundTrips) {
  for (float v : {0.1f, 1.0f / 3.0f, -2.5e-38f, 3.4028235e38f, 1e-45f, 0.0f, -0.0f, 123456789.0f}) {
    std::string s = float_to_text(v);
    float back = std::strtof(s.c_str(), nullptr);
    EXPECT_EQ(std::memcmp(&back, &v, 4), 0) << s;
  }
  EXPECT_EQ(float_to_text(0.5f), "0.5");
  std::string path = testing::TempDir() + "/bl_pred.csv";
  write_csv(path, {"p"}, Tensor::from_vector(std::vector<float>{0.1f, 2.0f}, {2}));
  EXPECT_EQ(read_file_text(path), "p\n0.1\n2\n");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace bl
