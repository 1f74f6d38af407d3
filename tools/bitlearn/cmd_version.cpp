// `bitlearn version`: prints the library version and the contract profile.
#include <cstdio>

#include "command.h"
#include "bitlearn/version.h"

namespace {
void setup(CLI::App& root) {
  auto* cmd = root.add_subcommand("version", "Print the bitlearn version and contract profile");
  cmd->callback([] { std::printf("bitlearn %s\ncontract %s\n", bl::kVersion, bl::kContractProfile); });
}
BL_REGISTER_COMMAND(setup);
}  // namespace
