// `bitlearn math FN`: applies a contract math function to little-endian binary32 values read
// from stdin (pairs x, y for pow) and writes the binary32 results to stdout.
//
// All input is read and validated before anything is written, so a bad input leaves stdout empty.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/math_map.h"
#include "ops/dispatch.h"

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "bitlearn math reads and writes little-endian binary32 as stored in memory");

std::vector<unsigned char> read_all_stdin() {
  std::vector<unsigned char> data;
  unsigned char buf[1 << 16];
  for (;;) {
    size_t got = std::fread(buf, 1, sizeof buf, stdin);
    data.insert(data.end(), buf, buf + got);
    if (got < sizeof buf) break;
  }
  BL_CHECK(!std::ferror(stdin), "math: failed reading stdin");
  return data;
}

void run(const std::string& name) {
  const bl::MathFn fn = bl::math_fn_from_name(name);  // unknown name: error before reading
  const bool binary = bl::math_arity(fn) == 2;
  const size_t record = binary ? 8 : 4;
  std::vector<unsigned char> in = read_all_stdin();
  BL_CHECK(in.size() % record == 0, "math ", name, ": stdin holds ", in.size(),
           " bytes, not a multiple of ", record, binary ? " (pairs of little-endian binary32 x, y)"
                                                        : " (little-endian binary32 values)");
  const int64_t n = static_cast<int64_t>(in.size() / record);
  std::vector<float> x(n), y(binary ? n : 0), out(n);
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(&x[i], &in[i * record], 4);
    if (binary) std::memcpy(&y[i], &in[i * record + 4], 4);
  }
  if (binary)
    bl::dispatch::math_map(bl::Device::cpu(), fn, x.data(), y.data(), out.data(), n);
  else
    bl::dispatch::math_map(bl::Device::cpu(), fn, x.data(), out.data(), n);
  if (n > 0) {
    BL_CHECK(std::fwrite(out.data(), 4, static_cast<size_t>(n), stdout) == static_cast<size_t>(n),
             "math ", name, ": failed writing stdout");
  }
  BL_CHECK(std::fflush(stdout) == 0, "math ", name, ": failed writing stdout");
}

void setup(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "math", "Apply a contract math function to little-endian binary32 values on stdin "
              "(x,y pairs for pow); results to stdout");
  auto name = std::make_shared<std::string>();
  cmd->add_option("fn", *name,
                  "exp expm1 log log1p log2 tanh sigmoid silu softplus gelu_tanh sin cos erf gelu "
                  "pow rsqrt")
      ->required();
  cmd->callback([name] { run(*name); });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
