#pragma once
// Running the tunekit executable from a test, and reading what it printed.
#include <chrono>
#include <string>
#include <vector>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"

namespace tunekit::testing {

// `tunekit ARGS...`: its exit status and output. The limit is generous: a
// busy machine is slow, and no test is about how fast the CLI is.
inline detail::ProcessResult tunekit_cli(std::vector<std::string> args,
                                         std::chrono::seconds timeout = std::chrono::seconds(300)) {
  args.insert(args.begin(), tunekit_exe().string());
  return detail::run_process(args, timeout);
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace tunekit::testing
