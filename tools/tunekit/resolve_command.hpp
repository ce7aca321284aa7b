#pragma once
// `tunekit resolve`: one config of a spec at one size, worked out as a trial
// would run it (entry, defines, launch geometry, arguments, and with --build
// the compiled artefact), for harnesses that launch a kernel themselves.
#include "space_command.hpp"

namespace tunekit::cli {

SubCommand add_resolve_command(CLI::App& app);

}  // namespace tunekit::cli
