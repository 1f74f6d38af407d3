// The command line of `bitlearn`: parses argv with every registered subcommand and runs it. The
// program's main (main.cpp) and the Python module (`python -m bitlearn`) both call it.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "command.h"
#include "core/error.h"
#include "bitlearn/ops_matmul.h"
#include "bitlearn/version.h"

namespace bl::cli {
std::vector<CommandSetup>& command_registry() {
  static std::vector<CommandSetup> registry;
  return registry;
}

namespace {

// "" when `value` is acceptable for an option of CLI11 type name `type`, else why not. An empty
// value is refused (it would otherwise mean the default, or "no file"), and a number must be
// written whole and fit its type: CLI11 alone clamps 10^23 to 2^63-1 and reads -1 as 2^64-1 for an
// unsigned option.
std::string value_problem(const std::string& type, const std::string& value) {
  if (value.empty()) return "needs a value (got an empty one)";
  const bool is_int = type == "INT", is_uint = type == "UINT";
  if (is_int || is_uint) {
    size_t digits = value[0] == '-' || value[0] == '+' ? 1 : 0;
    if (is_uint && value[0] == '-') return "must not be negative (got " + value + ")";
    if (digits == value.size() || value.find_first_not_of("0123456789", digits) != std::string::npos)
      return "expects an integer (got '" + value + "')";
    errno = 0;
    if (is_int) (void)std::strtoll(value.c_str(), nullptr, 10);
    else (void)std::strtoull(value.c_str(), nullptr, 10);
    if (errno == ERANGE) return value + " is beyond the range of a 64-bit " + std::string(is_uint ? "unsigned " : "") + "integer";
  } else if (type == "FLOAT") {
    char* end = nullptr;
    const double x = std::strtod(value.c_str(), &end);
    if (end != value.c_str() + value.size()) return "expects a number (got '" + value + "')";
    if (!std::isfinite(x)) return "expects a finite number (got " + value + ")";
  }
  return "";
}

void add_value_checks(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_min() == 0) continue;  // a flag
    const std::string type = opt->get_type_name();
    opt->check(CLI::Validator([type](std::string& v) { return value_problem(type, v); }, "", "value"));
  }
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) add_value_checks(*sub);
}

}  // namespace

int run_command_line(int argc, char** argv) {
  CLI::App app{"bitlearn: machine learning with bitwise identical results on every device"};
  app.set_version_flag("--version", std::string("bitlearn ") + bl::kVersion + " (" +
                                        bl::kContractProfile + ")");
  app.require_subcommand(1);
  // Before the command: the GEMM profile of every product the command computes (docs/contract.md,
  // section 4); the environment variable BITLEARN_GEMM_PROFILE does the same.
  app.add_option_function<std::string>(
         "--gemm-profile",
         [](const std::string& v) { bl::set_gemm_profile(bl::parse_gemm_profile(v, "--gemm-profile")); },
         "GEMM profile of every matrix product: contract (default) or exact (exact-integer products)")
      ->check(CLI::IsMember({"contract", "exact"}));
  for (auto setup : bl::cli::command_registry()) setup(app);
  add_value_checks(app);
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
