// The command line of `bitlearn`: parses argv with every registered subcommand and runs it. The
// program's main (main.cpp) and the Python module (`python -m bitlearn`) both call it.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "command.h"
#include "core/error.h"
#include "bitlearn/version.h"

namespace bl::cli {
std::vector<CommandSetup>& command_registry() {
  static std::vector<CommandSetup> registry;
  return registry;
}

int run_command_line(int argc, char** argv) {
  CLI::App app{"bitlearn: machine learning with bitwise identical results on every device"};
  app.set_version_flag("--version", std::string("bitlearn ") + bl::kVersion + " (" +
                                        bl::kContractProfile + ")");
  app.require_subcommand(1);
  for (auto setup : bl::cli::command_registry()) setup(app);
  // A first word that names no command is an error even with --help after it (CLI11 would show
  // the main help and exit 0, as if the command existed).
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      known = known || sub->check_name(argv[1]);
    if (!known) {
      std::fprintf(stderr, "bitlearn: error: unknown command '%s' (bitlearn --help lists the commands)\n", argv[1]);
      return 2;
    }
  }
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

}  // namespace bl::cli
