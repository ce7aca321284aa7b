#pragma once
// `tunekit devices` and `tunekit plugins`: what this tunekit can tune for,
// and with what.
#include "space_command.hpp"

namespace tunekit::cli {

SubCommand add_devices_command(CLI::App& app);
SubCommand add_plugins_command(CLI::App& app);

// The registries as a Markdown page (what `tunekit plugins --markdown`
// prints, and docs/plugins.md holds).
std::string plugins_markdown();

}  // namespace tunekit::cli
