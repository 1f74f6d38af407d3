// reader.cpp: the Parquet reader module (libbitlearn_parquet), the only code that uses Apache Arrow.
//
// Arrow's libraries are large: linked into every program, they cost each start about 12 ms of
// loading. So they live in this module, which the library opens (src/io/parquet.cpp) the first
// time a Parquet file is read. It is built as C++20 (Arrow's headers need it) only where CMake found
// Arrow (BITLEARN_PARQUET, see CMakeLists.txt). Its one entry point takes and fills the library's
// own types; errors come back as the message text, never as an exception across the module edge.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/float16.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <new>
#include <string>

#include "bitlearn/csv.h"
#include "core/error.h"
#include "io/parquet_arrow/module.h"
#include "text/utf8.h"

namespace bl {

namespace {

// What a table may hold: 2^28 cells (1 GiB of f32 values, the most a CSV file read from a pipe can
// give) and 1 GiB of text. A Parquet file is compressed, so a small file could otherwise ask for
// any amount of memory.
constexpr int64_t kMaxCells = int64_t{1} << 28;
constexpr int64_t kMaxTextBytes = int64_t{1} << 30;

// Appends one numeric chunk's values (nulls -> NaN) to column c of the row-major table.
template <typename ArrayT, typename Convert>
void put_numeric(const arrow::Array& chunk, int64_t row0, size_t c, size_t width, std::vector<float>& values,
                 Convert convert) {
  const auto& a = static_cast<const ArrayT&>(chunk);
  for (int64_t i = 0; i < a.length(); ++i)
    values[static_cast<size_t>(row0 + i) * width + c] = a.IsNull(i) ? std::nanf("") : convert(a.Value(i));
}

bool is_string_type(const arrow::DataType& t) {
  return t.id() == arrow::Type::STRING || t.id() == arrow::Type::LARGE_STRING ||
         t.id() == arrow::Type::STRING_VIEW;
}

// One string of a string array (plain, large or view) at i; the caller has checked it is not null.
std::string string_at(const arrow::Array& a, int64_t i) {
  switch (a.type_id()) {
    case arrow::Type::STRING: return static_cast<const arrow::StringArray&>(a).GetString(i);
    case arrow::Type::LARGE_STRING: return static_cast<const arrow::LargeStringArray&>(a).GetString(i);
    default: return static_cast<const arrow::StringViewArray&>(a).GetString(i);
  }
}

bool readable_number(arrow::Type::type id) {
  switch (id) {
    case arrow::Type::NA: case arrow::Type::BOOL:
    case arrow::Type::INT8: case arrow::Type::INT16: case arrow::Type::INT32: case arrow::Type::INT64:
    case arrow::Type::UINT8: case arrow::Type::UINT16: case arrow::Type::UINT32: case arrow::Type::UINT64:
    case arrow::Type::HALF_FLOAT: case arrow::Type::FLOAT: case arrow::Type::DOUBLE:
      return true;
    default:
      return false;
  }
}

// Fills column c from a numeric chunk starting at row0.
void put_numeric_chunk(const arrow::Array& a, int64_t row0, size_t c, size_t w, std::vector<float>& v) {
  // Every conversion rounds to nearest once, as strtof does with the same number written in a CSV.
  auto f = [](auto x) { return static_cast<float>(x); };
  switch (a.type_id()) {
    case arrow::Type::NA:
      for (int64_t i = 0; i < a.length(); ++i) v[static_cast<size_t>(row0 + i) * w + c] = std::nanf("");
      return;
    case arrow::Type::BOOL: return put_numeric<arrow::BooleanArray>(a, row0, c, w, v, [](bool b) { return b ? 1.0f : 0.0f; });
    case arrow::Type::INT8: return put_numeric<arrow::Int8Array>(a, row0, c, w, v, f);
    case arrow::Type::INT16: return put_numeric<arrow::Int16Array>(a, row0, c, w, v, f);
    case arrow::Type::INT32: return put_numeric<arrow::Int32Array>(a, row0, c, w, v, f);
    case arrow::Type::INT64: return put_numeric<arrow::Int64Array>(a, row0, c, w, v, f);
    case arrow::Type::UINT8: return put_numeric<arrow::UInt8Array>(a, row0, c, w, v, f);
    case arrow::Type::UINT16: return put_numeric<arrow::UInt16Array>(a, row0, c, w, v, f);
    case arrow::Type::UINT32: return put_numeric<arrow::UInt32Array>(a, row0, c, w, v, f);
    case arrow::Type::UINT64: return put_numeric<arrow::UInt64Array>(a, row0, c, w, v, f);
    case arrow::Type::HALF_FLOAT:
      return put_numeric<arrow::HalfFloatArray>(
          a, row0, c, w, v, [](uint16_t bits) { return arrow::util::Float16::FromBits(bits).ToFloat(); });
    case arrow::Type::FLOAT: return put_numeric<arrow::FloatArray>(a, row0, c, w, v, f);
    case arrow::Type::DOUBLE: return put_numeric<arrow::DoubleArray>(a, row0, c, w, v, f);
    default: throw Error("read_parquet: internal: not a numeric column");
  }
}

// Arrow's message for a damaged file can quote the bad bytes: they are shown as '?'.
std::string printable(std::string s) {
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7F) ch = '?';
  return s;
}

template <typename T>
T value_or_throw(arrow::Result<T> r, const std::string& path, const char* what) {
  BL_CHECK(r.ok(), path, ": ", what, " (", printable(r.status().message()), ")");
  return std::move(r).ValueOrDie();
}

CsvTable read_parquet_impl(const std::string& path) {
  // Arrow's own message for these cases names neither the file nor the cause plainly.
  struct stat st {};
  BL_CHECK(::stat(path.c_str(), &st) == 0, path, ": cannot open the Parquet file (", std::strerror(errno), ")");
  BL_CHECK(S_ISREG(st.st_mode), path, ": not a regular file (a Parquet file must be one: it is read from its end)");
  BL_CHECK(st.st_size >= 12, path, ": not a Parquet file (", st.st_size,
           " bytes; a Parquet file is at least 12: PAR1, its footer, PAR1)");
  {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    BL_CHECK(fd >= 0, path, ": cannot open the Parquet file (", std::strerror(errno), ")");
    char head[4] = {}, tail[4] = {};
    const bool got = ::pread(fd, head, 4, 0) == 4 && ::pread(fd, tail, 4, st.st_size - 4) == 4;
    ::close(fd);
    BL_CHECK(got, path, ": cannot read the Parquet file");
    BL_CHECK(std::memcmp(head, "PAR1", 4) == 0, path, ": not a Parquet file (it does not start with PAR1)");
    BL_CHECK(std::memcmp(tail, "PARE", 4) != 0, path, ": an encrypted Parquet file; not supported");
    BL_CHECK(std::memcmp(tail, "PAR1", 4) == 0, path,
             ": truncated or damaged Parquet file (it does not end with PAR1, where its footer ends)");
  }

  auto file = value_or_throw(arrow::io::ReadableFile::Open(path), path, "cannot open the Parquet file");
  auto reader = value_or_throw(parquet::arrow::OpenFile(file, arrow::default_memory_pool()), path,
                               "damaged Parquet file: its footer cannot be read");
  const auto meta = reader->parquet_reader()->metadata();
  std::shared_ptr<arrow::Schema> schema;
  {
    const arrow::Status s = reader->GetSchema(&schema);
    BL_CHECK(s.ok(), path, ": damaged Parquet file: its schema cannot be read (", printable(s.message()), ")");
  }
  const int ncols = schema->num_fields();
  BL_CHECK(ncols > 0, path, ": the Parquet file has no columns");

  // Names and types first: a column this reader cannot represent is refused before any data is read.
  CsvTable t;
  std::map<std::string, int> seen;
  for (int c = 0; c < ncols; ++c) {
    const auto& field = *schema->field(c);
    const std::string& name = field.name();
    BL_CHECK(!name.empty(), path, ": column ", c + 1, " has an empty name");
    BL_CHECK(text::first_invalid_utf8(name) == std::string::npos, path, ": column ", c + 1,
             " name is not valid UTF-8 (byte ", text::first_invalid_utf8(name) + 1, ")");
    auto [it, fresh] = seen.emplace(name, c + 1);
    BL_CHECK(fresh, path, ": names column '", name, "' twice (columns ", it->second, " and ", c + 1,
             "); column names must be unique");
    const arrow::DataType& type = *field.type();
    const bool text = is_string_type(type) ||
                      (type.id() == arrow::Type::DICTIONARY &&
                       is_string_type(*static_cast<const arrow::DictionaryType&>(type).value_type()));
    BL_CHECK(text || readable_number(type.id()), path, ": column '", name, "' has type ", type.ToString(),
             "; only numbers, booleans and strings can be read (nested, list, map, struct, binary, decimal, "
             "date and time columns cannot: cast the column to a number or a string when writing the file)");
    t.columns.push_back(name);
  }

  const int64_t rows = meta->num_rows();
  BL_CHECK(rows >= 0, path, ": damaged Parquet file (its footer says ", rows, " rows)");
  BL_CHECK(rows > 0, path, ": no data rows (the Parquet file holds 0 rows)");
  int64_t group_rows = 0;
  for (int g = 0; g < meta->num_row_groups(); ++g) {
    const int64_t n = meta->RowGroup(g)->num_rows();
    BL_CHECK(n >= 0 && n <= rows - group_rows, path, ": damaged Parquet file (its row groups hold more rows than ",
             "its footer's ", rows, ")");
    group_rows += n;
  }
  BL_CHECK(group_rows == rows, path, ": damaged Parquet file (its row groups hold ", group_rows,
           " rows, its footer says ", rows, ")");
  BL_CHECK(rows <= kMaxCells / ncols, path, ": ", rows, " rows x ", ncols, " columns; refused past ", kMaxCells,
           " cells (1 GiB of float32 values)");

  const std::shared_ptr<arrow::Table> table =
      value_or_throw(reader->ReadTable(), path, "damaged Parquet file: its data cannot be read");
  BL_CHECK(table->num_rows() == rows && table->num_columns() == ncols, path,
           ": damaged Parquet file (its data disagree with its footer)");

  t.rows = rows;
  const size_t w = static_cast<size_t>(ncols);
  t.values.assign(static_cast<size_t>(rows) * w, 0.0f);
  int64_t text_bytes = 0;
  for (int c = 0; c < ncols; ++c) {
    const arrow::ChunkedArray& column = *table->column(c);
    const std::string& name = t.columns[static_cast<size_t>(c)];
    int64_t row0 = 0;
    if (readable_number(column.type()->id())) {
      for (const auto& chunk : column.chunks()) {
        put_numeric_chunk(*chunk, row0, static_cast<size_t>(c), w, t.values);
        row0 += chunk->length();
      }
      continue;
    }
    // A string column: a text column of the table, a null being a missing cell ("" and NaN) as an
    // empty CSV cell is. A column of nothing but missing cells stays numeric (all NaN), as in a CSV.
    CsvTextColumn col;
    col.cells.reserve(static_cast<size_t>(rows));
    for (const auto& chunk : column.chunks()) {
      const arrow::Array* strings = chunk.get();
      const arrow::Array* indices = nullptr;
      if (chunk->type_id() == arrow::Type::DICTIONARY) {
        const auto& d = static_cast<const arrow::DictionaryArray&>(*chunk);
        strings = d.dictionary().get();
        indices = d.indices().get();
      }
      for (int64_t i = 0; i < chunk->length(); ++i) {
        std::string cell;
        if (!chunk->IsNull(i)) {
          int64_t k = i;
          if (indices != nullptr) {
            switch (indices->type_id()) {
              case arrow::Type::INT8: k = static_cast<const arrow::Int8Array&>(*indices).Value(i); break;
              case arrow::Type::INT16: k = static_cast<const arrow::Int16Array&>(*indices).Value(i); break;
              case arrow::Type::INT32: k = static_cast<const arrow::Int32Array&>(*indices).Value(i); break;
              case arrow::Type::INT64: k = static_cast<const arrow::Int64Array&>(*indices).Value(i); break;
              default: throw Error(detail::concat(path, ": column '", name, "' has dictionary indices of type ",
                                                  indices->type()->ToString(), "; not supported"));
            }
            BL_CHECK(k >= 0 && k < strings->length(), path, ": damaged Parquet file (column '", name,
                     "' row ", row0 + i + 1, " has dictionary index ", k, " of ", strings->length(), ")");
          }
          if (!strings->IsNull(k)) cell = string_at(*strings, k);
        }
        text_bytes += static_cast<int64_t>(cell.size());
        BL_CHECK(text_bytes <= kMaxTextBytes, path, ": more than 1 GiB of text; refused");
        if (!cell.empty()) {
          BL_CHECK(text::first_invalid_utf8(cell) == std::string::npos, path, ": column '", name, "' row ",
                   row0 + i + 1, " holds text that is not valid UTF-8");
          if (col.first_cell.empty()) {
            col.first_line = row0 + i + 2;  // the line the row would have in a CSV (header = line 1)
            col.first_cell = cell;
          }
        }
        t.values[static_cast<size_t>(row0 + i) * w + static_cast<size_t>(c)] = std::nanf("");
        col.cells.push_back(std::move(cell));
      }
      row0 += chunk->length();
    }
    if (!col.first_cell.empty()) t.text.emplace(static_cast<size_t>(c), std::move(col));
  }
  return t;
}

CsvTable read_parquet_checked(const std::string& path) {
  std::error_code ec;
  BL_CHECK(!std::filesystem::is_directory(path, ec), path, ": is a directory, not a Parquet file");
  try {
    return read_parquet_impl(path);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(path + ": out of memory reading the Parquet file");
  } catch (const std::exception& e) {
    // Arrow's and Parquet's own exceptions (a damaged page, say) become the library's error.
    throw Error(path + ": damaged Parquet file (" + printable(e.what()) + ")");
  }
}


}  // namespace


}  // namespace bl

extern "C" BL_PARQUET_MODULE_EXPORT int bitlearn_parquet_read_v1(const char* path, bl::CsvTable* out,
                                                                 std::string* error) {
  try {
    *out = bl::read_parquet_checked(path);
    return 0;
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = std::string(path) + ": reading the Parquet file failed";
  }
  return 1;
}
