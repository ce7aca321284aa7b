#pragma once
// The tunekit command line as a function (CMake: tunekit::cli), so that a
// program (or a test) can register its own strategies, backends or writers
// and then run the whole CLI with them:
//   int main(int argc, char** argv) { add_my_strategy(); return tunekit::cli::run(argc, argv); }
#include "tunekit/package_worker.hpp"

namespace tunekit::cli {

// Parses argv and runs the subcommand. Exit status: 0 on success, 1 for bad
// input (the message names the file:line:column or the flag), 2 for other
// errors, 3 when a tune found no config that ran correctly.
int run(int argc, char** argv);

}  // namespace tunekit::cli
