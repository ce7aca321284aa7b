#pragma once
// What "best" means: the median time (the default), or a user metric to
// minimise or maximise. A metric is an expression (constraint.hpp) over the
// problem size, the config's parameters and the measured time (`time_s`,
// `time_us`), as Kernel Tuner's `metrics`:
//   metrics: {gflops: "2 * M * N * K / time_s / 1e9"}
//   objective: {maximize: gflops}
// Metrics are computed on read from a trial's stored time, size and config,
// so a store needs no column for them and a new metric covers old trials.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/constraint.hpp"
#include "tunekit/trial.hpp"

namespace tunekit {

struct Metric {
  std::string name;
  Expression expression;
};

struct Objective {
  std::string name = "time";  // "time" (the median, microseconds) or a metric's name
  bool maximize = false;      // time is always minimised
  SourceLocation where;
  bool is_time() const { return name == "time"; }
  // "time_us (lower is better)", "gflops (higher is better)"
  std::string describe() const;
};

// Time and size and config of an ok trial, as a metric sees them: the size's
// names, the parameters, time_s and time_us (the median).
Bindings metric_bindings(const TrialRecord& trial);

// Each metric's value for an ok trial, in declaration order; a metric whose
// expression fails (a division by zero) is nullopt. Empty for other trials.
std::vector<std::pair<std::string, std::optional<double>>> metric_values(const std::vector<Metric>& metrics,
                                                                         const TrialRecord& trial);

// Why a metric has no value for an ok trial ("division by zero", "it gives
// the string 'abc'"), nullopt when it has one.
std::optional<std::string> metric_problem(const Metric& metric, const TrialRecord& trial);

// The objective's value for a trial (microseconds for time), nullopt when the
// trial did not run correctly or its metric fails.
std::optional<double> objective_value(const Objective& objective, const std::vector<Metric>& metrics,
                                      const TrialRecord& trial);

// Lower is better: the value, negated when maximised. What best-of choices
// rank by.
std::optional<double> objective_cost(const Objective& objective, const std::vector<Metric>& metrics,
                                     const TrialRecord& trial);

// What a search strategy observes as Outcome::cost: positive and lower is
// better, the value when minimised and its inverse when maximised, because
// the guided strategies model the logarithm of the cost (a negated value
// has none). The inverse keeps the ratios, so maximising 1 / time searches as
// minimising time does. nullopt for a value that is not positive and finite:
// the search cannot place it and takes the config as failed (the trial keeps
// its value, and the best-of choices still rank it).
std::optional<double> search_cost(const Objective& objective, double value);

// Whether `candidate` is strictly better than `incumbent` by the objective:
// smaller when minimised, larger when maximised.
bool objective_better(const Objective& objective, double candidate, double incumbent);

// How many times better `candidate` is than `baseline` (> 1: better): the
// ratio of the values, the right way up. nullopt unless both are positive.
std::optional<double> objective_gain(const Objective& objective, double baseline, double candidate);

// Why the early stop (measure.early_stop) cannot apply under `objective`, as
// a clause, or nullopt when it can. It cuts a config short on its times,
// and a config cut short is never chosen: only where the objective is the
// time itself is a config cut short sure to lose (a metric may weigh time
// by the parameters, or by work that differs between configs). The tune
// turns the early stop off under any other objective, and a spec or flag
// that turns it on is refused.
std::optional<std::string> early_stop_conflict(const Objective& objective);

// What to rank by: an objective and the metrics it may name.
struct Goal {
  Objective objective;
  std::vector<Metric> metrics;
};

// The best of one size's trials (records or pointers to them), as every
// choice names it: the tune's best, select, emit and the reports. Among the
// trials that compete for it (competes_for_best), the one with the lowest
// objective_cost; of equals, the first (the store keeps trials in the
// order they ran). Its index, or nullopt when no competing trial has the
// objective's value.
template <typename Trials>
std::optional<std::size_t> best_of_size(const Trials& trials, const Goal& goal) {
  const bool confirmed_here = any_confirmed(trials);
  std::optional<std::size_t> best;
  std::optional<double> best_cost;
  std::size_t i = 0;
  for (const auto& t : trials) {
    if (competes_for_best(record_of(t), confirmed_here))
      if (auto cost = objective_cost(goal.objective, goal.metrics, record_of(t));
          cost && (!best_cost || *cost < *best_cost)) {
        best = i;
        best_cost = cost;
      }
    ++i;
  }
  return best;
}

}  // namespace tunekit
