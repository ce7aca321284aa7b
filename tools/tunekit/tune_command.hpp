#pragma once
// `tunekit tune`: search a kernel's space and hand the results back.
#include <functional>

#include "space_command.hpp"

namespace tunekit::cli {

SubCommand add_tune_command(CLI::App& app);

// `tunekit tune` under an MPI launcher with arguments that do not parse:
// every rank parses the same ones, so rank 0 calls `say` (prints the usage
// error) and the others do not; the ranks end together, so that the
// launcher, which ends the job when a rank exits with an error, does not end
// rank 0 before it has said it. Returns the exit status, 1 (bad input).
int end_tune_with_usage_error(const std::function<void()>& say);

}  // namespace tunekit::cli
