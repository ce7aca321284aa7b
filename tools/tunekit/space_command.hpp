#pragma once
// `tunekit space`: build a search space and report on it.
#include <functional>

#include <CLI/CLI.hpp>

namespace tunekit::cli {

struct SubCommand {
  CLI::App* command = nullptr;
  std::function<int()> run;
};

SubCommand add_space_command(CLI::App& app);

}  // namespace tunekit::cli
