#pragma once
// `tunekit tune`: search a kernel's space and hand the results back.
#include "space_command.hpp"

namespace tunekit::cli {

SubCommand add_tune_command(CLI::App& app);

}  // namespace tunekit::cli
