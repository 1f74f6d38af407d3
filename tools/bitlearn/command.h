// command.h: how a subcommand of the `bitlearn` program registers itself.
//
// Each subcommand lives in its own tools/bitlearn/cmd_<name>.cpp and registers with a static
// BL_REGISTER_COMMAND(setup) where setup(CLI::App& root) adds the subcommand and its callback.
// A callback reports failure by throwing bl::Error (exit code 2) or CommandExit (any code).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace bl::cli {

// Thrown by a command to end the program with a given exit code after printing nothing more.
struct CommandExit {
  int code;
};

using CommandSetup = void (*)(CLI::App& root);

std::vector<CommandSetup>& command_registry();

// Parses argv (argv[0] is the program name) with every registered subcommand and runs the chosen
// one. Returns the exit code: 0 done, 2 usage or input error, else the command's own code. Prints
// errors on stderr; never throws.
int run_command_line(int argc, char** argv);

struct CommandRegistrar {
  explicit CommandRegistrar(CommandSetup setup) { command_registry().push_back(setup); }
};

}  // namespace bl::cli

#define BL_CLI_CONCAT_INNER(a, b) a##b
#define BL_CLI_CONCAT(a, b) BL_CLI_CONCAT_INNER(a, b)
#define BL_REGISTER_COMMAND(setup) \
  static ::bl::cli::CommandRegistrar BL_CLI_CONCAT(bl_command_registrar_, __LINE__)(setup)
