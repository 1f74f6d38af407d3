// csv.cpp: the CSV reader and prediction writer (see bitlearn/csv.h).
#include "bitlearn/csv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "bitlearn/io.h"
#include "core/error.h"
#include "text/utf8.h"

namespace bl {

namespace {

// Splits one line into cells on commas, honouring double quotes ("a,b" is one cell).
std::vector<std::string> split_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') {
      cur.push_back('"');  // "" inside quotes: one quote character
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  cells.push_back(cur);
  return cells;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

bool is_missing(const std::string& s) {
  return s.empty() || s == "nan" || s == "NaN" || s == "NAN" || s == "NA" || s == "-nan";
}

}  // namespace

CsvTable parse_csv(const std::string& text, const std::string& source) {
  CsvTable t;
  size_t pos = 0;
  int64_t line_no = 0;
  bool have_header = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (trim(line).empty()) continue;
    std::vector<std::string> cells = split_line(line);
    if (!have_header) {
      if (line_no == 1 && line.size() >= 3 && static_cast<unsigned char>(line[0]) == 0xEF &&
          static_cast<unsigned char>(line[1]) == 0xBB && static_cast<unsigned char>(line[2]) == 0xBF) {
        cells = split_line(line.substr(3));  // UTF-8 byte-order mark
      }
      std::map<std::string, size_t> seen;  // name -> 1-based column
      for (size_t i = 0; i < cells.size(); ++i) {
        std::string& c = cells[i];
        c = trim(c);
        BL_CHECK(!c.empty(), source, ": header (line ", line_no, ") has an empty column name");
        // Names go into model files (JSON), which hold UTF-8 text only.
        BL_CHECK(text::first_invalid_utf8(c) == std::string::npos, source, ": header (line ", line_no,
                 ") column ", i + 1, " name is not valid UTF-8 (byte ", text::first_invalid_utf8(c) + 1,
                 "); save the file as UTF-8");
        // Two columns of one name would make every lookup by name pick the first one silently.
        auto [it, fresh] = seen.emplace(c, i + 1);
        BL_CHECK(fresh, source, ": header (line ", line_no, ") names column '", c, "' twice (columns ",
                 it->second, " and ", i + 1, "); column names must be unique");
      }
      t.columns = cells;
      have_header = true;
      continue;
    }
    BL_CHECK(cells.size() == t.columns.size(), source, ": line ", line_no, " has ", cells.size(),
             " cells but the header has ", t.columns.size(), " columns (ragged row)");
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string cell = trim(cells[c]);
      if (is_missing(cell)) {
        t.values.push_back(std::nanf(""));
        auto text = t.text.find(c);
        if (text != t.text.end()) text->second.cells.push_back(std::string());
        continue;
      }
      char* stop = nullptr;
      float v = std::strtof(cell.c_str(), &stop);
      auto text = t.text.find(c);
      if (text == t.text.end() && stop != cell.c_str() + cell.size()) {
        // The column's first cell that is not a number: from here on it is a text column, its
        // earlier cells in their shortest text.
        CsvTextColumn col;
        col.first_line = line_no;
        col.first_cell = cell;
        const size_t w = t.columns.size();
        for (int64_t r = 0; r < t.rows; ++r) {
          float& prev = t.values[static_cast<size_t>(r) * w + c];
          col.cells.push_back(std::isnan(prev) ? std::string() : float_to_text(prev));
          prev = std::nanf("");
        }
        text = t.text.emplace(c, std::move(col)).first;
      }
      if (text != t.text.end()) {
        BL_CHECK(text::first_invalid_utf8(cell) == std::string::npos, source, ": line ", line_no, " column '",
                 t.columns[c], "' holds text that is not valid UTF-8; save the file as UTF-8");
        text->second.cells.push_back(cell);
        v = std::nanf("");
      }
      t.values.push_back(v);
    }
    ++t.rows;
  }
  BL_CHECK(have_header, source, ": empty file (expected a header row and data rows)");
  BL_CHECK(t.rows > 0, source, ": no data rows after the header");
  return t;
}

CsvTable read_csv(const std::string& path) {
  std::error_code ec;
  BL_CHECK(!std::filesystem::is_directory(path, ec), path, ": is a directory, not a CSV file");
  return parse_csv(read_file_text(path, "CSV file"), path);
}

CsvXy csv_to_xy(const CsvTable& table, const std::string& target,
                const std::vector<std::string>& features, const std::string& source) {
  auto list = [&] {
    std::string s;
    for (const auto& c : table.columns) s += (s.empty() ? "" : ", ") + c;
    return s;
  };
  auto find = [&](const std::string& name) -> int64_t {
    for (size_t i = 0; i < table.columns.size(); ++i)
      if (table.columns[i] == name) return static_cast<int64_t>(i);
    return -1;
  };
  int64_t target_col = -1;
  if (!target.empty()) {
    target_col = find(target);
    BL_CHECK(target_col >= 0, source, ": target column '", target, "' not found (columns: ", list(), ")");
  }
  std::vector<int64_t> cols;
  CsvXy out;
  if (!features.empty()) {
    std::set<std::string> asked;
    for (const auto& f : features)
      BL_CHECK(asked.insert(f).second, source, ": feature column '", f,
               "' is asked for twice (the model's feature names must be unique)");
    for (const auto& f : features) {
      int64_t c = find(f);
      BL_CHECK(c >= 0, source, ": feature column '", f, "' (used when the model was fit) not found (columns: ",
               list(), ")");
      cols.push_back(c);
    }
    out.feature_names = features;
    BL_CHECK(std::find(features.begin(), features.end(), target) == features.end() || target.empty(), source,
             ": column '", target, "' is both the target and a feature");
  } else {
    for (size_t i = 0; i < table.columns.size(); ++i) {
      if (static_cast<int64_t>(i) == target_col) continue;
      cols.push_back(static_cast<int64_t>(i));
      out.feature_names.push_back(table.columns[i]);
    }
  }
  BL_CHECK(!cols.empty(), source, ": no feature columns besides the target '", target, "'");
  for (int64_t c : cols) {
    auto text = table.text.find(static_cast<size_t>(c));
    BL_CHECK(text == table.text.end(), source, ": line ", text->second.first_line, ", column '", table.columns[c],
             "' (", c + 1, "): '", text->second.first_cell,
             "' is not a number (a column of text can be a classifier's target, or a feature one-hot encoded with "
             "--categorical; --ignore leaves it out)");
  }
  const int64_t n = table.rows, d = static_cast<int64_t>(cols.size()),
                w = static_cast<int64_t>(table.columns.size());
  std::vector<float> x(static_cast<size_t>(n * d));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < d; ++j) x[r * d + j] = table.values[r * w + cols[j]];
  out.X = Tensor::from_vector(x, {n, d});
  auto text_target = target_col >= 0 ? table.text.find(static_cast<size_t>(target_col)) : table.text.end();
  if (text_target != table.text.end()) {
    const std::vector<std::string>& cells = text_target->second.cells;
    std::set<std::string> distinct;
    for (int64_t r = 0; r < n; ++r) {
      BL_CHECK(!cells[r].empty(), source, ": target column '", target, "' is missing on data row ", r + 1, " (line ",
               r + 2, ")");
      distinct.insert(cells[r]);
    }
    out.label_names.assign(distinct.begin(), distinct.end());
    std::vector<float> y(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r)
      y[r] = static_cast<float>(std::lower_bound(out.label_names.begin(), out.label_names.end(), cells[r]) -
                                out.label_names.begin());
    out.y = Tensor::from_vector(y, {n});
  } else if (target_col >= 0) {
    std::vector<float> y(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      y[r] = table.values[r * w + target_col];
      BL_CHECK(!std::isnan(y[r]), source, ": target column '", target, "' is missing or NaN on data row ",
               r + 1, " (line ", r + 2, ")");
    }
    out.y = Tensor::from_vector(y, {n});
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos && (s.empty() || (s.front() != ' ' && s.back() != ' ')))
    return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string float_to_text(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(value));
    if (std::strtof(buf, nullptr) == value) break;
  }
  return buf;
}

void write_csv(const std::string& path, const std::vector<std::string>& header, const Tensor& values) {
  BL_CHECK(values.defined() && (values.ndim() == 1 || values.ndim() == 2),
           "write_csv: values must be a 1-d or 2-d tensor");
  Tensor h = values.to(Device::cpu()).contiguous();
  const int64_t n = h.dim(0), k = h.ndim() == 2 ? h.dim(1) : 1;
  BL_CHECK(static_cast<int64_t>(header.size()) == k, "write_csv: ", header.size(),
           " header names for ", k, " columns");
  std::string out;
  for (int64_t j = 0; j < k; ++j) out += (j ? "," : "") + csv_field(header[j]);
  out += "\n";
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      if (j) out += ",";
      if (h.dtype() == DType::f32) out += float_to_text(h.data<float>()[i * k + j]);
      else if (h.dtype() == DType::i64) out += std::to_string(h.data<int64_t>()[i * k + j]);
      else if (h.dtype() == DType::i32) out += std::to_string(h.data<int32_t>()[i * k + j]);
      else throw Error("write_csv: unsupported dtype " + h.str());
    }
    out += "\n";
  }
  write_file_atomic(path, out, "CSV file");
}

}  // namespace bl
