// module.h: the edge between the library and its Parquet reader module (libbitlearn_parquet).
//
// The module (reader.cpp, linked with Apache Arrow) is opened with dlopen by src/io/parquet.cpp on
// the first Parquet read, so programs that never read Parquet never load Arrow. Both sides are
// built together by the same compiler, so the entry point passes the library's C++ types; a change
// of them or of the entry's meaning takes a new version suffix.
#pragma once

#include <string>

#include "bitlearn/csv.h"

#define BL_PARQUET_MODULE_EXPORT __attribute__((visibility("default")))
// The module's file name and its entry point.
#define BL_PARQUET_MODULE_FILE "libbitlearn_parquet.so"
#define BL_PARQUET_MODULE_ENTRY "bitlearn_parquet_read_v1"

// Reads the Parquet file at path into *out (0), or leaves the error's text in *error (non-zero).
extern "C" BL_PARQUET_MODULE_EXPORT int bitlearn_parquet_read_v1(const char* path, bl::CsvTable* out,
                                                                 std::string* error);
