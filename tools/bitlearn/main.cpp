// The `bitlearn` command-line program. Subcommands register themselves (command.h).
//
// Every command ends here: its exit code is kept only when its standard output reached the file or
// pipe (a full disk or a closed pipe would otherwise lose the output and still report success).
// Parsing, errors and out-of-memory messages are run_command_line's (run.cpp).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include "command.h"

namespace {

// Flushes standard output; when that or an earlier write failed, says so on stderr and returns 2,
// else returns code.
int finish(int code) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_errno = errno;
  if (flushed && !std::ferror(stdout)) return code;
  std::fprintf(stderr, "bitlearn: error: cannot write standard output (%s)\n",
               !flushed && flush_errno != 0 ? std::strerror(flush_errno) : "a write failed");
  return 2;
}

}  // namespace

int main(int argc, char** argv) { return finish(bl::cli::run_command_line(argc, argv)); }
