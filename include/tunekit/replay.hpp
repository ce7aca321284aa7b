#pragma once
// Replaying a search on recorded results (recording.hpp): a strategy proposes
// configs, the recording answers with what each one measured, in process and
// without a device, so a strategy's thousands of runs take seconds. The
// benchmark of the strategies and `tunekit replay` run this loop;
// `tunekit tune --replay` runs the tuner's own loop on the same recording.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/options.hpp"
#include "tunekit/recording.hpp"
#include "tunekit/strategy.hpp"  // evaluations_for_fraction, with the budgets it sets
#include "tunekit/units.hpp"

namespace tunekit {

struct ReplaySettings {
  std::string strategy = "auto";
  std::vector<OptionValue> options;              // the strategy's
  std::optional<std::uint64_t> max_evaluations;  // distinct configs evaluated, failures included
  // Simulated time: the recorded compile and run time of the configs
  // evaluated so far. The evaluation that crosses it still counts. Every
  // config of the space must have its times recorded.
  std::optional<Seconds> max_time;
  std::uint64_t seed = 1;
  std::size_t batch = 1;  // configs asked of the strategy at once, as the tuner asks for a batch
};

struct ReplayRun {
  std::string strategy;  // the strategy's name; for auto, "auto: " and what it chose
  std::uint64_t evaluations = 0;
  std::uint64_t failed = 0;  // evaluations without a value of the objective (failed configs, for time)
  // The recorded time of each evaluated config, in evaluation order; none for
  // a failed one.
  std::vector<std::optional<Microseconds>> trace;
  std::vector<Config> configs;  // the config of each evaluation, in the same order
  // The objective's value of each evaluation (the table's objective: the
  // time in microseconds by default), in the same order; none for a failed
  // one or a missing value.
  std::vector<std::optional<double>> values;
  std::optional<Config> best;  // by the objective
  std::optional<Microseconds> best_time;
  std::optional<double> best_value;
  Microseconds optimum_time{0};
  double optimum_value = 0;
  // How close the best found is to the optimum by the objective, at most 1:
  // optimum time / best time found by default, best / optimum for a
  // maximised objective; 0 when nothing succeeded.
  double fraction_of_optimum = 0;
  Seconds strategy_cpu{0};  // CPU time spent in the strategy's calls (next, observe)
  Seconds simulated{0};     // recorded compile and run time of the evaluated configs
  // Why the search ended before its budget, when not because the strategy
  // had nothing left to propose: a stop request, or a strategy that kept
  // proposing what it had; empty otherwise.
  std::string ended_early;
};

// One replayed search, ranked by the table's objective. The table must be complete (ReplayTable::require_complete):
// otherwise InputError naming the first config the recording lacks, as
// soon as the strategy proposes it. Throws InputError for an empty space,
// an unknown strategy or option, a budget of 0 or beyond the space, or a
// time budget over a recording that lacks some of a config's times
// (require_recorded_cost: the first such config of the space in the file is
// named).
ReplayRun replay(const ReplayTable& table, const ReplaySettings& settings);

}  // namespace tunekit
