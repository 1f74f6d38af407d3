// parquet.cpp: Parquet input (read_parquet) and the format choice of read_table (see bitlearn/csv.h).
//
// The reader itself is a module (src/io/parquet_arrow/, libbitlearn_parquet.so) linked with Apache
// Arrow's C++ libraries, built when CMake found them (BITLEARN_PARQUET, see CMakeLists.txt). It is
// opened here on the first Parquet read, so a program that reads no Parquet file never loads Arrow
// (about 12 ms of every start). Without the module read_parquet throws a named error.
#include "bitlearn/csv.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"

#ifdef BITLEARN_HAS_PARQUET
#include <dlfcn.h>

#include "io/parquet_arrow/module.h"
#endif

namespace bl {

namespace {

bool ends_with_parquet(const std::string& path) {
  static const char kExt[] = ".parquet";
  const size_t n = sizeof kExt - 1;
  if (path.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(path[path.size() - n + i])) != kExt[i]) return false;
  return true;
}

// True when a regular file starts with Parquet's magic "PAR1". Pipes and devices are not read here
// (the bytes would be gone for the CSV reader); a Parquet file cannot come from one anyway.
bool starts_with_par1(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;  // the reader that follows names the error
  struct stat st {};
  char magic[4] = {};
  const bool yes = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::read(fd, magic, 4) == 4 &&
                   std::memcmp(magic, "PAR1", 4) == 0;
  ::close(fd);
  return yes;
}

}  // namespace

CsvTable read_table(const std::string& path) {
  if (starts_with_par1(path) || ends_with_parquet(path)) return read_parquet(path);
  return read_csv(path);
}

#ifdef BITLEARN_HAS_PARQUET

namespace {

using ReadFn = int (*)(const char*, CsvTable*, std::string*);

// Where the module may be, in order: BITLEARN_PARQUET_MODULE (a file), next to the program or the
// Python module that holds this code, in lib/ beside an installed program's bin/, and the build
// tree (the tests and an uninstalled build).
std::vector<std::filesystem::path> module_candidates() {
  namespace fs = std::filesystem;
  std::vector<fs::path> c;
  if (const char* env = std::getenv("BITLEARN_PARQUET_MODULE"); env != nullptr && *env != '\0') c.emplace_back(env);
  std::vector<fs::path> dirs;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&read_parquet), &info) != 0 && info.dli_fname != nullptr &&
      info.dli_fname[0] == '/')
    dirs.push_back(fs::path(info.dli_fname).parent_path());
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path());
  for (const fs::path& d : dirs) {
    c.push_back(d / BL_PARQUET_MODULE_FILE);
    c.push_back(d.parent_path() / "lib" / BL_PARQUET_MODULE_FILE);
  }
  c.emplace_back(BITLEARN_PARQUET_MODULE_BUILT);
  return c;
}

// The module's entry point, opened once per process; null with the reason in *why.
ReadFn module_entry(std::string* why) {
  static std::once_flag once;
  static ReadFn entry = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::string looked;
    for (const std::filesystem::path& p : module_candidates()) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p, ec)) {
        looked += (looked.empty() ? "" : ", ") + p.string();
        continue;
      }
      void* handle = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* e = ::dlerror();
        failure = "cannot load " + p.string() + " (" + (e != nullptr ? e : "unknown reason") + ")";
        return;
      }
      entry = reinterpret_cast<ReadFn>(::dlsym(handle, BL_PARQUET_MODULE_ENTRY));
      if (entry == nullptr) failure = p.string() + " is not bitlearn's Parquet module of this version";
      return;
    }
    failure = "the Parquet reader module " BL_PARQUET_MODULE_FILE " was not found (looked at: " + looked +
              "; BITLEARN_PARQUET_MODULE may name it)";
  });
  *why = failure;
  return entry;
}

}  // namespace

CsvTable read_parquet(const std::string& path) {
  std::error_code ec;
  BL_CHECK(!std::filesystem::is_directory(path, ec), path, ": is a directory, not a Parquet file");
  std::string why;
  const ReadFn read = module_entry(&why);
  BL_CHECK(read != nullptr, path, ": reading Parquet: ", why);
  CsvTable t;
  std::string error;
  if (read(path.c_str(), &t, &error) != 0) throw Error(error);
  return t;
}

#else

CsvTable read_parquet(const std::string& path) {
  throw Error(path + ": reading Parquet: this build has no Parquet reader (Apache Arrow's C++ libraries were not "
                     "found when it was configured; see docs/ml.md, 'Input files')");
}

#endif

}  // namespace bl
