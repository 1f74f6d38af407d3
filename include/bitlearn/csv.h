// csv.h: reading numeric tables from CSV files (header row + numeric cells) and writing predictions.
//
// Format: the first line names the columns; every further non-empty line holds one numeric cell
// per column, separated by commas (surrounding spaces and double quotes around a cell are
// trimmed). An empty cell or "nan"/"NaN"/"NA" is a missing value (NaN); anything else that is not a
// whole number in C syntax is an error naming the row (1-based, header = line 1) and the column.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl {

// A column holding text: a cell that is not a number (class names such as "setosa").
struct CsvTextColumn {
  std::vector<std::string> cells;  // each row's cell, trimmed ("" where missing)
  int64_t first_line = 0;          // the file line of its first cell that is not a number
  std::string first_cell;          // and that cell
};

// A parsed CSV file: column names and the cells as f32, row-major [rows, columns]. A column with a
// cell that is not a number is a text column: its values are NaN and its cells are in `text`.
struct CsvTable {
  std::vector<std::string> columns;
  int64_t rows = 0;
  std::vector<float> values;
  std::map<size_t, CsvTextColumn> text;  // column index -> its cells
};

// Parses CSV text; `source` names the input in errors (empty file, ragged row, bad cell, a column
// name given twice, ...).
CsvTable parse_csv(const std::string& text, const std::string& source = "csv");
// Reads and parses a CSV file (errors name the path; a directory is refused as one).
CsvTable read_csv(const std::string& path);
// Reads a Parquet file into the table read_csv gives for the same data: numeric and boolean columns
// as f32 (a null is NaN), string columns (dictionary-encoded too) as text columns (a null is a
// missing cell, ""). Other column types, damaged files and more than 2^28 cells are refused.
// Throws bl::Error naming the path in a build without Apache Arrow (BITLEARN_PARQUET).
CsvTable read_parquet(const std::string& path);
// Reads a table file: Parquet when the file starts with "PAR1" or its name ends in ".parquet", else CSV.
CsvTable read_table(const std::string& path);

// Features X [rows, d] (f32) and target y [rows] (f32) of a table.
struct CsvXy {
  Tensor X;
  Tensor y;                                // undefined when no target column was asked for
  std::vector<std::string> feature_names;  // the columns of X, in order
  // A text target: its distinct labels in ascending (byte) order; y then holds each row's index in
  // it (0, 1, ...), as f32. Empty for a numeric target.
  std::vector<std::string> label_names;
};

// Splits a table into X and y. target: the target column's name (empty = no target: every column
// is a feature). features: when non-empty, exactly these columns in this order form X (others are
// ignored); a named column that is missing, or named twice in features, throws bl::Error. A text
// column among the features throws (naming its first cell that is not a number); a text target
// gives label_names and the labels' indices.
CsvXy csv_to_xy(const CsvTable& table, const std::string& target,
                const std::vector<std::string>& features = {}, const std::string& source = "csv");

// Writes a [n] or [n, k] tensor (f32, i32 or i64) as CSV with the given header names (k of them),
// each float in its shortest text form that reads back to the same value. Atomic write.
void write_csv(const std::string& path, const std::vector<std::string>& header, const Tensor& values);

// One CSV field: the text as it is, or quoted (" doubled) when it holds a comma, a quote or
// surrounding spaces, so that parse_csv reads it back (a line break inside a field is not supported).
std::string csv_field(const std::string& text);

// Shortest decimal text of a float that reads back (strtof) to the same bits; "nan", "inf", "-inf".
std::string float_to_text(float value);

}  // namespace bl
