#include "builder/detail/compiler.hpp"

#include "core/detail/process.hpp"

namespace tunekit::detail {

bool run_compiler(const std::vector<std::string>& argv, const std::string& tool, BuildResult& r) {
  ProcessResult p;
  try {
    p = run_process(argv, std::chrono::minutes(5));
  } catch (const std::exception& e) {
    r.status = Status::compile_error;
    r.log = "cannot run " + tool + ": " + e.what();
    return false;
  }
  r.time = p.wall;
  r.log = std::move(p.output);
  if (!p.timed_out && p.signal == 0 && p.exit_code == 0) return true;
  r.status = Status::compile_error;
  if (p.timed_out) r.log = tool + " timed out after 5 minutes\n" + r.log;
  else if (p.signal) r.log = tool + " killed by " + describe_signal(p.signal) + "\n" + r.log;
  return false;
}

}  // namespace tunekit::detail
