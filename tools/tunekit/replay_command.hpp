#pragma once
// `tunekit replay`: replay a search on recorded results (recording.hpp).
#include "space_command.hpp"

namespace tunekit::cli {

SubCommand add_replay_command(CLI::App& app);

}  // namespace tunekit::cli
