// The `bitlearn` command-line program. Subcommands register themselves (command.h).
//
// Every command ends here: its exit code is kept only when its standard output reached the file or
// pipe (a full disk or a closed pipe would otherwise lose the output and still report success), and
// an allocation that fails anywhere becomes a message instead of a bare std::bad_alloc.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "command.h"
#include "core/error.h"
#include "core/version.h"

namespace bl::cli {
std::vector<CommandSetup>& command_registry() {
  static std::vector<CommandSetup> registry;
  return registry;
}
}  // namespace bl::cli

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

int run(int argc, char** argv) {
  CLI::App app{"bitlearn: machine learning with bitwise identical results on every device"};
  app.set_version_flag("--version", std::string("bitlearn ") + bl::kVersion + " (" +
                                        bl::kContractProfile + ")");
  app.require_subcommand(1);
  for (auto setup : bl::cli::command_registry()) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors (unknown option, missing value, no subcommand) exit with 2, like bad input.
    app.exit(e);
    return 2;
  } catch (const bl::cli::CommandExit& e) {
    return e.code;
  } catch (const bl::Error& e) {
    std::fprintf(stderr, "bitlearn: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "bitlearn: error: out of memory (an allocation failed: the input or the options ask "
                         "for more memory than this machine can give)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bitlearn: error: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return finish(run(argc, argv)); }
