#pragma once
// Application-level tuning (msKPP autotune_v2): each variant of the user's
// source is built by the user's build command and measured by running the
// user's program, which prints its time (or is timed from outside). No
// shell is involved anywhere: argv elements go to execvp as they are.
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tunekit/backend.hpp"

namespace tunekit::command {

// Where a variant lives: a folder named by everything that determines its
// build, holding the variant's source under its original file name.
struct Variant {
  std::string key;
  std::filesystem::path dir;     // {dir}
  std::filesystem::path source;  // {source}
  std::filesystem::path binary;  // {binary}: {dir}/app
};
Variant variant_of(const std::filesystem::path& root, const ApplicationSpec& app, const BuildInput& input);

// The values placeholders may name: `values` plus source, dir and binary.
Bindings placeholder_values(const Variant& v, const Bindings& values);
// Each argv element with its placeholders replaced. Throws InputError for a
// placeholder that names nothing in `values`.
std::vector<std::string> expand_argv(const std::vector<std::string>& argv, const Bindings& values);

// The time a run reports, in microseconds, read as `time` says from the
// run's output; nullopt with `why` set when it is not there. (Wall time is
// not read from the output: the caller measures it.)
std::optional<double> read_time_us(const TimeSource& time, const std::string& output, std::string& why);

// The first non-blank line of a program's output, trimmed.
std::string first_output_line(std::string_view output);
// The last `limit` bytes of a program's output, for error messages.
std::string output_tail(const std::string& output, std::size_t limit = 2000);

// Writes each variant's source into its folder and runs the build command
// there (working directory: application.workdir). A variant whose build
// succeeded before is not rebuilt (unless rebuild, then once per run).
class CommandBuilder final : public Builder {
 public:
  CommandBuilder(std::filesystem::path root, ApplicationSpec app, bool rebuild);
  BuildResult build(const BuildInput& input) override;

 private:
  std::filesystem::path root_;
  ApplicationSpec app_;
  bool rebuild_;
  std::mutex mutex_;
  std::set<std::string> started_;  // keys built (or being built) in this run
};

// Runs the program: warm-up runs, then samples until the measure settings'
// noise target or caps are met. Each run has a timeout; a non-zero exit or a
// signal is a crash, a time that cannot be read a launch_error.
class CommandEvaluator final : public Evaluator {
 public:
  explicit CommandEvaluator(ApplicationSpec app);
  TrialResult evaluate(const TrialRequest& request) override;

 private:
  // One trial; `killed_by`: the signal from outside that ended a run of it
  // (0: none).
  TrialResult evaluate_once(const TrialRequest& request, int& killed_by);
  ApplicationSpec app_;
};

}  // namespace tunekit::command
