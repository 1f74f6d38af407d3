// The `bitlearn` command-line program. Subcommands register themselves (command.h).
#include <cstdio>
#include <exception>

#include "command.h"
#include "core/error.h"
#include "core/version.h"

namespace bl::cli {
std::vector<CommandSetup>& command_registry() {
  static std::vector<CommandSetup> registry;
  return registry;
}
}  // namespace bl::cli

int main(int argc, char** argv) {
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
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bitlearn: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
