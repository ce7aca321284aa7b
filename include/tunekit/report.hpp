#pragma once
// Handing results back: console lines, CSV, JSON.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {

// "No.3: 14.982 us, {BM: 64, BN: 128}" or "No.4: compile_error, {...} (reason)".
std::string format_trial_line(std::size_t number, const TrialRecord& trial);

// Columns: No.,Config,Time(us),Status,MaxAbsDiff,MaxRelErr,Min(us),Noise,Samples,Size,Error
void write_csv(const std::filesystem::path& file, const std::vector<TrialRecord>& trials);
void write_json(const std::filesystem::path& file, const TuneReport& report);

// msKPP's results table, for application-level tuning: the file name
// TUNEKIT_RESULTS_<YYYYmmddHHMMSS>.csv (local time of `when`), and the
// columns No.,Config,Duration(us),Args. Duration is the median of an ok
// trial, else its status; Args is `args[i]` (the command the trial ran) as a
// shell would quote it, empty when there is none.
std::string results_file_name(std::chrono::system_clock::time_point when);
void write_results_csv(const std::filesystem::path& file, const std::vector<TrialRecord>& trials,
                       const std::vector<std::vector<std::string>>& args);
// `argv` as one line a POSIX shell splits back into the same words (for
// display only: tunekit itself never runs a shell).
std::string shell_quote(const std::vector<std::string>& argv);

// Summary printed at the end of `tunekit tune`; with rules on, it ends with
// format_rule_report() of the sizes.
std::string format_summary(const TuneReport& report);

// ---- How the rule config (search.rules) fared against the search.

// How one size's rule config compares with the rest of the size's trials.
// "Evaluations" count the trials a search pays for: every trial except
// `invalid` ones (never built nor run).
struct RuleOutcome {
  std::string device;
  Bindings size;
  std::size_t seed = 0;  // index of the rule config's trial among the size's trials (run order)
  Config config;
  Status status = Status::ok;
  std::optional<Microseconds> time;  // the rule config's median, when it ran ok
  std::optional<Microseconds> best;  // the fastest ok trial's median
  std::optional<double> ratio;       // time / best (>= 1)
  std::optional<std::size_t> rank;   // 1 + the ok trials strictly faster (1: it is the best)
  std::size_t ok = 0;                // ok trials of the size
  std::size_t evaluations = 0;       // n: evaluations of the size
  std::size_t faster = 0;            // b: ok trials strictly faster (all ok ones if the rule config failed)
  // The first trial faster than the rule config in run order: its index,
  // and how many evaluations the run had made by then (itself included).
  std::optional<std::size_t> beaten_by;
  std::optional<std::size_t> evaluations_to_beat;
  // Uniform random search over the same n evaluations (the rule config
  // among them, in no special place): the expected number of evaluations
  // until the first faster one, (n + 1) / (b + 1); none when b == 0.
  std::optional<double> expected_random_evaluations;
};

// The expected position (1-based) of the first of `b` marked items in a
// uniformly random order of `n` items, i.e. the expected number of draws
// without replacement until the first marked one: (n + 1) / (b + 1).
// Requires 1 <= b <= n.
double expected_draws_to_first(std::size_t n, std::size_t b);

// `trials`: one size's trials in run order (SizeReport::trials); `seed`
// indexes the rule config's trial.
RuleOutcome rule_outcome(const std::vector<TrialRecord>& trials, std::size_t seed);
// From any mix of devices and sizes (Store::trials: insertion order): one
// outcome per device and size that has a trial with rule_seed set, in order
// of first appearance. A size resumed across runs is in the order its trials
// were first measured.
std::vector<RuleOutcome> rule_outcomes(const std::vector<TrialRecord>& trials);
// A short table, one line per size.
std::string format_rule_report(const std::vector<RuleOutcome>& outcomes);

}  // namespace tunekit
