// The command line: thin. Parses arguments, calls the library, prints.
// Everything it does is reachable from the library API.
#include "cli.hpp"

#include <fmt/format.h>

#include "info_command.hpp"
#include "policy_command.hpp"
#include "replay_command.hpp"
#include "space_command.hpp"
#include "tune_command.hpp"
#include "tunekit/error.hpp"

namespace tunekit::cli {

int run(int argc, char** argv) {
  CLI::App app{"tunekit: auto-tune compute kernels.\n"
               "Declare a search space in a spec file (YAML/JSON) or in the kernel source,\n"
               "then `tunekit tune` builds every variant, runs it in an isolated worker,\n"
               "verifies it against a reference, times it, and keeps every result in SQLite.",
               "tunekit"};
  app.set_version_flag("--version", "tunekit 0.1.0");
  app.require_subcommand(1);

  const SubCommand commands[] = {
      add_tune_command(app),    add_space_command(app),        add_select_command(app),
      add_emit_command(app),    add_rules_report_command(app), add_report_command(app),
      add_devices_command(app), add_plugins_command(app),       add_replay_command(app),
  };

  CLI11_PARSE(app, argc, argv);
  try {
    for (const auto& c : commands)
      if (c.command->parsed()) return c.run();
  } catch (const InputError& e) {
    fmt::print(stderr, "\nerror: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "\nerror: {}\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace tunekit::cli
